import Foundation
import TestSupport

/// The reference chapter's files that the Core ML tests read, when they are beside the checkout.
enum Reference {
    static let model = "SentimentPolarity.mlmodel"
    static let archive = "SentimentPolarity.mlarchive"
    static let encryptedArchive = "SentimentPolarity-encrypted.mlarchive"
    static let key = "SentimentPolarity.mlmodelkey"
    /// The key identifier of the encrypted archive and of the key file.
    static let keyIdentifier = "DECFAB02-AF49-47DB-A794-508A94E0D633"

    /// The acceptance figures, computed from the model's own weights: P(Pos) for the first text,
    /// P(Neg) for the second.
    static let loveRainbows = (text: "I love rainbows", label: "Pos", probability: 0.5301493040784889)
    static let sadCloudy = (text: "I am sad on cloudy days", label: "Neg", probability: 0.5021956429022323)
}

/// A fresh temporary folder, removed by the caller.
func temporaryFolder() throws -> URL {
    try ChildProcess.temporaryFolder("coreml")
}
