public import Foundation

/// Gives any bytes a valid model-file footer, so that a mutated file gets past the checksum
/// and reaches the decoder behind it (`docs/model-format.md`, Layout: the last 16 bytes are the
/// file's length, the CRC-32 of everything before the CRC, and `MEND`).
public enum ModelFileSeal {
    /// The size of a model file's footer.
    public static let footerSize = 16

    /// `data` with its last 16 bytes replaced by the footer a writer would put there: the
    /// length, the CRC-32 and the footer magic. Shorter inputs come back unchanged.
    public static func resealed(_ data: Data) -> Data {
        guard data.count >= 24 + footerSize else { return data }
        var bytes = [UInt8](data)
        let footer = bytes.count - footerSize
        withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { bytes.replaceSubrange(footer..<(footer + 8), with: $0) }
        let crc = CRC32.checksum(bytes[0..<(footer + 8)])
        withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange((footer + 8)..<(footer + 12), with: $0) }
        bytes.replaceSubrange((footer + 12)..<bytes.count, with: Array("MEND".utf8))
        return Data(bytes)
    }
}

/// CRC-32 (IEEE 802.3, as zlib computes it), written here from the polynomial so the harnesses
/// do not lean on the code they test.
public enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { byte in
        var crc = UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        return crc
    }

    /// The CRC-32 of `bytes`.
    public static func checksum<C: Collection<UInt8>>(_ bytes: C) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return ~crc
    }
}
