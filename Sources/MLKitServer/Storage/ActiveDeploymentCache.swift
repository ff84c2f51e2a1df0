import Foundation
import NIOConcurrencyHelpers

/// Keeps each collection's active deployments in memory, so that resolving a collection (the
/// hot path: every device asks) reads no database.
///
/// Every change that goes through this server clears the collection's entry, so one server
/// is always up to date. An entry also expires after ``lifetime``, which bounds how long a
/// change made by another process on the same database (another replica, once a shared store
/// exists) can go unseen.
final class ActiveDeploymentCache: Sendable {
    private struct Entry {
        let resolution: Resolution?
        let loaded: ContinuousClock.Instant
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Counts the changes of each collection, so that a load that overlapped a change is
        /// not kept.
        var changes: [String: Int] = [:]
    }

    private let state = NIOLockedValueBox(State())
    let lifetime: Duration

    init(lifetime: Duration = .seconds(1)) {
        self.lifetime = lifetime
    }

    /// The active deployments of a collection, arranged for resolving (`nil` for an unknown
    /// collection); `load` reads them when they are not cached or have expired.
    func resolution(of collection: String,
                    load: () async throws -> [DeploymentRecord]?) async rethrows -> Resolution? {
        let now = ContinuousClock.now
        let (cached, changesBefore) = state.withLockedValue { ($0.entries[collection], $0.changes[collection] ?? 0) }
        if let cached, now - cached.loaded < lifetime { return cached.resolution }
        let resolution = try await load().map(Resolution.init(active:))
        state.withLockedValue { state in
            guard (state.changes[collection] ?? 0) == changesBefore else { return }
            state.entries[collection] = Entry(resolution: resolution, loaded: now)
        }
        return resolution
    }

    /// Forgets a collection after a change.
    func invalidate(_ collection: String) {
        state.withLockedValue { state in
            state.entries[collection] = nil
            state.changes[collection, default: 0] += 1
        }
    }
}
