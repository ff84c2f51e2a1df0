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
        let deployments: [DeploymentRecord]?
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

    /// The active deployments of a collection (`nil` for an unknown one), loaded with `load`
    /// when not cached or expired.
    func deployments(of collection: String,
                     load: () async throws -> [DeploymentRecord]?) async rethrows -> [DeploymentRecord]? {
        let now = ContinuousClock.now
        let (cached, changesBefore) = state.withLockedValue { ($0.entries[collection], $0.changes[collection] ?? 0) }
        if let cached, now - cached.loaded < lifetime { return cached.deployments }
        let deployments = try await load()
        state.withLockedValue { state in
            guard (state.changes[collection] ?? 0) == changesBefore else { return }
            state.entries[collection] = Entry(deployments: deployments, loaded: now)
        }
        return deployments
    }

    /// Forgets a collection after a change.
    func invalidate(_ collection: String) {
        state.withLockedValue { state in
            state.entries[collection] = nil
            state.changes[collection, default: 0] += 1
        }
    }
}
