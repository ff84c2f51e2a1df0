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
    ///
    /// ASCII tokens are lowercased byte by byte with no allocation; other tokens go through
    /// a per-scalar table; only NFKC and diacritic folding build a temporary string.
    @inline(__always)
    func forEachNormalizedByte(of token: UnsafeBufferPointer<UInt8>, _ body: (UInt8) -> Void) {
        var allASCII = true
        for byte in token where byte >= 0x80 { allASCII = false; break }
        if allASCII {
            if lowercase {
                for byte in token { body(byte &+ ((byte &- 0x41) < 26 ? 0x20 : 0)) }
            } else {
                for byte in token { body(byte) }
            }
            return
        }
        forEachNormalizedByteSlow(of: token, body)
    }

    func forEachNormalizedByteSlow(of token: UnsafeBufferPointer<UInt8>, _ body: (UInt8) -> Void) {
        if compatibilityFolding || diacriticFolding {
            var text = String(decoding: token, as: UTF8.self)
            if compatibilityFolding { text = text.precomposedStringWithCompatibilityMapping }
            if diacriticFolding { text = Self.foldingDiacritics(text) }
            var utf8 = Array(text.utf8)
            utf8.withUnsafeMutableBufferPointer { folded in
                emitLowercased(UnsafeBufferPointer(folded), body)
            }
        } else {
            emitLowercased(token, body)
        }
    }

    /// Emits the scalars of `token`, lowercased if asked, writing `’` as `'` and dropping
    /// default-ignorable format characters (soft hyphen, bidi marks, BOM) but keeping ZWJ and ZWNJ.
    private func emitLowercased(_ token: UnsafeBufferPointer<UInt8>, _ body: (UInt8) -> Void) {
        guard let base = token.baseAddress else { return }
        var index = 0
        while index < token.count {
            let (value, length) = UTF8Decoding.decode(base, at: index, end: token.count)
            index += length
            if value == UTF8Decoding.invalid { Self.emitUTF8(0xFFFD, body); continue }
            if Self.isIgnorable(value) { continue }
            if value == 0x2019 { body(0x27); continue }  // ’ inside a word is an apostrophe
            guard lowercase else { Self.emitUTF8(value, body); continue }
            CaseMapping.forEachLowercaseScalar(of: value) { Self.emitUTF8($0, body) }
        }
    }

    static func isIgnorable(_ value: UInt32) -> Bool {
        switch value {
        case 0x00AD, 0x200B, 0x200E, 0x200F, 0x202A...0x202E, 0x2060...0x2064, 0xFEFF: return true
        default: return false
        }
    }

    @inline(__always)
    static func emitUTF8(_ value: UInt32, _ body: (UInt8) -> Void) {
        switch value {
        case ..<0x80:
            body(UInt8(value))
        case ..<0x800:
            body(UInt8(0xC0 | (value >> 6)))
            body(UInt8(0x80 | (value & 0x3F)))
        case ..<0x10000:
            body(UInt8(0xE0 | (value >> 12)))
            body(UInt8(0x80 | ((value >> 6) & 0x3F)))
            body(UInt8(0x80 | (value & 0x3F)))
        default:
            body(UInt8(0xF0 | (value >> 18)))
            body(UInt8(0x80 | ((value >> 12) & 0x3F)))
            body(UInt8(0x80 | ((value >> 6) & 0x3F)))
            body(UInt8(0x80 | (value & 0x3F)))
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
    /// The lowercase of each BMP scalar, or 0xFFFF where the mapping is longer than one scalar.
    static let basicPlane: [UInt16] = (0..<0x10000).map { value -> UInt16 in
        guard let scalar = Unicode.Scalar(UInt32(value)), scalar.properties.changesWhenLowercased else {
            return UInt16(value)
        }
        let mapping = scalar.properties.lowercaseMapping.unicodeScalars
        if mapping.count == 1, let only = mapping.first, only.value < 0xFFFF { return UInt16(only.value) }
        return 0xFFFF
    }

    /// Calls `body` with each scalar of the full lowercase mapping of `value`.
    @inline(__always)
    static func forEachLowercaseScalar(of value: UInt32, _ body: (UInt32) -> Void) {
        if value < 0x80 {
            body(value &+ ((value &- 0x41) < 26 ? 0x20 : 0))
            return
        }
        if value < 0x10000 {
            let mapped = basicPlane[Int(value)]
            if mapped != 0xFFFF || value == 0xFFFF { body(UInt32(mapped)); return }
        }
        guard let scalar = Unicode.Scalar(value), scalar.properties.changesWhenLowercased else {
            body(value)
            return
        }
        for lower in scalar.properties.lowercaseMapping.unicodeScalars { body(lower.value) }
    }
}
