/// Decodes one scalar from UTF-8, validating as it goes.
///
/// Invalid input never traps: an ill-formed or truncated sequence decodes as
/// ``invalid`` with a length of one byte, so scanners skip it like a separator and resume at
/// the next byte, as the Unicode standard's "maximal subpart" practice recommends.
enum UTF8Decoding {
    /// The value returned for a byte that does not start a well-formed sequence.
    static let invalid: UInt32 = 0xFFFF_FFFF

    /// Decodes the scalar that starts at `index`.
    /// - Returns: The scalar value (or ``invalid``) and the number of bytes consumed.
    @inline(__always)
    static func decode(_ bytes: UnsafePointer<UInt8>, at index: Int, end: Int) -> (value: UInt32, length: Int) {
        let lead = bytes[index]
        if lead < 0x80 { return (UInt32(lead), 1) }
        return decodeMultibyte(bytes, at: index, end: end, lead: lead)
    }

    static func decodeMultibyte(_ bytes: UnsafePointer<UInt8>, at index: Int, end: Int,
                                lead: UInt8) -> (value: UInt32, length: Int) {
        @inline(__always) func continuation(_ offset: Int, _ low: UInt8 = 0x80, _ high: UInt8 = 0xBF) -> UInt32? {
            let position = index + offset
            guard position < end else { return nil }
            let byte = bytes[position]
            return (byte >= low && byte <= high) ? UInt32(byte & 0x3F) : nil
        }
        switch lead {
        case 0xC2...0xDF:
            guard let b1 = continuation(1) else { break }
            return (UInt32(lead & 0x1F) << 6 | b1, 2)
        case 0xE0...0xEF:
            let low: UInt8 = lead == 0xE0 ? 0xA0 : 0x80
            let high: UInt8 = lead == 0xED ? 0x9F : 0xBF  // no surrogates
            guard let b1 = continuation(1, low, high), let b2 = continuation(2) else { break }
            return (UInt32(lead & 0x0F) << 12 | b1 << 6 | b2, 3)
        case 0xF0...0xF4:
            let low: UInt8 = lead == 0xF0 ? 0x90 : 0x80
            let high: UInt8 = lead == 0xF4 ? 0x8F : 0xBF  // nothing above U+10FFFF
            guard let b1 = continuation(1, low, high), let b2 = continuation(2), let b3 = continuation(3) else { break }
            return (UInt32(lead & 0x07) << 18 | b1 << 12 | b2 << 6 | b3, 4)
        default:
            break
        }
        return (invalid, 1)
    }

    /// The offset of the first byte that is not part of well-formed UTF-8, or `nil`.
    static func firstInvalidOffset(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var index = 0
        let end = bytes.count
        while index < end {
            if base[index] < 0x80 { index += 1; continue }
            let (value, length) = decode(base, at: index, end: end)
            if value == invalid { return index }
            index += length
        }
        return nil
    }
}
