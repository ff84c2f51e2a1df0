import Foundation

/// The clear `encryptionInfo/coremldata.bin` of an encrypted model archive, which names the key.
///
/// It has the 96-byte header of the archive's encrypted files (the magic `LMNE`, the payload's
/// length as a u64 at 0x08, a page count of 0 at 0x10), then, in clear, a u64 length and the
/// key identifier in UTF-8.
struct ArchiveEncryptionInfo {
    /// The magic at the start of an encrypted archive's files.
    static let magic = Array("LMNE".utf8)
    /// The length of the header.
    static let headerLength = 0x60

    let keyIdentifier: String

    init(_ bytes: Data) throws {
        let entry = ModelArchive.encryptionInfoEntry
        let reader = ByteReader(bytes, entry: entry)
        try reader.require(Self.headerLength, "its header")
        guard bytes.prefix(4).elementsEqual(Self.magic) else {
            throw CoreMLError(.malformedModel, "entry '\(entry)' does not start with LMNE")
        }
        let payload = try reader.u64(at: 0x08, "its length")
        guard payload == UInt64(bytes.count - Self.headerLength) else {
            throw CoreMLError(.malformedModel, "entry '\(entry)' states \(payload) bytes after its header, but "
                              + "\(bytes.count - Self.headerLength) follow")
        }
        let length = try reader.length(at: Self.headerLength, "the key identifier")
        let start = bytes.startIndex + Self.headerLength + 8
        guard length > 0, length <= 255,
              let identifier = String(bytes: bytes[start..<(start + length)], encoding: .utf8) else {
            throw CoreMLError(.malformedModel, "entry '\(entry)': the key identifier is not 1 to 255 bytes of UTF-8")
        }
        keyIdentifier = identifier
    }
}
