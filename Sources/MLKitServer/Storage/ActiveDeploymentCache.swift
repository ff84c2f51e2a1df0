import Foundation
import NIOConcurrencyHelpers

/// Keeps each collection's active deployments in memory, so that resolving a collection (the
/// hot path: every device asks) reads them from the store only when they changed.
///
/// How an entry is kept up to date depends on the store (``Freshness``). Over SQLite, which
/// one server owns, a resolution reads no database at all: every change that goes through the
/// server clears the entry, and an entry expires after a second, which bounds how long a change
/// made by another process on the same file can go unseen. Over PostgreSQL, which replicas
/// share, a resolution reads the collection's revision (one small read, shared by the requests
/// that wait together, see ``FreshReads``) and reloads the deployments only when it moved; so
/// a change is served by every replica from the moment it is committed, and no replica gives a
/// stale answer once the publisher's call has returned. When that database cannot be reached,
/// the last entry is served, and the answer says so.
final class ActiveDeploymentCache: Sendable {
    /// How cached deployments are kept up to date with the store.
    enum Freshness: Sendable, Equatable {
        /// An entry lives for the given duration; changes made through this server clear it at
        /// once. For a store that one server owns.
        case expiring(Duration)
        /// Every resolution checks the collection's revision in the store. For a store that
        /// several replicas share.
        case readThrough
    }

    /// A collection's resolution, and whether it came from this cache because the database
    /// could not be reached.
    struct Lookup: Sendable {
        let resolution: Resolution?
        let servedFromCache: Bool
    }

    private struct Entry {
        let resolution: Resolution?
        let loaded: ContinuousClock.Instant
        /// The collection's revision the entry was loaded at (read-through only).
        let revision: Int64?
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Counts the changes of each collection made through this server, so that a load that
        /// overlapped a change is not kept.
        var changes: [String: Int] = [:]
    }

    private let state = NIOLockedValueBox(State())
    private let reads = FreshReads<Resolution?>()

    /// The resolution of `collection` (`nil` for an unknown collection), from the cache while
    /// it is fresh, else from `store`.
    /// - Throws: What the store throws; over a shared store, `databaseUnavailable` only when
    ///   nothing of the collection is cached.
    func resolution(of collection: String, store: any CollectionStore) async throws -> Lookup {
        switch store.freshness {
        case .expiring(let lifetime):
            return Lookup(resolution: try await expiring(collection, lifetime: lifetime, store: store), servedFromCache: false)
        case .readThrough:
            do {
                let resolution = try await reads.value(for: collection) { [self] in
                    try await readThrough(collection, store: store)
                }
                return Lookup(resolution: resolution, servedFromCache: false)
            } catch let error as CollectionServerError where error.code == .databaseUnavailable {
                guard let entry = state.withLockedValue({ $0.entries[collection] }) else { throw error }
                return Lookup(resolution: entry.resolution, servedFromCache: true)
            }
        }
    }

    private func expiring(_ collection: String, lifetime: Duration, store: any CollectionStore) async throws -> Resolution? {
        let now = ContinuousClock.now
        let (cached, changesBefore) = state.withLockedValue { ($0.entries[collection], $0.changes[collection] ?? 0) }
        if let cached, now - cached.loaded < lifetime { return cached.resolution }
        let resolution = try await store.activeDeployments(collection: collection).map(Resolution.init(active:))
        state.withLockedValue { state in
            guard (state.changes[collection] ?? 0) == changesBefore else { return }
            state.entries[collection] = Entry(resolution: resolution, loaded: now, revision: nil)
        }
        return resolution
    }

    /// Reads the revision; reloads the deployments when it differs from the cached one. The
    /// revision is read first, so an entry is never older than the revision it is kept under.
    private func readThrough(_ collection: String, store: any CollectionStore) async throws -> Resolution? {
        guard let revision = try await store.revision(collection: collection) else { return nil }
        if let cached = state.withLockedValue({ $0.entries[collection] }), cached.revision == revision {
            return cached.resolution
        }
        let resolution = try await store.activeDeployments(collection: collection).map(Resolution.init(active:))
        state.withLockedValue { state in
            if let current = state.entries[collection]?.revision, current > revision { return }
            state.entries[collection] = Entry(resolution: resolution, loaded: .now, revision: revision)
        }
        return resolution
    }

    /// Forgets a collection after a change made through this server. A read-through entry is
    /// kept: its revision already tells that it is old, and it remains the answer of last resort
    /// while the database cannot be reached.
    func invalidate(_ collection: String) {
        state.withLockedValue { state in
            if state.entries[collection]?.revision == nil { state.entries[collection] = nil }
            state.changes[collection, default: 0] += 1
        }
    }
}
