public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// The publisher's side of a collection server: collections, model uploads, deployments,
/// rollback and keys. Every call needs a token with the publish scope.
///
/// ```swift
/// let publisher = try PublisherClient(server: URL(string: "http://127.0.0.1:8080")!, token: token)
/// _ = try await publisher.saveCollection("sentiment", description: "Polarity", modelIdentifiers: ["polarity"])
/// let model = try await publisher.uploadModel(at: URL(fileURLWithPath: "polarity.mlkit"))
/// let deployment = try await publisher.createDeployment(
///     collection: "sentiment", models: ["polarity": .init(sha256: model.sha256, version: "1.0")])
/// ```
public struct PublisherClient: Sendable {
    private let connection: ServerConnection

    /// Creates a client.
    /// - Parameters:
    ///   - server: The server's base URL.
    ///   - token: A bearer token with the publish scope.
    ///   - configuration: Settings for the URL session.
    /// - Throws: ``ModelCollectionError`` with code `invalidParameter` for a URL that is not http(s).
    public init(server: URL, token: String?, configuration: URLSessionConfiguration = .default) throws {
        connection = try ServerConnection(server: server, token: token, configuration: configuration)
    }

    /// A model file chosen for a deployment: its SHA-256 on the server and the version to show.
    public struct ModelReference: Codable, Sendable, Hashable {
        /// The SHA-256 of an uploaded model file.
        public var sha256: String
        /// The version the deployment gives the model.
        public var version: String

        /// Creates a reference.
        public init(sha256: String, version: String) {
            self.sha256 = sha256
            self.version = version
        }
    }

    /// Every collection on the server.
    /// - Throws: ``ModelCollectionError``.
    public func collections() async throws -> [PublishedCollection] {
        struct Answer: Decodable { let collections: [PublishedCollection] }
        return try await call("GET", "/v1/collections", about: "collections", as: Answer.self).collections
    }

    /// Creates a collection, or updates its description and model identifiers.
    /// - Parameters:
    ///   - identifier: The collection's identifier.
    ///   - description: What it is for.
    ///   - modelIdentifiers: The identifiers of its models.
    /// - Returns: The collection as stored.
    /// - Throws: ``ModelCollectionError``.
    public func saveCollection(_ identifier: String, description: String, modelIdentifiers: [String]) async throws
        -> PublishedCollection {
        struct Body: Encodable { let description: String; let modelIdentifiers: [String] }
        try CollectionAccessor.validate(identifier)
        return try await call("PUT", "/v1/collections/\(identifier)",
                              body: Body(description: description, modelIdentifiers: modelIdentifiers),
                              about: "collection \"\(identifier)\"", as: PublishedCollection.self)
    }

    /// A collection and its deployments, newest first.
    /// - Throws: ``ModelCollectionError``, `notFound` for an unknown collection.
    public func history(of identifier: String) async throws -> DeploymentHistory {
        try CollectionAccessor.validate(identifier)
        return try await call("GET", "/v1/collections/\(identifier)/deployments",
                              about: "collection \"\(identifier)\"", as: DeploymentHistory.self)
    }

    /// Uploads a model file, streamed from disk.
    /// - Parameter file: A plain or encrypted mlkit model file.
    /// - Returns: What the server stored: the SHA-256 to deploy it by, and what its header says.
    /// - Throws: ``ModelCollectionError``: `io` for a missing file, `server` with status 413 or
    ///   422 for a file too large or not a model.
    public func uploadModel(at file: URL) async throws -> UploadedModel {
        guard FileManager.default.isReadableFile(atPath: file.path) else {
            throw ModelCollectionError(.io, "\(file.path): no such readable file")
        }
        let subject = "model file \(file.path)"
        let request = connection.request("POST", "/v1/models", contentType: "application/octet-stream")
        let (data, _) = try await connection.upload(request, fromFile: file, about: subject)
        return try WireFormat.decode(UploadedModel.self, from: data, about: subject)
    }

