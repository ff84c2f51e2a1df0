import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The endpoints publishers call with a publish token: collections, uploads, deployments,
/// rollbacks and keys.
struct PublisherEndpoints {
    let state: ServerState
    let request: Request
    private var logger: Logger { state.logger }

    /// The largest JSON body accepted.
    static let jsonLimit = 1 << 20

    /// `GET /v1/collections`: every collection the token may see.
    func listCollections() async throws -> Response {
        let token = try await authorize(nil)
        let collections = try await state.store.collections().filter { token.collection == nil || $0.identifier == token.collection }
        return Responses.json(WireFormat.CollectionList(collections: collections),
                                              status: .ok)
    }

    /// `PUT /v1/collections/{id}`: creates or updates a collection.
    func saveCollection(_ identifier: String) async throws -> Response {
        try await authorize(identifier)
        let body = try WireFormat.decode(WireFormat.CollectionRequest.self, from: try await jsonBody())
        guard !body.modelIdentifiers.isEmpty else {
            throw CollectionServerError.badRequest("modelIdentifiers: a collection needs at least one model identifier")
        }
        for model in body.modelIdentifiers where !Identifier.isValid(model) {
            throw CollectionServerError.badRequest("modelIdentifiers: '\(model)' is not a valid model identifier (1–128 of A–Z a–z 0–9 . _ -)")
        }
        guard Set(body.modelIdentifiers).count == body.modelIdentifiers.count else {
            throw CollectionServerError.badRequest("modelIdentifiers: an identifier is listed twice")
        }
        let existing = try await state.store.collection(identifier)
        let (collection, created) = try await state.store.saveCollection(
            identifier: identifier, description: body.description ?? existing?.description ?? "",
            modelIdentifiers: body.modelIdentifiers, at: Date())
        state.activeDeployments.invalidate(identifier)
        logger.info("collection saved", metadata: ["collection": "\(identifier)", "created": "\(created)"])
        return Responses.json(collection, status: created ? .created : .ok)
    }

    /// `POST /v1/models`: streams a model file to a temporary file, hashing it, then validates
    /// it and hands it to the model file store.
    func uploadModel() async throws -> Response {
        try await authorize(nil)
        try requireDatabase()
        if let declared = request.headers[.contentLength].flatMap({ Int64($0) }), declared > state.maxUploadSize {
            throw Self.tooLarge(state.maxUploadSize)
        }
        let upload = try state.files.beginUpload()
        let sha256: String
        let inspection: ModelInspection
        do {
            for try await buffer in request.body {
                guard upload.size + Int64(buffer.readableBytes) <= state.maxUploadSize else {
                    throw Self.tooLarge(state.maxUploadSize)
                }
                try buffer.withUnsafeReadableBytes { try upload.append($0) }
            }
            sha256 = try upload.finish()
            guard upload.size > 0 else { throw CollectionServerError.unprocessable("not a valid model file: the body is empty") }
            if let stored = try await state.store.modelFile(sha256), try await state.files.contains(sha256, size: stored.size) {
                upload.discard()
                return Responses.json(stored, status: .ok)
            }
            do {
                inspection = try ModelInspection.inspect(fileAt: upload.path)
            } catch {
                logger.info("model refused", metadata: ["sha256": "\(sha256)", "reason": "\(error)"])
                throw error
            }
        } catch {
            upload.discard()
            throw error
        }
        try await state.files.commit(upload, sha256: sha256)
        let record = ModelFileRecord(
            sha256: sha256, size: upload.size, formatVersion: inspection.formatVersion, encrypted: inspection.encrypted,
            keyIdentifier: inspection.keyIdentifier, kind: inspection.kind, version: inspection.version, created: Date())
        let isNew = try await state.store.addModelFile(record)
        logger.info("model stored", metadata: ["sha256": "\(sha256)", "size": "\(upload.size)", "encrypted": "\(record.encrypted)"])
        return Responses.json(record, status: isNew ? .created : .ok)
    }

    /// `GET /v1/collections/{id}/deployments`: the collection and its full history.
    func history(_ collection: String) async throws -> Response {
        try await authorize(collection)
        let record = try await existingCollection(collection)
        let deployments = try await state.store.deployments(collection: collection)
        return Responses.json(
            WireFormat.History(collection: record,
                               deployments: deployments.map { WireFormat.Deployment($0, withHistory: true) }),
            status: .ok)
    }

