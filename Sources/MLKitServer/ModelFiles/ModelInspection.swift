import Foundation
import MLKit

/// What the server learns from a model file's header when it is uploaded.
struct ModelInspection: Sendable, Equatable {
    var formatVersion: Int
    var encrypted: Bool
    var keyIdentifier: String?
    var kind: String?
    var version: String?

    /// Reads and checks a model file: a plain mlkit model is loaded by the core (magic,
    /// version, CRC-32, header and sections).
    /// - Throws: ``CollectionServerError`` (unprocessable) with the reason the file is refused.
    static func inspect(fileAt path: String) throws -> ModelInspection {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw CollectionServerError.storage("cannot read the uploaded file: \(error.localizedDescription)")
        }
        do {
            let classifier = try TextClassifier(modelFileData: data, source: "the uploaded file")
            return ModelInspection(formatVersion: classifier.formatVersion ?? 1, encrypted: false, keyIdentifier: nil,
                                   kind: classifier.trainingSummary?.algorithm.rawValue,
                                   version: classifier.metadata.version)
        } catch let error as MLKitError {
            throw CollectionServerError.unprocessable("not a valid model file: \(error.reason)")
        }
    }
}
