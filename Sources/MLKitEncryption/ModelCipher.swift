/// An authenticated cipher that seals model files.
public enum ModelCipher: String, Sendable, Codable, CaseIterable {
    /// AES in Galois/Counter Mode with a 256-bit key: the default, and hardware-accelerated
    /// on x86-64 (AES-NI) and ARMv8.
    case aes256GCM = "AES-256-GCM"
    /// ChaCha20 with a Poly1305 tag (RFC 8439), 256-bit key: fast without AES hardware.
    case chaCha20Poly1305 = "ChaCha20-Poly1305"
    /// AES-GCM with a 128-bit key: the cipher mlkit uses with the keys of Apple's
    /// `.mlmodelkey` files, which hold 128 bits.
    case aes128GCM = "AES-128-GCM"

    /// The size of the key material in bytes.
    public var keySize: Int { self == .aes128GCM ? 16 : 32 }

    /// The byte that names the cipher in an encrypted file's header.
    var headerCode: UInt8 {
        switch self {
        case .aes256GCM: return 1
        case .chaCha20Poly1305: return 2
        case .aes128GCM: return 3
        }
    }

    /// The cipher a header byte names, or `nil` for a byte this mlkit does not know.
    init?(headerCode: UInt8) {
        guard let cipher = Self.allCases.first(where: { $0.headerCode == headerCode }) else { return nil }
        self = cipher
    }
}
