import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Resolves one collection for one device context against the server and the cache.
struct CollectionAccessor: Sendable {
    let identifier: String
    let context: DeviceContext
    let cache: ModelCache
    let connection: ServerConnection

    /// - Parameter watchdogInterval: For tests: the ``Watchdog``'s interval, instead of the
    ///   configuration's.
    init(identifier: String, server: URL, context: DeviceContext, cache: ModelCache,
         configuration: URLSessionConfiguration, watchdogInterval: TimeInterval? = nil) throws {
        try Self.validate(identifier)
        self.identifier = identifier
        self.cache = cache
        self.connection = try ServerConnection(server: server, token: nil, configuration: configuration,
                                               watchdogInterval: watchdogInterval)
        var context = context
        if context.installationID == nil { context.installationID = try cache.installationID() }
        self.context = context
    }

    /// Checks a collection identifier against `[A-Za-z0-9._-]{1,128}`, which also keeps it a
    /// safe folder name.
    static func validate(_ identifier: String) throws {
        let allowed = identifier.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
        guard allowed, (1...128).contains(identifier.utf8.count), identifier != ".", identifier != ".." else {
            throw ModelCollectionError(.invalidParameter, "collection identifier \"\(identifier)\": expected 1 to 128 of A-Z a-z 0-9 . _ -")
        }
    }

    /// The collection: cached while fresh, else revalidated or downloaded; the cached copy
    /// marked stale when the server fails; an error when there is no cached copy.
    ///
    /// Everything but the first look at the cache happens under the collection's lock, so that
    /// concurrent accesses (tasks or processes sharing the cache folder) take turns: none
    /// deletes the files of a manifest another one saved, and the last good collection read
    /// for the offline fallback is complete.
    func access(policy: RefreshPolicy) async throws -> ModelCollection {
        if let cached = fresh(cache.manifest(for: identifier), policy: policy) {
            return ModelCollection(cached, cache: cache, staleReason: nil)
        }
        let lock = try await cache.lockCollection(identifier)
        defer { lock.release() }
        // Another access may have refreshed the collection while this one waited for the lock.
        let cached = cache.manifest(for: identifier)
        if let cached = fresh(cached, policy: policy) {
            return ModelCollection(cached, cache: cache, staleReason: nil)
        }
        do {
            let manifest = try await refresh(cached)
            return ModelCollection(manifest, cache: cache, staleReason: nil)
        } catch let error as ModelCollectionError {
            guard let cached else { throw ModelCollectionError.unavailable(identifier, because: error) }
            return ModelCollection(cached, cache: cache, staleReason: error)
        }
    }

    /// The cached collection, if it was resolved for this server and context recently enough
    /// for the policy.
    private func fresh(_ cached: CachedCollection?, policy: RefreshPolicy) -> CachedCollection? {
        guard let cached, cached.server == connection.server.absoluteString, cached.context == context,
              Date().timeIntervalSince(cached.checked) < policy.minimumInterval.seconds else { return nil }
        return cached
    }

    /// Asks the server, downloads what a new deployment needs, saves the new manifest and
    /// deletes the files it no longer names; called under the collection's lock.
    private func refresh(_ cached: CachedCollection?) async throws -> CachedCollection {
        let subject = "collection \"\(identifier)\""
        var request = connection.request("GET", "/v1/collections/\(identifier)", query: context.queryItems)
        if let etag = cached?.etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        let (body, response) = try await connection.send(request, about: subject)
        let now = Date()
        if response.statusCode == 304, var cached {
            cached.checked = now
            cached.server = connection.server.absoluteString
            cached.context = context
            try? cache.save(cached)
            return cached
        }
        let resolved = try WireFormat.decode(ResolvedCollection.self, from: body, about: subject)
        try check(resolved)
        let download = ModelDownload(connection: connection, cache: cache)
        for entry in resolved.entries.values.sorted(by: { $0.modelIdentifier < $1.modelIdentifier }) {
            _ = try await download.fetch(entry, collection: identifier)
        }
        let manifest = CachedCollection(resolved: resolved, etag: response.value(forHTTPHeaderField: "ETag"),
                                        fetched: cached?.resolved == resolved ? cached!.fetched : now, checked: now,
                                        server: connection.server.absoluteString, context: context)
        try cache.save(manifest)
        cache.pruneModels(of: identifier, keeping: Set(resolved.entries.values.map(\.sha256)))
        return manifest
    }

    /// Rejects an answer for another collection or with a digest that is not a safe file name.
    private func check(_ resolved: ResolvedCollection) throws {
        let subject = "collection \"\(identifier)\""
        guard resolved.collection == identifier else {
            throw ModelCollectionError(.invalidResponse, "\(subject): the server answered for collection \"\(resolved.collection)\"")
        }
        for (key, entry) in resolved.entries {
            let hex = entry.sha256.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
            guard hex, entry.sha256.utf8.count == 64, entry.size >= 0 else {
                throw ModelCollectionError(.invalidResponse, "\(subject), model \"\(key)\": \"\(entry.sha256)\" is not a SHA-256")
            }
        }
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
