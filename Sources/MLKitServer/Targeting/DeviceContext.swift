/// What a device says about itself when it asks for a collection: the six targeting keys and
/// the installation ID that places it in a rollout. Every field is optional.
struct DeviceContext: Sendable, Hashable {
    var languageCode: String?
    var deviceClass: String?
    var operatingSystem: String?
    var osVersion: String?
    var regionCode: String?
    var appVersion: String?
    var installationID: String?

    /// The query parameter and header of each field; a query parameter wins over its header.
    static var fields: [(query: String, header: String, keyPath: WritableKeyPath<DeviceContext, String?>)] {[
        ("languageCode", "X-MLKit-Language-Code", \.languageCode),
        ("deviceClass", "X-MLKit-Device-Class", \.deviceClass),
        ("operatingSystem", "X-MLKit-Operating-System", \.operatingSystem),
        ("osVersion", "X-MLKit-OS-Version", \.osVersion),
        ("regionCode", "X-MLKit-Region-Code", \.regionCode),
        ("appVersion", "X-MLKit-App-Version", \.appVersion),
        ("installationID", "X-MLKit-Installation-ID", \.installationID),
    ]}

    /// Reads a context from query parameters and headers.
    /// - Parameters:
    ///   - query: The value of a query parameter, by name.
    ///   - header: The value of a header, by name.
    init(query: (String) -> String?, header: (String) -> String?) {
        for field in Self.fields {
            let value = (query(field.query) ?? header(field.header))?.trimmingASCIIWhitespace()
            self[keyPath: field.keyPath] = value?.isEmpty == false ? value : nil
        }
    }

    init() {}
}
