public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A set of models delivered by a collection server, resolved for one device and kept in a
/// local cache: the client side of Core ML Model Deployment's `MLModelCollection`.
///
/// ```swift
/// let collection = try await ModelCollection.beginAccessing(
///     identifier: "sentiment", server: URL(string: "https://models.example.com")!)
/// let classifier = try TextClassifier(contentsOf: collection.entries["polarity"]!.modelURL)
/// ```
///
/// When the server cannot be reached or fails, the last good collection comes from the
/// cache with ``isStale`` set and the failure in ``staleReason``. When there is no cached copy
/// either, ``beginAccessing(identifier:server:context:cacheFolder:refreshPolicy:configuration:)``
/// throws ``ModelCollectionError/Code/modelCollection``, and the app falls back to the model it
/// bundles.
public struct ModelCollection: Sendable {
    /// One model of a collection.
    public struct Entry: Sendable, Hashable {
        /// The model's identifier, unique within the collection.
        public let modelIdentifier: String
        /// The local model file, whose SHA-256 was checked when it entered the cache.
        public let modelURL: URL
        /// The version the publisher gave the model in this deployment.
        public let version: String?
        /// The SHA-256 of the file, 64 lowercase hex digits.
        public let sha256: String
        /// The file's size in bytes.
        public let size: Int64
        /// The model file's format version.
        public let formatVersion: Int?
        /// Whether the model is encrypted; its key then comes from a key provider.
        public let isEncrypted: Bool
        /// The identifier of the key of an encrypted model.
        public let keyIdentifier: String?
    }

    /// The collection's identifier.
    public let identifier: String
    /// The deployment the models belong to.
    public let deploymentID: String
    /// When the deployment was activated on the server.
    public let activated: Date?
    /// The models, keyed by model identifier.
    public let entries: [String: Entry]
    /// When this deployment was downloaded.
    public let fetched: Date
    /// When the server last confirmed that this is the deployment for the device.
    public let checked: Date
    /// Whether this copy comes from the cache because the server could not be asked.
    public var isStale: Bool { staleReason != nil }
    /// Why the server could not be asked, for a stale copy.
    public let staleReason: ModelCollectionError?

    init(_ manifest: CachedCollection, cache: ModelCache, staleReason: ModelCollectionError?) {
        let resolved = manifest.resolved
        identifier = resolved.collection
        deploymentID = resolved.deploymentID
        activated = resolved.activated
        fetched = manifest.fetched
        checked = manifest.checked
        self.staleReason = staleReason
        entries = resolved.entries.mapValues { entry in
            Entry(modelIdentifier: entry.modelIdentifier,
                  modelURL: cache.modelFile(collection: resolved.collection, sha256: entry.sha256),
                  version: entry.version, sha256: entry.sha256, size: entry.size, formatVersion: entry.formatVersion,
                  isEncrypted: entry.encrypted ?? false, keyIdentifier: entry.keyIdentifier)
        }
    }
}

extension ModelCollection {
    /// Gets the collection's models for this device: from the cache while the refresh policy
    /// says it is fresh, else from the server, revalidating the cached copy with its ETag and
    /// downloading the files of a new deployment (verified, resumed where a download broke).
    ///
    /// - Parameters:
    ///   - identifier: The collection's identifier.
    ///   - server: The collection server's base URL.
    ///   - context: The device context the server targets deployments by. Without an
    ///     installation ID, the one kept in the cache folder is used.
    ///   - cacheFolder: Where models are kept; by default `mlkit/collections` in the user's
    ///     caches folder.
    ///   - refreshPolicy: How often the server is asked.
    ///   - configuration: Settings for the URL sessions (timeouts, proxies).
    /// - Returns: The collection, fresh, or from the cache and marked stale when the server
    ///   cannot be asked.
    /// - Throws: ``ModelCollectionError``: `modelCollection` when neither the server nor the
    ///   cache can provide the collection, `invalidParameter` for a bad identifier or URL.
    public static func beginAccessing(
        identifier: String,
        server: URL,
        context: DeviceContext = .current(),
        cacheFolder: URL? = nil,
        refreshPolicy: RefreshPolicy = .default,
        configuration: URLSessionConfiguration = .default
    ) async throws -> ModelCollection {
        let accessor = try CollectionAccessor(identifier: identifier, server: server, context: context,
                                              cache: ModelCache(folder: cacheFolder ?? ModelCache.defaultFolder),
                                              configuration: configuration)
        return try await accessor.access(policy: refreshPolicy)
    }

