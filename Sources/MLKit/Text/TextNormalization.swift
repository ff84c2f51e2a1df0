import Foundation

/// How token text is normalized before it becomes a feature.
///
/// The settings are saved in the model file with the featurizer, so training and prediction
/// always normalize the same way.
public struct TextNormalization: Sendable, Hashable, Codable {
    /// Lowercase with Unicode's full lowercase mappings (`İ` → `i̇`, `Σ` → `σ`). On by default.
    public var lowercase: Bool
    /// Apply NFKC compatibility folding (`ﬁ` → `fi`, `Ａ` → `A`, `²` → `2`). Off by default.
    public var compatibilityFolding: Bool
    /// Remove diacritics from Latin, Greek and Cyrillic letters (`café` → `cafe`). Off by default.
    /// Marks of other scripts, where they carry vowels or tones, are kept.
    public var diacriticFolding: Bool

    /// Creates normalization settings.
    /// - Parameters:
    ///   - lowercase: Lowercase tokens (default `true`).
    ///   - compatibilityFolding: Apply NFKC folding (default `false`).
    ///   - diacriticFolding: Strip diacritics from Latin, Greek and Cyrillic (default `false`).
    public init(lowercase: Bool = true, compatibilityFolding: Bool = false, diacriticFolding: Bool = false) {
        self.lowercase = lowercase
        self.compatibilityFolding = compatibilityFolding
        self.diacriticFolding = diacriticFolding
    }

    /// Whether any setting changes text, so callers can skip the work.
    var changesText: Bool { lowercase || compatibilityFolding || diacriticFolding }

