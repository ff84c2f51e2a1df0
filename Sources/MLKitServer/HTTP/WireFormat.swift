import Foundation

/// The JSON bodies of the API, as `docs/collection-server.md` lists them.
enum WireFormat {
    /// A model file of a deployment.
    struct DeployedModel: Encodable {
        var sha256: String
        var version: String
        var size: Int64
        var formatVersion: Int
        var encrypted: Bool
        var keyIdentifier: String?
    }

    /// A change of a deployment's status.
    struct Event: Encodable {
        var status: DeploymentRecord.Status
        var at: Date
    }

    /// A deployment, with its history when listed.
    struct Deployment: Encodable {
        var deploymentID: String
        var collection: String
        var models: [String: DeployedModel]
        var targeting: Targeting
        var rolloutPercentage: Double
        var status: DeploymentRecord.Status
        var created: Date
        var activated: Date?
        var history: [Event]?

        init(_ record: DeploymentRecord, withHistory: Bool = false) {
            deploymentID = record.deploymentID
            collection = record.collection
            models = record.models.mapValues {
                DeployedModel(sha256: $0.file.sha256, version: $0.version, size: $0.file.size,
                              formatVersion: $0.file.formatVersion, encrypted: $0.file.encrypted,
                              keyIdentifier: $0.file.keyIdentifier)
            }
            targeting = record.targeting
            rolloutPercentage = record.rolloutPercentage
            status = record.status
            created = record.created
            activated = record.activated
            history = withHistory ? record.events.map { Event(status: $0.status, at: $0.at) } : nil
        }
    }

    /// `GET /v1/collections/{id}/deployments`.
    struct History: Encodable {
        var collection: CollectionRecord
        var deployments: [Deployment]
    }

    /// `GET /v1/collections`.
    struct CollectionList: Encodable {
        var collections: [CollectionRecord]
    }

    /// One model of a resolved collection.
    struct Entry: Encodable {
        var modelIdentifier: String
        var version: String
        var sha256: String
        var size: Int64
        var formatVersion: Int
        var encrypted: Bool
        var keyIdentifier: String?
        var downloadURL: String
    }

    /// `GET /v1/collections/{id}`: the deployment a device gets.
    struct Resolved: Encodable {
        var collection: String
        var deploymentID: String
        var activated: Date?
        var entries: [String: Entry]

        init(_ record: DeploymentRecord) {
            collection = record.collection
            deploymentID = record.deploymentID
            activated = record.activated
            entries = Dictionary(uniqueKeysWithValues: record.models.map { identifier, model in
                (identifier, Entry(modelIdentifier: identifier, version: model.version, sha256: model.file.sha256,
                                   size: model.file.size, formatVersion: model.file.formatVersion,
                                   encrypted: model.file.encrypted, keyIdentifier: model.file.keyIdentifier,
                                   downloadURL: "/v1/models/\(model.file.sha256)"))
            })
        }
    }

    /// Every error's body.
    struct Failure: Encodable {
        struct Detail: Encodable { var message: String }
        var error: Detail
    }

    /// `PUT /v1/collections/{id}`.
    struct CollectionRequest: Decodable {
        var description: String?
        var modelIdentifiers: [String]

        private enum CodingKeys: String, CodingKey, CaseIterable { case description, modelIdentifiers }

        init(from decoder: any Decoder) throws {
            try StrictKeys.check(decoder, allowed: CodingKeys.allCases.map(\.rawValue))
            let container = try decoder.container(keyedBy: CodingKeys.self)
            description = try container.decodeIfPresent(String.self, forKey: .description)
            modelIdentifiers = try container.decode([String].self, forKey: .modelIdentifiers)
        }
    }

    /// `POST /v1/collections/{id}/deployments`.
    struct DeploymentRequest: Decodable {
        struct Model: Decodable {
            var sha256: String
            var version: String?

            private enum CodingKeys: String, CodingKey, CaseIterable { case sha256, version }

            init(from decoder: any Decoder) throws {
                try StrictKeys.check(decoder, allowed: CodingKeys.allCases.map(\.rawValue))
                let container = try decoder.container(keyedBy: CodingKeys.self)
                sha256 = try container.decode(String.self, forKey: .sha256)
                version = try container.decodeIfPresent(String.self, forKey: .version)
            }
        }

        var models: [String: Model]
        var targeting: Targeting?
        var rolloutPercentage: Double?
        var activate: Bool?

        private enum CodingKeys: String, CodingKey, CaseIterable { case models, targeting, rolloutPercentage, activate }

        init(from decoder: any Decoder) throws {
            try StrictKeys.check(decoder, allowed: CodingKeys.allCases.map(\.rawValue))
            let container = try decoder.container(keyedBy: CodingKeys.self)
            models = try container.decode([String: Model].self, forKey: .models)
            targeting = try container.decodeIfPresent(Targeting.self, forKey: .targeting)
            rolloutPercentage = try container.decodeIfPresent(Double.self, forKey: .rolloutPercentage)
            activate = try container.decodeIfPresent(Bool.self, forKey: .activate)
        }
    }

    /// `POST /v1/collections/{id}/rollback`.
    struct RollbackRequest: Decodable {
        var deploymentID: String?

        private enum CodingKeys: String, CodingKey, CaseIterable { case deploymentID }

        init(from decoder: any Decoder) throws {
            try StrictKeys.check(decoder, allowed: CodingKeys.allCases.map(\.rawValue))
            let container = try decoder.container(keyedBy: CodingKeys.self)
            deploymentID = try container.decodeIfPresent(String.self, forKey: .deploymentID)
        }
    }

    /// Encodes a body: sorted keys, ISO 8601 dates, slashes unescaped.
    static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        do {
            return try encoder.encode(value)
        } catch {
            preconditionFailure("a response body failed to encode: \(error)")
        }
    }

    /// Decodes a request body.
    /// - Throws: ``CollectionServerError`` (bad request) naming the field at fault.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as CollectionServerError {
            throw error
        } catch let error as DecodingError {
            throw CollectionServerError.badRequest("malformed JSON body: \(error.fieldSummary)")
        } catch {
            throw CollectionServerError.badRequest("malformed JSON body: \(error.localizedDescription)")
        }
    }
}

/// Refuses JSON objects with keys a type does not know, so that a misspelt field is an error
/// rather than silently ignored.
enum StrictKeys {
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    static func check(_ decoder: any Decoder, allowed: [String]) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        if let unknown = container.allKeys.map(\.stringValue).sorted().first(where: { !allowed.contains($0) }) {
            let path = (decoder.codingPath.map(\.stringValue) + [unknown]).joined(separator: ".")
            throw CollectionServerError.badRequest(
                "unknown field '\(path)' (expected one of: \(allowed.joined(separator: ", ")))")
        }
    }
}

extension DecodingError {
    /// The field path and the problem, for error messages.
    var fieldSummary: String {
        func path(_ context: Context, _ key: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath + (key.map { [$0] } ?? [])
            let text = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return text.isEmpty ? "the body" : "field '\(text)'"
        }
        switch self {
        case .keyNotFound(let key, let context): return "\(path(context, key)) is missing"
        case .typeMismatch(let type, let context): return "\(path(context)): expected \(type)"
        case .valueNotFound(let type, let context): return "\(path(context)): expected \(type), found null"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not valid JSON" : "\(path(context)): \(context.debugDescription)"
        @unknown default: return "\(self)"
        }
    }
}
