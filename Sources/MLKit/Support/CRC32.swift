/// CRC-32 (IEEE 802.3, the polynomial of zlib and PNG), by slicing eight bytes at a time.
///
/// The model file's checksum: it catches corruption and truncation, not tampering (encrypted
/// files are authenticated by their cipher). The check value of "123456789" is 0xCBF43926.
enum CRC32 {
    /// Eight 256-entry tables, one after the other: `tables[k * 256 + b]` is the CRC of byte `b`
    /// followed by k zero bytes.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            tables[byte] = crc
        }
        for k in 1..<8 {
            for byte in 0..<256 {
                let previous = tables[(k - 1) * 256 + byte]
                tables[k * 256 + byte] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    /// The CRC-32 of `bytes`, continuing from `crc` (0 for a new checksum).
    static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        tables.withUnsafeBufferPointer { table in
            let t = table.baseAddress!
            var crc = ~crc
            var offset = 0
            let count = bytes.count
            while offset + 8 <= count {
                let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
                let low = UInt32(truncatingIfNeeded: word) ^ crc
                let high = UInt32(truncatingIfNeeded: word >> 32)
                crc = t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((low >> 16) & 0xFF)] ^ t[4 * 256 + Int(low >> 24)]
                    ^ t[3 * 256 + Int(high & 0xFF)] ^ t[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ t[256 + Int((high >> 16) & 0xFF)] ^ t[Int(high >> 24)]
                offset += 8
            }
            while offset < count {
                crc = (crc >> 8) ^ t[Int((crc ^ UInt32(bytes[offset])) & 0xFF)]
                offset += 1
            }
            return ~crc
        }
    }
}
