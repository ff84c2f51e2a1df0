import Foundation
import MLKit
@testable import MLKitEncryption
import Testing
import TestSupport

/// Models, keys and folders shared by the encryption tests.
enum Fixtures {
    static let repositoryRoot = ChildProcess.repositoryRoot
    /// The chapter's key file, for tests that carry `.needsSeedArtifacts("SentimentPolarity.mlmodelkey")`.
    static let appleKeyFile = SeedArtifacts.url("SentimentPolarity.mlmodelkey")
    static let sentimentModel = repositoryRoot.appendingPathComponent("trained/sentiment.mlkit")

    /// Texts to compare predictions on.
    static let texts = ["Snap users drop for first time, but revenue climbs", "President Donald Trump is approving a new law",
                        "We took an exclusive ride in a flying car", "The senate votes on the budget"]

    /// A model of the given kind, trained on the project's 40 headlines.
    static func trainedModel(_ algorithm: TextClassifierParameters.Algorithm) throws -> TextClassifier {
        try TextClassifier(trainingData: try DatasetReader().read(contentsOf: ProjectFixtures.headlines),
                           parameters: .init(algorithm: algorithm, seed: 3, threads: 1))
    }

    /// The bytes of a small trained model file, trained once.
    static let smallModelFile: Data = {
        guard let model = try? trainedModel(.naiveBayes) else { return Data() }
        return model.modelFileData()
    }()

    /// A key with known material, read from a key file as a user's key would be.
    static func knownKey(_ cipher: ModelCipher = .aes256GCM, identifier: String = "00000000-0000-4000-8000-000000000001")
        throws -> ModelKey {
        let material = cipher.keySize == 16 ? Data(16..<32) : Data(0..<32)
        let json = """
            {"algorithm": "\(cipher.rawValue)", "format": "mlkit-key", "identifier": "\(identifier)",
             "key": "\(material.base64EncodedString())", "version": 1}
            """
        return try ModelKey(keyFileData: Data(json.utf8), source: "known")
    }

    /// Each entry of a folder, and the folder itself, with its size and modification time.
    static func listing(of folder: URL) throws -> [String: String] {
        let manager = FileManager.default
        var result: [String: String] = [:]
        for name in try manager.contentsOfDirectory(atPath: folder.path) + [""] {
            let attributes = try manager.attributesOfItem(atPath: folder.appendingPathComponent(name).path)
            let date = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? -1
            result[name] = "\(attributes[.size] as? Int ?? -1) bytes, modified \(date)"
        }
        return result
    }

    /// A fresh temporary folder; the caller removes it.
    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mlkit-enc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Runs `body`, expecting an ``EncryptionError``, and returns it.
    static func encryptionError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> EncryptionError? {
        do {
            try body()
            Issue.record("expected an EncryptionError, but nothing was thrown", sourceLocation: sourceLocation)
        } catch let error as EncryptionError {
            return error
        } catch {
            Issue.record("expected an EncryptionError, got \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }
}
