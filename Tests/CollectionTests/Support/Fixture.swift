import Foundation
import MLKitCollections
import TestSupport

/// A running server with a publish token, a publisher client and an empty client cache.
struct Fixture {
    let server: ServerProcess
    let publishToken: String
    let publisher: PublisherClient
    let cache: URL

    /// Starts a server over a new data folder and makes a publish token.
    static func start() async throws -> Fixture {
        let server = try ServerProcess(start: false)
        let token = try server.token(scope: "publish")
        try server.start()
        return Fixture(server: server, publishToken: token,
                       publisher: try PublisherClient(server: server.url, token: token),
                       cache: try Binary.temporaryFolder("cache"))
    }

    /// Stops the server and removes its data and the cache.
    func tearDown() {
        server.shutDown()
        try? FileManager.default.removeItem(at: cache)
    }

    /// Creates (or updates) `collection` with the models of `files`, uploads them and creates
    /// an activated deployment.
    @discardableResult
    func deploy(_ collection: String, _ files: [String: URL], version: String = "1.0", targeting: Targeting = Targeting(),
                rollout: Double = 100) async throws -> Deployment {
        _ = try await publisher.saveCollection(collection, description: "test collection",
                                               modelIdentifiers: files.keys.sorted())
        var models: [String: PublisherClient.ModelReference] = [:]
        for (identifier, file) in files {
            let uploaded = try await publisher.uploadModel(at: file)
            models[identifier] = .init(sha256: uploaded.sha256, version: version)
        }
        return try await publisher.createDeployment(collection: collection, models: models, targeting: targeting,
                                                    rolloutPercentage: rollout)
    }

    /// Accesses `collection` through `url` (the server's unless given) with this fixture's cache.
    func access(_ collection: String, through url: URL? = nil, context: DeviceContext = DeviceContext(),
                policy: RefreshPolicy = .always) async throws -> ModelCollection {
        try await ModelCollection.beginAccessing(identifier: collection, server: url ?? server.url, context: context,
                                                 cacheFolder: cache, refreshPolicy: policy)
    }

    /// The SHA-256 of a file, as the server names it.
    func sha256(of file: URL) async throws -> String {
        try await publisher.uploadModel(at: file).sha256
    }
}
