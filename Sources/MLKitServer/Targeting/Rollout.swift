import Crypto

/// A percentage rollout: a stable hash of the installation ID places each device in one of
/// 10,000 buckets, so that a device stays in or out of a deployment for as long as it lasts.
enum Rollout {
    /// The number of buckets: a rollout percentage has two decimals of resolution.
    static let buckets: UInt64 = 10_000

    /// The bucket of an installation for a deployment:
    /// `UInt64(bigEndian: first 8 bytes of SHA-256("<collection>:<deploymentID>:<installationID>")) % 10000`.
    static func bucket(collection: String, deploymentID: String, installationID: String) -> UInt64 {
        let digest = SHA256.hash(data: Array("\(collection):\(deploymentID):\(installationID)".utf8))
        let prefix = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return prefix % buckets
    }

    /// Whether a device is in a rollout of `percentage` (0 to 100). A device without an
    /// installation ID is only in full rollouts.
    static func includes(percentage: Double, collection: String, deploymentID: String, installationID: String?) -> Bool {
        if percentage >= 100 { return true }
        guard let installationID else { return false }
        let bucket = bucket(collection: collection, deploymentID: deploymentID, installationID: installationID)
        return Double(bucket) < percentage * 100
    }
}
