/// The one error type of `MLKitEncryption`.
///
/// Every error has a stable ``Code`` and a message that names the key identifier, when one
/// is known, and the file at fault:
/// `enc.mlkit: wrong key: the model is encrypted with key 5F2E…, but the key given is 9A0B…`.
/// Problems with the model inside an encrypted file, and with reading the file itself, are the
/// core's ``MLKit/MLKitError``, as when a plain model file is loaded.
public struct EncryptionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable category of failure.
    public enum Code: String, Sendable, CaseIterable {
        /// The key could not be had: no key was given, or the key provider failed (the
        /// message gives its reason). Apple's `modelDecryptionKeyFetch`.
        case keyUnavailable
        /// The key's identifier (or cipher) is not the one the model was encrypted with.
        case wrongKey
        /// A chunk failed authentication, or the file is truncated or damaged: it was changed
        /// after encryption, or the key's material is not the material it was sealed with.
        case decryptionFailed
        /// A newer encryption format version, or a cipher this mlkit does not know.
        case unsupportedEncryption
        /// A key file that cannot be parsed or holds an unusable key.
        case invalidKeyFile
        /// A file that is not an encrypted model was given where one is needed.
        case notEncrypted
        /// A file that is already encrypted was given to be encrypted.
        case alreadyEncrypted
        /// A key file would be overwritten.
        case keyFileExists
        /// A key file or folder that does not exist.
        case fileNotFound
        /// Reading or writing a file failed.
        case io

        /// The words that start the message: `key unavailable`, `wrong key`, ….
        var phrase: String {
            switch self {
            case .keyUnavailable: return "key unavailable"
            case .wrongKey: return "wrong key"
            case .decryptionFailed: return "decryption failed"
            case .unsupportedEncryption: return "unsupported encryption"
            case .invalidKeyFile: return "invalid key file"
            case .notEncrypted: return "not an encrypted model"
            case .alreadyEncrypted: return "already encrypted"
            case .keyFileExists: return "the key file exists"
            case .fileNotFound: return "no such file"
            case .io: return "cannot read or write the file"
            }
        }
    }

    /// The category of failure.
    public let code: Code
    /// The identifier of the key concerned, when one is known.
    public let keyIdentifier: String?
    /// The reason, without the file and the code's phrase; it names the key identifier.
    public let message: String
    /// The file at fault (a model or key file), as the caller named it.
    public let file: String?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The category of failure.
    ///   - message: The reason, naming the key identifier when there is one.
    ///   - keyIdentifier: The key concerned.
    ///   - file: The file at fault.
    public init(_ code: Code, _ message: String, keyIdentifier: String? = nil, file: String? = nil) {
        self.code = code
        self.message = message
        self.keyIdentifier = keyIdentifier
        self.file = file
    }

    /// The full message: `file: phrase: reason`, for example
    /// `enc.mlkit: key unavailable: the model is encrypted with key 5F2E… and no key was given`.
    public var description: String {
        (file.map { "\($0): " } ?? "") + "\(code.phrase): \(message)"
    }

    /// A copy naming `file`, unless it already names one.
    func inFile(_ file: String?) -> EncryptionError {
        EncryptionError(code, message, keyIdentifier: keyIdentifier, file: self.file ?? file)
    }
}
