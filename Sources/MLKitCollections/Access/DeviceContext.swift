import Foundation

/// What the server matches a deployment's targeting rules against: the six keys of Core ML
/// Model Deployment, and an installation ID for percentage rollouts.
///
/// Every key is optional. A rule that names a key the context lacks does not match, so a
/// device that sends nothing gets the collection's default deployment. The installation ID
/// decides which side of a rollout a device falls on; when it is `nil`, the client uses one
/// that it makes once and keeps in the cache folder, so the answer stays the same.
public struct DeviceContext: Sendable, Hashable, Codable {
    /// A BCP 47 language code, such as `en` or `pt-BR`.
    public var languageCode: String?
    /// The kind of device: `phone`, `tablet`, `desktop`, `server`, ...
    public var deviceClass: String?
    /// The operating system: `linux`, `ios`, `macos`, ...
    public var operatingSystem: String?
    /// The operating system's version, such as `17.4` or `6.1.0`.
    public var osVersion: String?
    /// An ISO 3166 region code, such as `US`.
    public var regionCode: String?
    /// The app's version, such as `2.1`.
    public var appVersion: String?
    /// A stable, random identifier of this installation, for percentage rollouts.
    public var installationID: String?

    /// Creates a context; leave unknown keys `nil`.
    public init(languageCode: String? = nil, deviceClass: String? = nil, operatingSystem: String? = nil,
                osVersion: String? = nil, regionCode: String? = nil, appVersion: String? = nil,
                installationID: String? = nil) {
        self.languageCode = languageCode
        self.deviceClass = deviceClass
        self.operatingSystem = operatingSystem
        self.osVersion = osVersion
        self.regionCode = regionCode
        self.appVersion = appVersion
        self.installationID = installationID
    }

    /// The context of the running process: the current locale's language and region, this
    /// operating system and its version, and the app version and device class you give.
    /// - Parameters:
    ///   - appVersion: The app's version, if deployments target it.
    ///   - deviceClass: The device class, which the process cannot tell by itself.
    /// - Returns: A context without an installation ID (the cache folder supplies one).
    public static func current(appVersion: String? = nil, deviceClass: String? = nil) -> DeviceContext {
        let locale = Locale.current
        let version = ProcessInfo.processInfo.operatingSystemVersion
        return DeviceContext(
            languageCode: locale.language.languageCode?.identifier,
            deviceClass: deviceClass,
            operatingSystem: operatingSystemName,
            osVersion: "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)",
            regionCode: locale.region?.identifier,
            appVersion: appVersion
        )
    }

    /// The query parameters that carry this context (`docs/collection-server.md`).
    var queryItems: [URLQueryItem] {
        let pairs: [(String, String?)] = [
            ("languageCode", languageCode), ("deviceClass", deviceClass), ("operatingSystem", operatingSystem),
            ("osVersion", osVersion), ("regionCode", regionCode), ("appVersion", appVersion),
            ("installationID", installationID),
        ]
        return pairs.compactMap { name, value in
            guard let value, !value.isEmpty else { return nil }
            return URLQueryItem(name: name, value: value)
        }
    }

    private static var operatingSystemName: String {
        #if os(Linux)
        return "linux"
        #elseif os(iOS)
        return "ios"
        #elseif os(macOS)
        return "macos"
        #elseif os(tvOS)
        return "tvos"
        #elseif os(watchOS)
        return "watchos"
        #elseif os(visionOS)
        return "visionos"
        #elseif os(Windows)
        return "windows"
        #else
        return "unknown"
        #endif
    }
}
