import Foundation

/// Paths as the router sees them. A request's path is split on `/` and each segment is
/// percent-decoded, so that `%63ollections` is `collections` and `..%2Fx` is one segment
/// `../x`; the router then matches the segments re-encoded in one canonical form, in which
/// every byte outside `A–Z a–z 0–9 - . _ ~` is escaped.
enum Paths {
    /// The canonical form of a path: its percent-decoded segments, each re-encoded.
    /// - Throws: ``CollectionServerError`` (bad request) for a segment that is not valid
    ///   percent-encoding of UTF-8.
    static func canonical(_ path: String) throws -> String {
        let segments = try path.split(separator: "/").map { segment in
            guard let decoded = decoded(segment) else {
                throw CollectionServerError.badRequest("the path segment '\(segment)' is not valid percent-encoding")
            }
            return encoded(decoded)
        }
        return "/" + segments.joined(separator: "/")
    }

    /// Decodes `%XX` escapes to UTF-8; `nil` for a broken escape or bytes that are not UTF-8.
    static func decoded(_ segment: Substring) -> String? {
        guard segment.utf8.contains(UInt8(ascii: "%")) else { return String(segment) }
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        var iterator = segment.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hex), let low = iterator.next().flatMap(hex) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(bytes: bytes, encoding: .utf8)
    }

    /// Escapes every byte outside the unreserved characters of RFC 3986.
    static func encoded(_ text: String) -> String {
        guard !text.utf8.allSatisfy(isUnreserved) else { return text }
        let digits = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            if isUnreserved(byte) {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
    }
}

/// The shapes of the names in paths; anything else is refused before it reaches storage or
/// the file system.
enum Identifier {
    /// A collection, model or key identifier: 1 to 128 of `A–Z a–z 0–9 . _ -`, not only dots.
    static func isValid(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 128 && !text.allSatisfy { $0 == "." }
            && text.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2E || byte == 0x5F || byte == 0x2D
            }
    }

    static func collection(_ text: String) throws -> String {
        guard isValid(text) else {
            throw CollectionServerError.badRequest(
                "'\(text)' is not a valid collection identifier (1–128 of A–Z a–z 0–9 . _ -, not only dots)")
        }
        return text
    }

    /// A key identifier: 1 to 255 bytes of UTF-8 (as an encrypted model's header allows), no
    /// control characters and no `/`. Keys are only ever looked up in the database.
    static func key(_ text: String) throws -> String {
        guard !text.isEmpty, text.utf8.count <= 255, !text.contains("/"),
              !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw CollectionServerError.badRequest("'\(text)' is not a valid key identifier")
        }
        return text
    }

    /// A model file's name: 64 lowercase hex digits.
    static func sha256(_ text: String) throws -> String {
        guard isSHA256(text) else {
            throw CollectionServerError.badRequest("'\(text)' is not a SHA-256 (64 lowercase hex digits)")
        }
        return text
    }

    static func isSHA256(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// A deployment ID: a UUID, in capitals.
    static func deployment(_ text: String) throws -> String {
        guard let uuid = UUID(uuidString: text) else {
            throw CollectionServerError.badRequest("'\(text)' is not a deployment ID (a UUID)")
        }
        return uuid.uuidString
    }
}
