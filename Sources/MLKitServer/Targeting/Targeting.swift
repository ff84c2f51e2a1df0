/// The targeting rules of a deployment, over Apple's six keys. A rule that is absent matches
/// every device; a rule that names a key the device context lacks does not match.
struct Targeting: Sendable, Hashable, Codable {
    var languageCodes: [String]?
    var deviceClasses: [String]?
    var operatingSystems: [String]?
    var osVersion: VersionRange?
    var regionCodes: [String]?
    var appVersion: VersionRange?

    /// No rules: every device matches.
    static let everyone = Targeting()

    /// Whether the deployment has no rules at all.
    var isEmpty: Bool { self == .everyone }

    /// Whether every rule holds for `context`.
    func matches(_ context: DeviceContext) -> Bool {
        Self.listMatches(languageCodes, context.languageCode, Self.languageMatches)
            && Self.listMatches(deviceClasses, context.deviceClass, Self.caseInsensitiveEqual)
            && Self.listMatches(operatingSystems, context.operatingSystem, Self.caseInsensitiveEqual)
            && Self.listMatches(regionCodes, context.regionCode, Self.caseInsensitiveEqual)
            && Self.rangeMatches(osVersion, context.osVersion)
            && Self.rangeMatches(appVersion, context.appVersion)
    }

    private static func listMatches(_ rule: [String]?, _ value: String?, _ equal: (String, String) -> Bool) -> Bool {
        guard let rule else { return true }
        guard let value else { return false }
        return rule.contains { equal($0, value) }
    }

    private static func rangeMatches(_ rule: VersionRange?, _ value: String?) -> Bool {
        guard let rule else { return true }
        guard let value, let version = Version(leadingPartOf: value) else { return false }
        return rule.contains(version)
    }

    private static func caseInsensitiveEqual(_ rule: String, _ value: String) -> Bool {
        rule.lowercased() == value.lowercased()
    }

    /// `en` matches `en`, `en-GB` and `en_GB`; `en-GB` matches only `en-GB` (and `en_gb`).
    private static func languageMatches(_ rule: String, _ value: String) -> Bool {
        let rule = rule.lowercased().replacingUnderscores()
        let value = value.lowercased().replacingUnderscores()
        return value == rule || value.hasPrefix(rule + "-")
    }

    // MARK: Coding

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case languageCodes, deviceClasses, operatingSystems, osVersion, regionCodes, appVersion
    }

    init(languageCodes: [String]? = nil, deviceClasses: [String]? = nil, operatingSystems: [String]? = nil,
         osVersion: VersionRange? = nil, regionCodes: [String]? = nil, appVersion: VersionRange? = nil) {
        self.languageCodes = languageCodes
        self.deviceClasses = deviceClasses
        self.operatingSystems = operatingSystems
        self.osVersion = osVersion
        self.regionCodes = regionCodes
        self.appVersion = appVersion
    }

    /// Decodes rules strictly: an unknown key is an error (a misspelt rule must not silently
    /// turn a targeted deployment into one for everyone), an empty list means no rule.
    init(from decoder: any Decoder) throws {
        try StrictKeys.check(decoder, allowed: CodingKeys.allCases.map(\.rawValue))
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func list(_ key: CodingKeys) throws -> [String]? {
            guard let values = try container.decodeIfPresent([String].self, forKey: key) else { return nil }
            let cleaned = values.map { $0.trimmingASCIIWhitespace() }
            guard !cleaned.contains(where: \.isEmpty) else {
                throw CollectionServerError.badRequest("targeting.\(key.rawValue): an empty value")
            }
            return cleaned.isEmpty ? nil : cleaned
        }
        func range(_ key: CodingKeys) throws -> VersionRange? {
            guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
            return try VersionRange(parsing: text, field: "targeting.\(key.rawValue)")
        }
        languageCodes = try list(.languageCodes)
        deviceClasses = try list(.deviceClasses)
        operatingSystems = try list(.operatingSystems)
        osVersion = try range(.osVersion)
        regionCodes = try list(.regionCodes)
        appVersion = try range(.appVersion)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(languageCodes, forKey: .languageCodes)
        try container.encodeIfPresent(deviceClasses, forKey: .deviceClasses)
        try container.encodeIfPresent(operatingSystems, forKey: .operatingSystems)
        try container.encodeIfPresent(osVersion?.text, forKey: .osVersion)
        try container.encodeIfPresent(regionCodes, forKey: .regionCodes)
        try container.encodeIfPresent(appVersion?.text, forKey: .appVersion)
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String { String(map { $0 == "_" ? "-" : $0 }) }
}
