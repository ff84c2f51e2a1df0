/// A version such as `17.4` or `2.0.1`: numeric components, compared one by one, with missing
/// components counting as 0 (`2` equals `2.0.0`).
struct Version: Sendable, Comparable, CustomStringConvertible {
    let components: [Int]

    /// Parses `1`, `1.2`, `1.2.3`: digits separated by dots, nothing else.
    init?(exactly text: some StringProtocol) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        var components: [Int] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 9, part.allSatisfy(\.isASCIIDigit), let value = Int(part) else { return nil }
            components.append(value)
        }
        guard !components.isEmpty else { return nil }
        self.components = components
    }

    /// Reads the leading numeric part of a device's version string: `17.4.1` from `17.4.1`,
    /// `6.1` from `6.1-rc2`; `nil` when it does not start with a digit.
    init?(leadingPartOf text: some StringProtocol) {
        let prefix = text.prefix { $0.isASCIIDigit || $0 == "." }
        let trimmed = prefix.split(separator: ".", omittingEmptySubsequences: true).prefix(8).joined(separator: ".")
        self.init(exactly: trimmed)
    }

    var description: String { components.map(String.init).joined(separator: ".") }

    static func == (lhs: Version, rhs: Version) -> Bool { compare(lhs, rhs) == 0 }
    static func < (lhs: Version, rhs: Version) -> Bool { compare(lhs, rhs) < 0 }

    private static func compare(_ lhs: Version, _ rhs: Version) -> Int {
        for index in 0..<max(lhs.components.count, rhs.components.count) {
            let left = index < lhs.components.count ? lhs.components[index] : 0
            let right = index < rhs.components.count ? rhs.components[index] : 0
            if left != right { return left < right ? -1 : 1 }
        }
        return 0
    }
}

/// A version range: comma-separated comparisons that must all hold, such as `>=14`,
/// `>=2.0,<3` or `=1.2.3`.
struct VersionRange: Sendable, Hashable, CustomStringConvertible {
    /// One comparison of a range.
    struct Bound: Sendable, Hashable {
        enum Operator: String, Sendable, CaseIterable {
            // Longest first, so that `>=` is not read as `>`.
            case greaterOrEqual = ">=", lessOrEqual = "<=", notEqual = "!=", equal = "=", greater = ">", less = "<"
        }

        let comparison: Operator
        let version: [Int]

        func holds(for candidate: Version) -> Bool {
            let bound = Version(components: version)
            switch comparison {
            case .greaterOrEqual: return candidate >= bound
            case .lessOrEqual: return candidate <= bound
            case .notEqual: return candidate != bound
            case .equal: return candidate == bound
            case .greater: return candidate > bound
            case .less: return candidate < bound
            }
        }
    }

    /// The range as it was written, trimmed.
    let text: String
    let bounds: [Bound]

    /// Parses a range.
    /// - Throws: ``CollectionServerError`` (bad request) naming `field` and the faulty part.
    init(parsing text: String, field: String) throws {
        let trimmed = text.trimmingASCIIWhitespace()
        var bounds: [Bound] = []
        for part in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let clause = part.trimmingASCIIWhitespace()
            guard let comparison = Bound.Operator.allCases.first(where: { clause.hasPrefix($0.rawValue) }),
                  let version = Version(exactly: clause.dropFirst(comparison.rawValue.count).trimmingASCIIWhitespace())
            else {
                throw CollectionServerError.badRequest(
                    "\(field): '\(clause)' is not a version comparison (write it as >=14, <17.4, =1.2.3 or >=2.0,<3)")
            }
            bounds.append(Bound(comparison: comparison, version: version.components))
        }
        self.text = trimmed
        self.bounds = bounds
    }

    /// Whether `version` lies in the range.
    func contains(_ version: Version) -> Bool { bounds.allSatisfy { $0.holds(for: version) } }

    var description: String { text }

    static func == (lhs: VersionRange, rhs: VersionRange) -> Bool { lhs.bounds == rhs.bounds }
    func hash(into hasher: inout Hasher) { hasher.combine(bounds) }
}

extension Version {
    fileprivate init(components: [Int]) { self.components = components }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
