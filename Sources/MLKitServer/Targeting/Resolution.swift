/// Picks the deployment a device gets: among the active targeted deployments, newest
/// activation first, the first whose rules match the context and whose rollout includes the
/// installation; otherwise the default deployment.
enum Resolution {
    /// The deployment for `context`, or `nil` when none resolves.
    /// - Parameter active: The collection's active deployments, in any order.
    static func resolve(_ context: DeviceContext, among active: [DeploymentRecord]) -> DeploymentRecord? {
        let targeted = active.filter { $0.status == .active && !$0.isDefault }
            .sorted { ($0.activationSequence ?? 0) > ($1.activationSequence ?? 0) }
        for deployment in targeted where deployment.targeting.matches(context) {
            if Rollout.includes(percentage: deployment.rolloutPercentage, collection: deployment.collection,
                                deploymentID: deployment.deploymentID, installationID: context.installationID) {
                return deployment
            }
        }
        return active.first { $0.status == .active && $0.isDefault }
    }
}
