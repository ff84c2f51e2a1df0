import Crypto
import Foundation
import MLKitCollections

/// What clients under load saw, access by access: the load tests' shared bookkeeping.
struct LoadTally: Sendable {
    var accesses = 0, mixed = 0, stale = 0
    var lastSucceeded = false
    var deployments: [String: Int] = [:]
    /// Errors by code, for the tests in which some are expected and retried.
    var errors: [String: Int] = [:]

    /// Counts one access: its deployment, whether it fell back to the cache, and whether any of
    /// its files is not the SHA-256 that `expected` gives for its deployment, or a model is missing
    /// or extra (the collection holds models `x` and `y`).
    mutating func record(_ collection: ModelCollection, expected: [String: [String: String]]) throws {
        deployments[collection.deploymentID, default: 0] += 1
        if collection.isStale { stale += 1 }
        let want = expected[collection.deploymentID]
        for (identifier, entry) in collection.entries {
            let data = try Data(contentsOf: entry.modelURL)
            if want?[identifier] != Self.hex(SHA256.hash(data: data)) { mixed += 1 }
        }
        if Set(collection.entries.keys) != ["x", "y"] { mixed += 1 }
    }

    mutating func add(_ other: LoadTally) {
        accesses += other.accesses
        mixed += other.mixed
        stale += other.stale
        deployments.merge(other.deployments, uniquingKeysWith: +)
        errors.merge(other.errors, uniquingKeysWith: +)
    }

    static func hex(_ digest: SHA256.Digest) -> String { digest.map { String(format: "%02x", $0) }.joined() }
}