    /// Removes the local copies of a collection's models and its cached deployment.
    /// - Parameters:
    ///   - identifier: The collection's identifier.
    ///   - cacheFolder: The cache folder given to ``beginAccessing(identifier:server:context:cacheFolder:refreshPolicy:configuration:)``.
    /// - Returns: Whether there was a cached copy to remove.
    /// - Throws: ``ModelCollectionError`` with code `io` when the files cannot be removed.
    @discardableResult
    public static func endAccessing(identifier: String, cacheFolder: URL? = nil) async throws -> Bool {
        try CollectionAccessor.validate(identifier)
        let cache = ModelCache(folder: cacheFolder ?? ModelCache.defaultFolder)
        // Waits for a refresh under way, which would otherwise save its files back.
        let lock = try await cache.lockCollection(identifier)
        defer { lock.release() }
        return try cache.removeCollection(identifier)
    }

    /// The collection's deployments as they arrive: the server is asked every `interval`
    /// (revalidating with the ETag), and each deployment that differs from the one before is
    /// yielded once its files are verified in the cache. The first element is the deployment
    /// in effect when the server is first reached. Failed checks are skipped; the sequence
    /// ends when the task iterating it is cancelled.
    ///
    /// - Parameters:
    ///   - identifier: The collection's identifier.
    ///   - server: The collection server's base URL.
    ///   - context: The device context.
    ///   - cacheFolder: Where models are kept.
    ///   - interval: The time between two checks.
    ///   - configuration: Settings for the URL sessions.
    /// - Returns: An asynchronous sequence of collections.
    /// - Throws: ``ModelCollectionError`` with code `invalidParameter` for a bad identifier or URL.
    public static func updates(
        identifier: String,
        server: URL,
        context: DeviceContext = .current(),
        cacheFolder: URL? = nil,
        every interval: Duration = .seconds(15 * 60),
        configuration: URLSessionConfiguration = .default
    ) throws -> AsyncStream<ModelCollection> {
        let accessor = try CollectionAccessor(identifier: identifier, server: server, context: context,
                                              cache: ModelCache(folder: cacheFolder ?? ModelCache.defaultFolder),
                                              configuration: configuration)
        return AsyncStream { continuation in
            let polling = Task {
                var current: String?
                while !Task.isCancelled {
                    if let collection = try? await accessor.access(policy: .always), !collection.isStale,
                       collection.deploymentID != current {
                        current = collection.deploymentID
                        continuation.yield(collection)
                    }
                    try? await Task.sleep(for: interval)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in polling.cancel() }
        }
    }
}

/// How often ``ModelCollection/beginAccessing(identifier:server:context:cacheFolder:refreshPolicy:configuration:)``
/// asks the server about a collection that is already cached.
public struct RefreshPolicy: Sendable, Hashable {
    /// The time during which a cached collection is used without asking the server.
    public var minimumInterval: Duration

    /// Creates a policy that asks the server at most once per `minimumInterval`.
    public init(minimumInterval: Duration) {
        self.minimumInterval = minimumInterval
    }

    /// Ask the server every time (with the ETag, so an unchanged deployment costs a 304).
    public static let always = RefreshPolicy(minimumInterval: .zero)

    /// Ask the server at most once every `minutes` minutes.
    public static func atMostEvery(minutes: Int) -> RefreshPolicy {
        RefreshPolicy(minimumInterval: .seconds(60 * minutes))
    }

    /// At most every 15 minutes.
    public static let `default` = atMostEvery(minutes: 15)
}
