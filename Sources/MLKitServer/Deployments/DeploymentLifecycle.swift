import Foundation

/// The rules for activating and rolling back deployments, apart from any storage: a store
/// loads a collection's deployments, asks for the changes, and writes them in one transaction.
enum DeploymentLifecycle {
    /// A change of one deployment's status.
    struct Change: Sendable, Equatable {
        var deploymentID: String
        var status: DeploymentRecord.Status
        /// Set when the deployment becomes active.
        var activationSequence: Int?
    }

    /// The changes that activate `target`. A default deployment becomes *the* default and the
    /// previous one is superseded; a targeted one becomes active beside the others.
    /// - Returns: No changes when the target is already active.
    static func activate(_ target: DeploymentRecord, among deployments: [DeploymentRecord]) -> [Change] {
        guard target.status != .active else { return [] }
        var changes: [Change] = []
        if target.isDefault {
            for current in deployments where current.isDefault && current.status == .active && current.deploymentID != target.deploymentID {
                changes.append(Change(deploymentID: current.deploymentID, status: .superseded))
            }
        }
        changes.append(Change(deploymentID: target.deploymentID, status: .active,
                              activationSequence: nextActivationSequence(deployments)))
        return changes
    }

    /// The changes that roll the default deployment back: the current default becomes
    /// `rolledBack` and `target` (or, without one, the default deployment most recently
    /// superseded) becomes the default again.
    /// - Throws: ``CollectionServerError`` with status 409 when there is nothing to roll back
    ///   from or to, or 404 for an unknown target.
    static func rollback(to targetID: String?, among deployments: [DeploymentRecord], collection: String) throws -> [Change] {
        guard let current = deployments.first(where: { $0.isDefault && $0.status == .active }) else {
            throw CollectionServerError.conflict("collection '\(collection)' has no default deployment to roll back")
        }
        let target: DeploymentRecord
        if let targetID {
            guard let named = deployments.first(where: { $0.deploymentID == targetID }) else {
                throw CollectionServerError.notFound("collection '\(collection)' has no deployment '\(targetID)'")
            }
            guard named.isDefault else {
                throw CollectionServerError.conflict(
                    "deployment '\(targetID)' is targeted; rollback re-activates an earlier default deployment")
            }
            guard named.deploymentID != current.deploymentID else {
                throw CollectionServerError.conflict("deployment '\(targetID)' is already the default deployment")
            }
            target = named
        } else {
            let earlier = deployments.filter { $0.isDefault && $0.status == .superseded }
            guard let latest = earlier.max(by: { ($0.activationSequence ?? 0) < ($1.activationSequence ?? 0) }) else {
                throw CollectionServerError.conflict(
                    "collection '\(collection)' has no earlier default deployment to roll back to")
            }
            target = latest
        }
        return [Change(deploymentID: current.deploymentID, status: .rolledBack),
                Change(deploymentID: target.deploymentID, status: .active,
                       activationSequence: nextActivationSequence(deployments))]
    }

    private static func nextActivationSequence(_ deployments: [DeploymentRecord]) -> Int {
        (deployments.compactMap(\.activationSequence).max() ?? 0) + 1
    }
}