    /// Creates a deployment of a collection, activated unless `activate` is false.
    /// - Parameters:
    ///   - collection: The collection's identifier.
    ///   - models: One uploaded file for each of the collection's model identifiers.
    ///   - targeting: Which devices get it; no rules and a 100% rollout make a default deployment.
    ///   - rolloutPercentage: The share of matching installations that get it, 0 to 100.
    ///   - activate: Whether to activate it now.
    /// - Returns: The deployment.
    /// - Throws: ``ModelCollectionError``: `server` with 422 for a missing or unknown model, 400
    ///   for a bad range or percentage.
    public func createDeployment(collection: String, models: [String: ModelReference], targeting: Targeting = Targeting(),
                                 rolloutPercentage: Double = 100, activate: Bool = true) async throws -> Deployment {
        struct Body: Encodable {
            let models: [String: ModelReference]
            let targeting: Targeting?
            let rolloutPercentage: Double
            let activate: Bool
        }
        try CollectionAccessor.validate(collection)
        let body = Body(models: models, targeting: targeting.isEmpty ? nil : targeting,
                        rolloutPercentage: rolloutPercentage, activate: activate)
        return try await call("POST", "/v1/collections/\(collection)/deployments", body: body,
                              about: "collection \"\(collection)\"", as: Deployment.self)
    }

    /// Activates a deployment.
    /// - Throws: ``ModelCollectionError``, `notFound` for an unknown deployment.
    public func activate(deploymentID: String, in collection: String) async throws -> Deployment {
        try CollectionAccessor.validate(collection)
        let id = deploymentID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(.init(charactersIn: "/")))
            ?? deploymentID
        return try await call("POST", "/v1/collections/\(collection)/deployments/\(id)/activate",
                              about: "deployment \(deploymentID) of collection \"\(collection)\"", as: Deployment.self)
    }

    /// Rolls a collection back to the default deployment before the current one, or to `deploymentID`.
    /// - Returns: The deployment that is now the default.
    /// - Throws: ``ModelCollectionError``: `server` with 409 when there is nothing to roll back to.
    public func rollback(collection: String, to deploymentID: String? = nil) async throws -> Deployment {
        struct Body: Encodable { let deploymentID: String? }
        try CollectionAccessor.validate(collection)
        return try await call("POST", "/v1/collections/\(collection)/rollback", body: Body(deploymentID: deploymentID),
                              about: "collection \"\(collection)\"", as: Deployment.self)
    }

    /// Registers the key of a collection's encrypted models.
    /// - Parameters:
    ///   - keyFileData: The key file: JSON `.mlkitkey` or Apple's `.mlmodelkey` property list.
    ///   - identifier: The key's identifier, as in the key file.
    ///   - collection: The collection whose models use it.
    /// - Throws: ``ModelCollectionError``: `server` with 422 for a file that is not a key.
    public func registerKey(_ keyFileData: Data, identifier: String, collection: String) async throws {
        try CollectionAccessor.validate(collection)
        let id = identifier.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? identifier
        var request = connection.request("PUT", "/v1/collections/\(collection)/keys/\(id)", body: keyFileData)
        if keyFileData.first == UInt8(ascii: "<") || keyFileData.starts(with: Data("bplist".utf8)) {
            request.setValue("application/x-plist", forHTTPHeaderField: "Content-Type")
        }
        _ = try await connection.send(request, about: "key \(identifier) of collection \"\(collection)\"")
    }

    private func call<Answer: Decodable>(_ method: String, _ path: String, body: (some Encodable)? = Optional<Data>.none,
                                         about subject: String, as type: Answer.Type) async throws -> Answer {
        var encoded: Data?
        if let body {
            do { encoded = try WireFormat.encoder.encode(body) } catch {
                throw ModelCollectionError(.invalidParameter, "\(subject): cannot encode the request: \(error)")
            }
        }
        let (data, _) = try await connection.send(connection.request(method, path, body: encoded), about: subject)
        return try WireFormat.decode(type, from: data, about: subject)
    }
}
