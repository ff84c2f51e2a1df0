public import Foundation

/// A collection as the publisher API describes it.
public struct PublishedCollection: Codable, Sendable, Hashable {
    /// The collection's identifier, `[A-Za-z0-9._-]{1,128}`.
    public let identifier: String
    /// What the collection is for.
    public let description: String?
    /// The identifiers of its models; every deployment gives one file for each.
    public let modelIdentifiers: [String]
    /// When the collection was created.
    public let created: Date?
    /// When the collection was last changed.
    public let updated: Date?
    /// The collection's default deployment, if one is active.
    public let defaultDeploymentID: String?
}

/// The rules that decide which devices get a deployment. A rule left `nil` matches every
/// device; a rule that names a key the device's context lacks does not match.
public struct Targeting: Codable, Sendable, Hashable {
    /// Language codes, case-insensitive; `en` matches `en-GB`.
    public var languageCodes: [String]?
    /// Device classes (`phone`, `tablet`, `desktop`, `server`, ...).
    public var deviceClasses: [String]?
    /// Operating systems (`linux`, `ios`, `macos`, ...), case-insensitive.
    public var operatingSystems: [String]?
    /// An OS version range: comma-separated comparisons such as `>=14,<17.4`.
    public var osVersion: String?
    /// Region codes, case-insensitive.
    public var regionCodes: [String]?
    /// An app version range, such as `>=2.0,<3`.
    public var appVersion: String?

    /// Creates rules; leave a key `nil` to match every device on it.
    public init(languageCodes: [String]? = nil, deviceClasses: [String]? = nil, operatingSystems: [String]? = nil,
                osVersion: String? = nil, regionCodes: [String]? = nil, appVersion: String? = nil) {
        self.languageCodes = languageCodes
        self.deviceClasses = deviceClasses
        self.operatingSystems = operatingSystems
        self.osVersion = osVersion
        self.regionCodes = regionCodes
        self.appVersion = appVersion
    }

    /// Whether no rule is set, as in a default deployment.
    public var isEmpty: Bool { self == Targeting() }
}

/// A deployment of a collection: one model file per model identifier, targeting rules, a
/// rollout percentage, and its place in the collection's history.
public struct Deployment: Codable, Sendable, Hashable {
    /// One model file of a deployment.
    public struct Model: Codable, Sendable, Hashable {
        /// The file's SHA-256.
        public let sha256: String
        /// The version the publisher gave it.
        public let version: String?
        /// The file's size in bytes.
        public let size: Int64?
        /// The model file's format version.
        public let formatVersion: Int?
        /// Whether the model is encrypted.
        public let encrypted: Bool?
        /// The key identifier of an encrypted model.
        public let keyIdentifier: String?
    }

    /// The deployment's identifier (a UUID).
    public let deploymentID: String
    /// The collection it belongs to.
    public let collection: String
    /// The model files, keyed by model identifier.
    public let models: [String: Model]
    /// Which devices get it.
    public let targeting: Targeting?
    /// The share of matching installations that get it, from 0 to 100.
    public let rolloutPercentage: Double?
    /// `draft`, `active`, `superseded` or `rolledBack`.
    public let status: String
    /// When it was created.
    public let created: Date?
    /// When it was last activated.
    public let activated: Date?
}

/// A model file the server stores, as `POST /v1/models` describes it.
public struct UploadedModel: Codable, Sendable, Hashable {
    /// The file's SHA-256, the name it is stored and deployed under.
    public let sha256: String
    /// The file's size in bytes.
    public let size: Int64
    /// The model file's format version.
    public let formatVersion: Int?
    /// Whether the file is an encrypted model.
    public let encrypted: Bool?
    /// The key identifier in an encrypted model's clear header.
    public let keyIdentifier: String?
    /// The classifier's kind, when the server could read it.
    public let kind: String?
    /// The version in the model's metadata, when it has one.
    public let version: String?
}

/// A collection and every deployment it has had, newest first.
public struct DeploymentHistory: Codable, Sendable, Hashable {
    /// The collection.
    public let collection: PublishedCollection
    /// Its deployments, newest first.
    public let deployments: [Deployment]
}
