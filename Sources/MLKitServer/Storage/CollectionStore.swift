import Foundation

/// Where the server keeps its metadata: collections, model files, deployments, keys and
/// tokens. The model files' bytes live beside it, in a ``ModelFileStore``.
///
/// Two stores implement it: SQLite (``SQLiteCollectionStore``), the embedded default of one
/// server, and PostgreSQL (``PostgresCollectionStore``), which several replicas share. The
/// rules for activation and rollback live in ``DeploymentLifecycle``, so every store applies the
/// same ones; each store applies them in one transaction that holds the collection, so that
/// concurrent changes to one collection take turns. The store-contract tests run the same
/// tests against both.
protocol CollectionStore: Sendable {
    /// How the server keeps the active deployments it caches up to date with this store.
    var freshness: ActiveDeploymentCache.Freshness { get }

    /// A number that grows with every change of a collection (its description, models,
    /// deployments or their statuses), or `nil` for an unknown collection.
    func revision(collection: String) async throws -> Int64?

    /// Every collection, by identifier.
    func collections() async throws -> [CollectionRecord]
    /// One collection, or `nil`.
    func collection(_ identifier: String) async throws -> CollectionRecord?
    /// Creates or updates a collection.
    /// - Returns: The collection, and whether it was created.
    func saveCollection(identifier: String, description: String, modelIdentifiers: [String],
                        at date: Date) async throws -> (collection: CollectionRecord, created: Bool)

    /// A stored model file, or `nil`.
    func modelFile(_ sha256: String) async throws -> ModelFileRecord?
    /// Records a model file whose bytes are in place.
    /// - Returns: Whether it is new.
    func addModelFile(_ file: ModelFileRecord) async throws -> Bool

    /// Stores a new deployment (its `status` is `draft`), and activates it if asked.
    func createDeployment(_ deployment: DeploymentRecord, activate: Bool, at date: Date) async throws -> DeploymentRecord
    /// Activates a deployment of a collection.
    /// - Throws: ``CollectionServerError`` 404 for an unknown deployment.
    func activateDeployment(_ deploymentID: String, collection: String, at date: Date) async throws -> DeploymentRecord
    /// Rolls the default deployment back, to `target` or to the one it superseded.
    /// - Returns: The deployment that is now the default.
    func rollback(collection: String, to target: String?, at date: Date) async throws -> DeploymentRecord
    /// Every deployment of a collection, newest first, with its events.
    func deployments(collection: String) async throws -> [DeploymentRecord]
    /// The active deployments of a collection, or `nil` for an unknown collection. They are at
    /// least as recent as the ``revision(collection:)`` read before.
    func activeDeployments(collection: String) async throws -> [DeploymentRecord]?

    /// Registers a key for a collection.
    /// - Returns: Whether the key is new to the collection.
    /// - Throws: ``CollectionServerError`` 409 when another key file has the same identifier.
    func saveKey(_ key: KeyRecord, collection: String, at date: Date) async throws -> Bool
    /// A registered key, or `nil`.
    func key(_ identifier: String) async throws -> KeyRecord?
    /// Whether `collection` (or, for `nil`, any collection) has the key registered or uses it
    /// in one of its deployments.
    func collectionUsesKey(_ identifier: String, collection: String?) async throws -> Bool

    /// Stores a token's hash.
    func addToken(_ token: TokenRecord, at date: Date) async throws
    /// Every stored token.
    func tokens() async throws -> [TokenRecord]
}
