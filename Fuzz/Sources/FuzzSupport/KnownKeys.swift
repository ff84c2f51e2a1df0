public import Foundation
public import MLKitEncryption

/// Keys with known material, one per cipher, so that a harness can seal what it mutated and
/// the decoder behind the authentication sees it.
public enum KnownKeys {
    /// The identifier every known key carries.
    public static let identifier = "00000000-0000-4000-8000-00000000f022"

    /// The key file (mlkit's JSON) of the known key for `cipher`: bytes 0, 1, 2, … as material.
    public static func keyFile(_ cipher: ModelCipher) -> Data {
        let material = Data((0..<cipher.keySize).map { UInt8($0) })
        return Data("""
            {"algorithm": "\(cipher.rawValue)", "format": "mlkit-key", "identifier": "\(identifier)",
             "key": "\(material.base64EncodedString())", "version": 1}
            """.utf8)
    }

    /// The known key for `cipher`.
    public static func key(_ cipher: ModelCipher) -> ModelKey {
        do {
            return try ModelKey(keyFileData: keyFile(cipher), source: "known key")
        } catch {
            preconditionFailure("the known key file does not load: \(error)")
        }
    }

    /// The known keys, in the order of ``MLKitEncryption/ModelCipher/allCases``.
    public static let all: [ModelKey] = ModelCipher.allCases.map(key)
}
