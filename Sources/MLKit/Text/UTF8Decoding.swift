/// Decodes one scalar from UTF-8, validating as it goes.
///
/// Invalid input never traps: an ill-formed or truncated sequence decodes as
/// ``invalid`` with a length of one byte, so scanners skip it like a separator and resume at
/// the next byte, as the Unicode standard's "maximal subpart" practice recommends.
@usableFromInline
enum UTF8Decoding {
    /// The value returned for a byte that does not start a well-formed sequence.
    @usableFromInline static let invalid: UInt32 = 0xFFFF_FFFF

    /// Decodes the scalar that starts at `index`.
    /// - Returns: The scalar value (or ``invalid``) and the number of bytes consumed.
    @inlinable @inline(__always)
    static func decode(_ bytes: UnsafePointer<UInt8>, at index: Int, end: Int) -> (value: UInt32, length: Int) {
        let lead = bytes[index]
        if lead < 0x80 { return (UInt32(lead), 1) }
        return decodeMultibyte(bytes, at: index, end: end, lead: lead)
    }

    @inlinable
    static func decodeMultibyte(_ bytes: UnsafePointer<UInt8>, at index: Int, end: Int,
                                lead: UInt8) -> (value: UInt32, length: Int) {
        let available = end - index
        if lead >= 0xC2 && lead <= 0xDF {
            guard available >= 2 else { return (invalid, 1) }
            let b1 = bytes[index + 1]
            guard b1 & 0xC0 == 0x80 else { return (invalid, 1) }
            return (UInt32(lead & 0x1F) << 6 | UInt32(b1 & 0x3F), 2)
        }
        if lead >= 0xE0 && lead <= 0xEF {
            guard available >= 3 else { return (invalid, 1) }
            let b1 = bytes[index + 1], b2 = bytes[index + 2]
            // E0 needs A0...BF next (no overlong forms); ED needs 80...9F (no surrogates).
            let low: UInt8 = lead == 0xE0 ? 0xA0 : 0x80
            let high: UInt8 = lead == 0xED ? 0x9F : 0xBF
            guard b1 >= low && b1 <= high && b2 & 0xC0 == 0x80 else { return (invalid, 1) }
            return (UInt32(lead & 0x0F) << 12 | UInt32(b1 & 0x3F) << 6 | UInt32(b2 & 0x3F), 3)
        }
        if lead >= 0xF0 && lead <= 0xF4 {
            guard available >= 4 else { return (invalid, 1) }
            let b1 = bytes[index + 1], b2 = bytes[index + 2], b3 = bytes[index + 3]
            // F0 needs 90...BF next (no overlong forms); F4 needs 80...8F (nothing past U+10FFFF).
            let low: UInt8 = lead == 0xF0 ? 0x90 : 0x80
            let high: UInt8 = lead == 0xF4 ? 0x8F : 0xBF
            guard b1 >= low && b1 <= high && b2 & 0xC0 == 0x80 && b3 & 0xC0 == 0x80 else { return (invalid, 1) }
            return (UInt32(lead & 0x07) << 18 | UInt32(b1 & 0x3F) << 12 | UInt32(b2 & 0x3F) << 6 | UInt32(b3 & 0x3F), 4)
        }
        return (invalid, 1)
    }
}
