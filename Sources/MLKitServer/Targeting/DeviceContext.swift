/// What a device says about itself when it asks for a collection: the six targeting keys and
/// the installation ID that places it in a rollout. Every field is optional.
struct DeviceContext: Sendable, Hashable {
    /// A field of the context, with its query parameter and header; a query parameter wins
    /// over its header.
    enum Field: Int, Sendable, CaseIterable {
        case languageCode, deviceClass, operatingSystem, osVersion, regionCode, appVersion, installationID

        /// The query parameter's name.
        var query: String {
            switch self {
            case .languageCode: return "languageCode"
            case .deviceClass: return "deviceClass"
            case .operatingSystem: return "operatingSystem"
            case .osVersion: return "osVersion"
            case .regionCode: return "regionCode"
            case .appVersion: return "appVersion"
            case .installationID: return "installationID"
            }
        }

        /// The header's name.
        var header: String {
            switch self {
            case .languageCode: return "X-MLKit-Language-Code"
            case .deviceClass: return "X-MLKit-Device-Class"
            case .operatingSystem: return "X-MLKit-Operating-System"
            case .osVersion: return "X-MLKit-OS-Version"
            case .regionCode: return "X-MLKit-Region-Code"
            case .appVersion: return "X-MLKit-App-Version"
            case .installationID: return "X-MLKit-Installation-ID"
            }
        }

        /// The field named by a query parameter.
        init?(query: some StringProtocol) {
            guard let field = Self.allCases.first(where: { $0.query == query }) else { return nil }
            self = field
        }
    }

    private var values = [String?](repeating: nil, count: Field.allCases.count)

    /// The value of a field; setting a blank value clears it.
    subscript(field: Field) -> String? {
        get { values[field.rawValue] }
        set {
            let trimmed = newValue?.trimmingASCIIWhitespace()
            values[field.rawValue] = trimmed?.isEmpty == false ? trimmed : nil
        }
    }

    var languageCode: String? { self[.languageCode] }
    var deviceClass: String? { self[.deviceClass] }
    var operatingSystem: String? { self[.operatingSystem] }
    var osVersion: String? { self[.osVersion] }
    var regionCode: String? { self[.regionCode] }
    var appVersion: String? { self[.appVersion] }
    var installationID: String? { self[.installationID] }

    init() {}
}
