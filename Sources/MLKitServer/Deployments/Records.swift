import Foundation

/// A collection: an identifier, a description and the identifiers of its models. Its JSON is
/// the API's Collection.
struct CollectionRecord: Sendable, Hashable, Encodable {
    var identifier: String
    var description: String
    var modelIdentifiers: [String]
    var created: Date
    var updated: Date
    /// The deployment that devices get when no targeted one matches.
    var defaultDeploymentID: String?
}

/// A model file stored on the server, named by the SHA-256 of its bytes. Its JSON (without
/// `created`) answers an upload.
struct ModelFileRecord: Sendable, Hashable, Encodable {
    var sha256: String
    var size: Int64
    var formatVersion: Int
    var encrypted: Bool
    /// The key that decrypts the model, for an encrypted one.
    var keyIdentifier: String?
    /// The classifier's algorithm, for a plain model.
    var kind: String?
    /// The version in the model's metadata, for a plain model.
    var version: String?
    var created: Date

    private enum CodingKeys: String, CodingKey {
        case sha256, size, formatVersion, encrypted, keyIdentifier, kind, version
    }
}

/// A model file in a deployment, under its model identifier.
struct DeployedModel: Sendable, Hashable {
    var file: ModelFileRecord
    /// The version the publisher gave it (or the model's own).
    var version: String
}

/// A deployment of a collection: one model file per model identifier, targeting rules and a
/// rollout.
struct DeploymentRecord: Sendable, Hashable {
    /// Where a deployment stands.
    enum Status: String, Sendable, Codable {
        case draft, active, superseded, rolledBack
    }

    /// One change of status, kept for the history.
    struct Event: Sendable, Hashable {
        var status: Status
        var at: Date
    }

    var deploymentID: String
    var collection: String
    var models: [String: DeployedModel]
    var targeting: Targeting
    var rolloutPercentage: Double
    var status: Status
    var created: Date
    var activated: Date?
    /// Increases with every activation in a collection: newer activations win ties in time.
    var activationSequence: Int?
    /// Every change of status, oldest first.
    var events: [Event] = []

    /// Whether this deployment is for every device: no rules and a full rollout.
    var isDefault: Bool { targeting.isEmpty && rolloutPercentage >= 100 }
}

/// What a bearer token may do.
public enum TokenScope: String, Sendable, CaseIterable, Codable {
    /// Create collections, upload models, deploy, roll back, register keys.
    case publish
    /// Fetch the keys of encrypted models.
    case read
}

/// A token as stored: only its SHA-256.
struct TokenRecord: Sendable, Hashable {
    var hash: [UInt8]
    var scope: TokenScope
    /// The one collection the token is limited to, if any.
    var collection: String?
}

/// An encryption key registered on the server.
struct KeyRecord: Sendable, Hashable {
    var identifier: String
    /// The key file's canonical bytes, served as they are.
    var keyFile: Data
}
