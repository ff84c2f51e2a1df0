/// The one error type of `MLKitEncryption`.
///
/// Every error has a stable ``Code`` and a message that names the key identifier, when one
/// is known, and the file at fault:
/// `enc.mlkit: wrong key: the model is encrypted with key 5F2E…, but the key given is 9A0B…`.
/// Problems with the model inside an encrypted file, and with reading the file itself, are the
/// core's ``MLKit/MLKitError``, as when a plain model file is loaded.
public struct EncryptionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable category of failure. New codes may be added in later versions, so a `switch`
    /// over ``code`` needs a default.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        /// The words that start the message: `key unavailable`, `wrong key`, ….
        let phrase: String

        private init(_ name: String, _ phrase: String) {
            self.name = name
            self.phrase = phrase
        }

        /// The key could not be had: no key was given, or the key provider failed (the
        /// message gives its reason). Apple's `modelDecryptionKeyFetch`.
        public static let keyUnavailable = Code("keyUnavailable", "key unavailable")
        /// The key's identifier (or cipher) is not the one the model was encrypted with.
        public static let wrongKey = Code("wrongKey", "wrong key")
        /// A chunk failed authentication, or the file is truncated or damaged: it was changed
        /// after encryption, or the key's material is not the material it was sealed with.
        public static let decryptionFailed = Code("decryptionFailed", "decryption failed")
        /// A newer encryption format version, or a cipher this mlkit does not know.
        public static let unsupportedEncryption = Code("unsupportedEncryption", "unsupported encryption")
        /// A key file that cannot be parsed or holds an unusable key.
        public static let invalidKeyFile = Code("invalidKeyFile", "invalid key file")
        /// A file that is not an encrypted model was given where one is needed.
        public static let notEncrypted = Code("notEncrypted", "not an encrypted model")
        /// A file that is already encrypted was given to be encrypted.
        public static let alreadyEncrypted = Code("alreadyEncrypted", "already encrypted")
        /// A key file would be overwritten.
        public static let keyFileExists = Code("keyFileExists", "the key file exists")
        /// A key file or folder that does not exist.
        public static let fileNotFound = Code("fileNotFound", "no such file")
        /// Reading or writing a file failed.
        public static let io = Code("io", "cannot read or write the file")

        /// The code's name, such as `wrongKey`.
        public var description: String { name }
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
