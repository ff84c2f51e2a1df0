/// The active deployments of a collection, arranged for resolving: the targeted ones newest
/// activation first, and the default one.
///
/// A device gets, among the targeted deployments, the first whose rules match its context and
/// whose rollout includes its installation; otherwise the default deployment.
struct Resolution: Sendable {
    /// Active targeted deployments, newest activation first.
    let targeted: [DeploymentRecord]
    /// The default deployment, if there is one.
    let fallback: DeploymentRecord?

    /// Arranges a collection's active deployments (in any order).
    init(active: [DeploymentRecord]) {
        let active = active.filter { $0.status == .active }
        targeted = active.filter { !$0.isDefault }.sorted { ($0.activationSequence ?? 0) > ($1.activationSequence ?? 0) }
        fallback = active.first { $0.isDefault }
    }

    /// The deployment for `context`, or `nil` when none resolves.
    func resolve(_ context: DeviceContext) -> DeploymentRecord? {
        for deployment in targeted where deployment.targeting.matches(context) {
            if Rollout.includes(percentage: deployment.rolloutPercentage, collection: deployment.collection,
                                deploymentID: deployment.deploymentID, installationID: context.installationID) {
                return deployment
            }
        }
        return fallback
    }
}
