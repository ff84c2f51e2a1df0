import Foundation
import MLKit
import MLKitEncryption

/// What the server learns from a model file's header when it is uploaded.
struct ModelInspection: Sendable, Equatable {
    var formatVersion: Int
    var encrypted: Bool
    var keyIdentifier: String?
    var kind: String?
    var version: String?

    /// Reads and checks a model file. A plain mlkit model, classifier or tagger, is loaded by
    /// the core (magic, version, CRC-32, header and sections). An encrypted one cannot be read without its key,
    /// which the server need not have: its clear header is parsed (magic, version, cipher, key
    /// identifier) and its length checked against the header; its format version is the
    /// encryption format's.
    /// - Throws: ``CollectionServerError`` (unprocessable) with the reason the file is refused.
    static func inspect(fileAt path: String) throws -> ModelInspection {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw CollectionServerError.storage("cannot read the uploaded file: \(error.localizedDescription)")
        }
        if EncryptedModelHeader.isEncrypted(data) { return try inspectEncrypted(data) }
        do {
            // Every kind of model: a text classifier or a word tagger.
            let model = try AnyModel(modelFileData: data, source: "the uploaded file")
            return ModelInspection(formatVersion: model.formatVersion ?? 1, encrypted: false, keyIdentifier: nil,
                                   kind: model.algorithm, version: model.metadata.version)
        } catch let error as MLKitError {
            throw CollectionServerError.unprocessable("not a valid model file: \(error.reason)")
        }
    }

    private static func inspectEncrypted(_ data: Data) throws -> ModelInspection {
        do {
            let header = try EncryptedModelHeader(parsing: data, source: "the uploaded file")
            guard data.count == header.encryptedLength else {
                throw CollectionServerError.unprocessable(
                    "not a valid encrypted model file: it is \(data.count) bytes, its header says \(header.encryptedLength)")
            }
            return ModelInspection(formatVersion: header.formatVersion, encrypted: true, keyIdentifier: header.keyIdentifier,
                                   kind: nil, version: nil)
        } catch let error as EncryptionError {
            throw CollectionServerError.unprocessable("not a valid encrypted model file: \(error.message)")
        }
    }
}
