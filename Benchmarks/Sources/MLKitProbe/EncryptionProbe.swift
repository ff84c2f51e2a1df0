import Foundation
import MLKit
import MLKitEncryption

/// The load time of the bundled sentiment model encrypted, against the same model plain, in
/// the same run: the rounds alternate between the two, and each figure is the fastest round
/// in CPU seconds of this thread. Also the speed of decryption alone.
func encryptionProbe(root: URL) throws {
    let plainURL = root.appendingPathComponent("trained/sentiment.mlkit")
    let plainBytes = try Data(contentsOf: plainURL)
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mlkit-probe-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    print("")
    for cipher in [ModelCipher.aes256GCM, .chaCha20Poly1305] {
        let key = ModelKey.generate(cipher: cipher)
        let encryptedURL = folder.appendingPathComponent("sentiment-\(UUID().uuidString).mlkit")
        let encrypted = try ModelEncryption.encrypt(plainBytes, with: key)
        try encrypted.write(to: encryptedURL)
        func seconds(_ body: () throws -> TextClassifier) rethrows -> Double {
            let start = threadCPUTime()
            let classifier = try body()
            let elapsed = threadCPUTime() - start
            precondition(classifier.predictedLabel(for: "I love rainbows") == "positive")
            return elapsed
        }
        var plain = Double.infinity, sealed = Double.infinity, decryption = Double.infinity
        for _ in 0..<20 {
            plain = min(plain, try seconds { try TextClassifier(contentsOf: plainURL) })
            sealed = min(sealed, try seconds { try TextClassifier(contentsOf: encryptedURL, key: key) })
            let start = threadCPUTime()
            _ = try ModelEncryption.decrypt(encrypted, with: key)
            decryption = min(decryption, threadCPUTime() - start)
        }
        let name = "load sentiment.mlkit, \(cipher.rawValue)"
        print(name.padding(toLength: 44, withPad: " ", startingAt: 0)
              + String(format: "%9.2f ms   plain %.2f ms, ratio %.2f×", sealed * 1e3, plain * 1e3, sealed / plain))
        print("  decryption alone".padding(toLength: 44, withPad: " ", startingAt: 0)
              + String(format: "%9.2f GB/s (%.2f ms)", Double(encrypted.count) / decryption / 1e9, decryption * 1e3))
    }
}