    /// `POST /v1/collections/{id}/deployments`: a new deployment, activated unless asked not to.
    func deploy(_ collection: String) async throws -> Response {
        try await authorize(collection)
        let record = try await existingCollection(collection)
        let body = try WireFormat.decode(WireFormat.DeploymentRequest.self, from: try await jsonBody())
        let percentage = body.rolloutPercentage ?? 100
        guard percentage.isFinite, (0...100).contains(percentage) else {
            throw CollectionServerError.badRequest("rolloutPercentage: \(percentage) is not between 0 and 100")
        }
        let expected = Set(record.modelIdentifiers), given = Set(body.models.keys)
        if let missing = expected.subtracting(given).sorted().first {
            throw CollectionServerError.unprocessable("models: model identifier '\(missing)' of collection '\(collection)' is missing")
        }
        if let extra = given.subtracting(expected).sorted().first {
            throw CollectionServerError.unprocessable("models: '\(extra)' is not a model identifier of collection '\(collection)'")
        }
        var models: [String: DeployedModel] = [:]
        for (identifier, choice) in body.models {
            let sha256 = choice.sha256.lowercased()
            guard Identifier.isSHA256(sha256) else {
                throw CollectionServerError.badRequest("models.\(identifier).sha256: '\(choice.sha256)' is not a SHA-256")
            }
            guard let file = try await state.store.modelFile(sha256) else {
                throw CollectionServerError.unprocessable("models.\(identifier): no uploaded model file has the SHA-256 \(sha256)")
            }
            let version = choice.version?.trimmingASCIIWhitespace()
            models[identifier] = DeployedModel(
                file: file, version: version.flatMap { $0.isEmpty ? nil : $0 } ?? file.version ?? String(sha256.prefix(12)))
        }
        let deployment = DeploymentRecord(
            deploymentID: UUID().uuidString, collection: collection, models: models,
            targeting: body.targeting ?? .everyone, rolloutPercentage: percentage, status: .draft, created: Date())
        let saved = try await state.store.createDeployment(deployment, activate: body.activate ?? true, at: Date())
        state.activeDeployments.invalidate(collection)
        logger.info("deployment created", metadata: [
            "collection": "\(collection)", "deployment": "\(saved.deploymentID)", "status": "\(saved.status.rawValue)",
            "default": "\(saved.isDefault)", "rollout": "\(percentage)",
        ])
        return Responses.json(WireFormat.Deployment(saved), status: .created)
    }

    /// `POST /v1/collections/{id}/deployments/{deploymentID}/activate`.
    func activate(_ deploymentID: String, collection: String) async throws -> Response {
        try await authorize(collection)
        _ = try await existingCollection(collection)
        let deployment = try await state.store.activateDeployment(deploymentID, collection: collection, at: Date())
        state.activeDeployments.invalidate(collection)
        logger.info("deployment activated", metadata: ["collection": "\(collection)", "deployment": "\(deploymentID)"])
        return Responses.json(WireFormat.Deployment(deployment), status: .ok)
    }

    /// `POST /v1/collections/{id}/rollback`: the default deployment rolls back.
    func rollback(_ collection: String) async throws -> Response {
        try await authorize(collection)
        _ = try await existingCollection(collection)
        let data = try await jsonBody()
        let isEmpty = data.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        let target = isEmpty ? nil : try WireFormat.decode(WireFormat.RollbackRequest.self, from: data).deploymentID
        let deployment = try await state.store.rollback(collection: collection, to: try target.map(Identifier.deployment), at: Date())
        state.activeDeployments.invalidate(collection)
        logger.info("rolled back", metadata: ["collection": "\(collection)", "deployment": "\(deployment.deploymentID)"])
        return Responses.json(WireFormat.Deployment(deployment), status: .ok)
    }

    /// `PUT /v1/collections/{id}/keys/{keyID}`: registers the key of an encrypted model.
    func registerKey(_ identifier: String, collection: String) async throws -> Response {
        try await authorize(collection)
        _ = try await existingCollection(collection)
        let data = try await jsonBody()
        let keyFile = try KeyFileInspection.canonicalKeyFile(data, expectedIdentifier: identifier)
        let created = try await state.store.saveKey(KeyRecord(identifier: identifier, keyFile: keyFile),
                                                    collection: collection, at: Date())
        logger.info("key registered", metadata: ["collection": "\(collection)", "key": "\(identifier)"])
        return Responses.json(["keyIdentifier": identifier, "collection": collection],
                                              status: created ? .created : .ok)
    }

    // MARK: Helpers

    /// Refuses at once, before a body is read, while the shared database is known to be
    /// unavailable.
    private func requireDatabase() throws {
        if let database = state.database, case .unavailable(let reason) = database.health {
            throw CollectionServerError(.databaseUnavailable,
                                        "the database \(database.location) is unavailable (\(reason)); nothing was changed")
        }
    }

    @discardableResult
    private func authorize(_ collection: String?) async throws -> TokenRecord {
        try await state.tokens.authorize(request.headers[.authorization], scope: .publish, collection: collection)
    }

    private func existingCollection(_ identifier: String) async throws -> CollectionRecord {
        guard let collection = try await state.store.collection(identifier) else {
            throw CollectionServerError.notFound("no collection '\(identifier)'")
        }
        return collection
    }

    /// The request's body, up to ``jsonLimit`` bytes.
    private func jsonBody() async throws -> Data {
        var data = Data()
        for try await buffer in request.body {
            guard data.count + buffer.readableBytes <= Self.jsonLimit else { throw Self.tooLarge(Int64(Self.jsonLimit)) }
            buffer.withUnsafeReadableBytes { data.append(contentsOf: $0) }
        }
        return data
    }

    private static func tooLarge(_ limit: Int64) -> CollectionServerError {
        CollectionServerError(.payloadTooLarge, "the body is larger than the limit of \(limit) bytes")
    }
}