    /// Calls `body` with each byte of the normalized UTF-8 form of `token`.
    /// - Parameter ascii: Whether the token is known to be all ASCII (the word scanner knows);
    ///   `nil` tests its bytes.
    ///
    /// ASCII tokens are lowercased byte by byte; other tokens are normalized into a buffer on
    /// the stack by one out-of-line call, then streamed to `body`. Only NFKC and diacritic
    /// folding build a temporary string. Nothing here allocates on the heap otherwise.
    @inline(__always)
    func forEachNormalizedByte(of token: UnsafeBufferPointer<UInt8>, ascii: Bool? = nil, _ body: (UInt8) -> Void) {
        if ascii ?? Self.isASCII(token) {
            // Indexed loops: `for byte in token` left a call to the buffer's `makeIterator()` in
            // the featurizer's loops, once per token (3 % of a prediction pass).
            guard let base = token.baseAddress else { return }
            if lowercase {
                for offset in 0..<token.count {
                    let byte = base[offset]
                    body(byte &+ ((byte &- 0x41) < 26 ? 0x20 : 0))
                }
            } else {
                for offset in 0..<token.count { body(base[offset]) }
            }
            return
        }
        if compatibilityFolding || diacriticFolding {
            forEachFoldedByte(of: token, body)
            return
        }
        // Lowercasing grows UTF-8 by at most half (İ → i̇ is 2 → 3 bytes), so 3× is ample. A
        // constant capacity lets the compiler place the buffer on the stack with no runtime check.
        if token.count <= 80 {
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
                let count = writeLowercased(token, into: buffer.baseAddress!)
                for offset in 0..<count { body(buffer[offset]) }
            }
        } else {
            forEachLowercasedByteOfLongToken(token, body)
        }
    }

    /// ``forEachNormalizedByte(of:_:)`` for tokens longer than 80 bytes and for folded text,
    /// with a heap buffer.
    @inline(never)
    private func forEachLowercasedByteOfLongToken(_ token: UnsafeBufferPointer<UInt8>, _ body: (UInt8) -> Void) {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 3 * token.count + 8)
        defer { buffer.deallocate() }
        let count = writeLowercased(token, into: buffer)
        for offset in 0..<count { body(buffer[offset]) }
    }

    /// The slow path for NFKC and diacritic folding, through Foundation.
    @inline(never)
    private func forEachFoldedByte(of token: UnsafeBufferPointer<UInt8>, _ body: (UInt8) -> Void) {
        var text = String(decoding: token, as: UTF8.self)
        if compatibilityFolding { text = text.precomposedStringWithCompatibilityMapping }
        if diacriticFolding { text = Self.foldingDiacritics(text) }
        var utf8 = Array(text.utf8)
        utf8.withUnsafeMutableBufferPointer { folded in
            forEachLowercasedByteOfLongToken(UnsafeBufferPointer(folded), body)
        }
    }

    /// Writes the scalars of `token` to `output`, lowercased if asked, writing `’` as `'` and
    /// dropping default-ignorable format characters (soft hyphen, bidi marks, BOM) but keeping
    /// ZWJ and ZWNJ. `output` needs room for `3 × token.count` bytes.
    /// - Returns: The number of bytes written.
    @inline(never)
    func writeLowercased(_ token: UnsafeBufferPointer<UInt8>, into output: UnsafeMutablePointer<UInt8>) -> Int {
        guard let base = token.baseAddress else { return 0 }
        let lowercaseTable = CaseMapping.basicPlaneTable
        var written = 0
        var index = 0
        while index < token.count {
            let (value, length) = UTF8Decoding.decode(base, at: index, end: token.count)
            defer { index += length }
            if value == UTF8Decoding.invalid {
                written += Self.writeUTF8(0xFFFD, to: output + written)
                continue
            }
            if Self.isIgnorable(value) { continue }
            if value == 0x2019 {  // ’ inside a word is an apostrophe
                output[written] = 0x27
                written += 1
                continue
            }
            let mapped = lowercase && value < 0x10000 ? UInt32(lowercaseTable[Int(value)]) : value
            if mapped == value {
                // Unchanged (the common case, and every ideograph): copy the bytes as they are.
                for offset in 0..<length { output[written + offset] = base[index + offset] }
                written += length
            } else if mapped != 0xFFFF {
                written += Self.writeUTF8(mapped, to: output + written)
            } else {
                CaseMapping.forEachLowercaseScalar(of: value) { written += Self.writeUTF8($0, to: output + written) }
            }
        }
        return written
    }

    /// Whether every byte is ASCII, tested eight bytes at a time.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var offset = 0
        var high: UInt64 = 0
        while offset + 8 <= bytes.count {
            high |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < bytes.count {
            high |= UInt64(base[offset])
            offset += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    static func isIgnorable(_ value: UInt32) -> Bool {
        switch value {
        case 0x00AD, 0x200B, 0x200E, 0x200F, 0x202A...0x202E, 0x2060...0x2064, 0xFEFF: return true
        default: return false
        }
    }

    /// Writes the UTF-8 encoding of a scalar value and returns its length.
    @inline(__always)
    static func writeUTF8(_ value: UInt32, to output: UnsafeMutablePointer<UInt8>) -> Int {
        switch value {
        case ..<0x80:
            output[0] = UInt8(value)
            return 1
        case ..<0x800:
            output[0] = UInt8(0xC0 | (value >> 6))
            output[1] = UInt8(0x80 | (value & 0x3F))
            return 2
        case ..<0x10000:
            output[0] = UInt8(0xE0 | (value >> 12))
            output[1] = UInt8(0x80 | ((value >> 6) & 0x3F))
            output[2] = UInt8(0x80 | (value & 0x3F))
            return 3
        default:
            output[0] = UInt8(0xF0 | (value >> 18))
            output[1] = UInt8(0x80 | ((value >> 12) & 0x3F))
            output[2] = UInt8(0x80 | ((value >> 6) & 0x3F))
            output[3] = UInt8(0x80 | (value & 0x3F))
            return 4
        }
    }

    /// Removes combining marks that follow a Latin, Greek or Cyrillic base letter.
    static func foldingDiacritics(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        var baseIsFoldable = false
        for scalar in text.decomposedStringWithCanonicalMapping.unicodeScalars {
            let category = scalar.properties.generalCategory
            if category == .nonspacingMark || category == .enclosingMark || category == .spacingMark {
                if baseIsFoldable { continue }
            } else {
                // Latin, Greek and Cyrillic blocks, including their extensions.
                let value = scalar.value
                baseIsFoldable = value < 0x0530 || (0x1D00...0x1FFF).contains(value)
                    || (0x2C60...0x2C7F).contains(value) || (0xA640...0xA69F).contains(value)
                    || (0xA720...0xA7FF).contains(value)
            }
            result.append(scalar)
        }
        return String(result).precomposedStringWithCanonicalMapping
    }
}

/// Unicode lowercase mappings, with a table for the BMP built on first use.
enum CaseMapping {
    /// The lowercase of each BMP scalar, or 0xFFFF where the mapping is longer than one scalar;
    /// built on first use, and immortal so that hot loops read it without reference counting.
    nonisolated(unsafe) static let basicPlaneTable: UnsafePointer<UInt16> = {
        let table = UnsafeMutablePointer<UInt16>.allocate(capacity: 0x10000)
        for value in 0..<0x10000 {
            table[value] = UInt16(value)
            guard let scalar = Unicode.Scalar(UInt32(value)), scalar.properties.changesWhenLowercased else { continue }
            let mapping = scalar.properties.lowercaseMapping.unicodeScalars
            if mapping.count == 1, let only = mapping.first, only.value < 0xFFFF {
                table[value] = UInt16(only.value)
            } else {
                table[value] = 0xFFFF
            }
        }
        return UnsafePointer(table)
    }()

    /// Calls `body` with each scalar of the full lowercase mapping of `value`.
    @inline(__always)
    static func forEachLowercaseScalar(of value: UInt32, _ body: (UInt32) -> Void) {
        if value < 0x80 {
            body(value &+ ((value &- 0x41) < 26 ? 0x20 : 0))
            return
        }
        if value < 0x10000 {
            let mapped = basicPlaneTable[Int(value)]
            if mapped != 0xFFFF || value == 0xFFFF { body(UInt32(mapped)); return }
        }
        guard let scalar = Unicode.Scalar(value), scalar.properties.changesWhenLowercased else {
            body(value)
            return
        }
        for lower in scalar.properties.lowercaseMapping.unicodeScalars { body(lower.value) }
    }
}
