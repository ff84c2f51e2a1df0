import Foundation

/// A strict reader of the property lists that hold Apple's model keys (`.mlmodelkey`): the
/// dictionary at the top, with its string, data and integer values, from the XML form that
/// Xcode writes or the binary form (`bplist00`).
///
/// Foundation's readers are not used on these files, which a collection server receives from
/// outside: on Linux, `PropertyListSerialization` crashes on a binary list whose top object is a
/// set, and `PropertyListDecoder` traps on ill-formed UTF-8 inside an XML `<integer>`. This
/// reader checks every length and offset against the bytes it has, allocates nothing larger
/// than the input, and never descends into nested containers (their values count as `other`).
enum ApplePropertyList {
    /// A value of the top dictionary.
    enum Value: Equatable {
        case string(String)
        case data(Data)
        case integer(Int)
        /// Anything else: a real, a date, a boolean, an array, a dictionary, …
        case other
    }

    /// Why the bytes are not such a property list.
    struct Failure: Error {
        let reason: String
    }

    /// The top dictionary of an XML or binary property list.
    /// - Throws: ``Failure`` naming the first thing that does not fit.
    static func topDictionary(_ data: Data) throws -> [String: Value] {
        let bytes = [UInt8](data)
        if bytes.starts(with: Array("bplist".utf8)) { return try BinaryReader(bytes).topDictionary() }
        var reader = XMLReader(bytes)
        return try reader.topDictionary()
    }

    static func fail(_ reason: String) -> Failure { Failure(reason: reason) }
}

// MARK: - Binary

/// The binary form: objects, a table of their offsets, and a trailer that says where the table
/// is and which object is at the top.
private struct BinaryReader {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func topDictionary() throws -> [String: ApplePropertyList.Value] {
        guard bytes.starts(with: Array("bplist00".utf8)) else { throw ApplePropertyList.fail("not a version 00 binary property list") }
        guard bytes.count >= 8 + 32 else { throw ApplePropertyList.fail("the binary property list is truncated") }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6]), referenceSize = Int(bytes[trailer + 7])
        let objectCount = try integer(at: trailer + 8, size: 8), top = try integer(at: trailer + 16, size: 8)
        let tableOffset = try integer(at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize), top < objectCount,
              objectCount <= trailer, tableOffset >= 8, tableOffset <= trailer,
              objectCount <= (trailer - tableOffset) / offsetSize else {
            throw ApplePropertyList.fail("the binary property list's trailer is damaged")
        }
        func offset(of object: Int) throws -> Int {
            guard object < objectCount else { throw ApplePropertyList.fail("an object reference is out of range") }
            let offset = try integer(at: tableOffset + object * offsetSize, size: offsetSize)
            guard offset >= 8, offset < tableOffset else { throw ApplePropertyList.fail("an object offset is out of range") }
            return offset
        }
        let start = try offset(of: top)
        let (kind, count, body) = try header(at: start)
        guard kind == 0xD else { throw ApplePropertyList.fail("the top object is \(name(of: kind)), not a dictionary") }
        guard count <= (tableOffset - body) / (2 * referenceSize) else { throw ApplePropertyList.fail("the dictionary runs past its objects") }
        var result: [String: ApplePropertyList.Value] = [:]
        for index in 0..<count {
            let key = try integer(at: body + index * referenceSize, size: referenceSize)
            let value = try integer(at: body + (count + index) * referenceSize, size: referenceSize)
            guard case .string(let name) = try self.value(at: offset(of: key), end: tableOffset) else {
                throw ApplePropertyList.fail("a key of the dictionary is not a string")
            }
            result[name] = try self.value(at: offset(of: value), end: tableOffset)
        }
        return result
    }

    /// The object at `offset`, whose bytes end before `end`; containers are not read.
    private func value(at offset: Int, end: Int) throws -> ApplePropertyList.Value {
        let (kind, count, body) = try header(at: offset)
        func payload(_ length: Int) throws -> ArraySlice<UInt8> {
            guard length <= end - body else { throw ApplePropertyList.fail("an object runs past the end of the objects") }
            return bytes[body..<(body + length)]
        }
        switch kind {
        case 0x1:
            guard count <= 8 else { return .other }  // 128-bit integers
            let value = try payload(count).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            // 8-byte integers are signed; shorter ones are not.
            return .integer(count == 8 ? Int(Int64(bitPattern: value)) : Int(value))
        case 0x4:
            return .data(Data(try payload(count)))
        case 0x5:
            guard let string = String(validating: try payload(count), as: Unicode.ASCII.self) else {
                throw ApplePropertyList.fail("an ASCII string holds a byte above 127")
            }
            return .string(string)
        case 0x6:
            guard count <= Int.max / 2 else { throw ApplePropertyList.fail("a string runs past the end of the objects") }
            let units = try payload(2 * count)
            let utf16 = stride(from: units.startIndex, to: units.endIndex, by: 2).map { UInt16(units[$0]) << 8 | UInt16(units[$0 + 1]) }
            guard let string = String(validating: utf16, as: UTF16.self) else {
                throw ApplePropertyList.fail("a UTF-16 string is not well-formed")
            }
            return .string(string)
        default:
            return .other
        }
    }

    /// An object's kind (the marker's high four bits), its count, and where its body starts.
    /// A count of 15 means that an integer object with the real count follows the marker.
    private func header(at offset: Int) throws -> (kind: UInt8, count: Int, body: Int) {
        guard offset < bytes.count else { throw ApplePropertyList.fail("an object offset is out of range") }
        let marker = bytes[offset], kind = marker >> 4, low = Int(marker & 0xF)
        switch kind {
        case 0x0, 0x2, 0x3, 0x8:
            return (kind, 0, offset + 1)
        case 0x1:
            return (kind, 1 << low, offset + 1)
        case 0x4, 0x5, 0x6, 0xA, 0xC, 0xD:
            guard low == 0xF else { return (kind, low, offset + 1) }
            guard offset + 1 < bytes.count, bytes[offset + 1] >> 4 == 0x1, bytes[offset + 1] & 0xF <= 3 else {
                throw ApplePropertyList.fail("an object's length is not an integer")
            }
            let size = 1 << Int(bytes[offset + 1] & 0xF)
            let count = try integer(at: offset + 2, size: size)
            return (kind, count, offset + 2 + size)
        default:
            return (kind, 0, offset + 1)
        }
    }

    /// A big-endian unsigned integer of `size` bytes at `offset`, which must fit in an `Int`.
    private func integer(at offset: Int, size: Int) throws -> Int {
        guard offset >= 0, size <= bytes.count, offset <= bytes.count - size else {
            throw ApplePropertyList.fail("the binary property list is truncated")
        }
        let value = bytes[offset..<(offset + size)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard value <= UInt64(Int.max) else { throw ApplePropertyList.fail("a length or offset is too large") }
        return Int(value)
    }

    private func name(of kind: UInt8) -> String {
        switch kind {
        case 0x0: return "a boolean"
        case 0x1: return "an integer"
        case 0x2: return "a real"
        case 0x3: return "a date"
        case 0x4: return "data"
        case 0x5, 0x6: return "a string"
        case 0x8: return "a UID"
        case 0xA: return "an array"
        case 0xC: return "a set"
        default: return "an unknown object"
        }
    }
}

// MARK: - XML

/// The XML form: an optional declaration, comments and a document type without an internal
/// subset, then `<plist>` around one `<dict>`.
private struct XMLReader {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        // A byte-order mark.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// The deepest nesting of arrays and dictionaries read (and skipped) inside the top one.
    static let maximumDepth = 16

    mutating func topDictionary() throws -> [String: ApplePropertyList.Value] {
        try skipProlog()
        guard case .open("plist", let empty) = try nextTag(), !empty else {
            throw ApplePropertyList.fail("the XML does not start with <plist>")
        }
        guard case .open("dict", let emptyDictionary) = try nextTag() else {
            throw ApplePropertyList.fail("the property list does not hold a dictionary")
        }
        var result: [String: ApplePropertyList.Value] = [:]
        if !emptyDictionary {
            while true {
                let tag = try nextTag()
                if tag == .close("dict") { break }
                guard tag == .open("key", empty: false) else { throw ApplePropertyList.fail("expected <key> in the dictionary") }
                let key = try text(until: "key")
                result[key] = try value(try nextTag(), depth: 1)
            }
        }
        guard try nextTag() == .close("plist") else { throw ApplePropertyList.fail("expected </plist> after the dictionary") }
        skipSpaceAndComments()
        guard position == bytes.count else { throw ApplePropertyList.fail("bytes follow </plist>") }
        return result
    }

    private enum Tag: Equatable {
        case open(String, empty: Bool)
        case close(String)
    }

    /// A value that starts with `tag`.
    private mutating func value(_ tag: Tag, depth: Int) throws -> ApplePropertyList.Value {
        guard case .open(let name, let empty) = tag else { throw ApplePropertyList.fail("expected a value, found </\(closeName(tag))>") }
        switch name {
        case "string":
            return .string(empty ? "" : try text(until: "string"))
        case "data":
            let base64 = empty ? "" : try text(until: "data")
            guard let data = Data(base64Encoded: Data(base64.utf8.filter { ![0x20, 0x09, 0x0A, 0x0D].contains($0) })) else {
                throw ApplePropertyList.fail("<data> is not base64")
            }
            return .data(data)
        case "integer":
            let digits = (empty ? "" : try text(until: "integer")).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let value = Int(digits) else { throw ApplePropertyList.fail("<integer> holds \"\(digits.prefix(40))\"") }
            return .integer(value)
        case "real", "date":
            if !empty { _ = try text(until: name) }
            return .other
        case "true", "false":
            guard empty else { throw ApplePropertyList.fail("<\(name)> must be empty") }
            return .other
        case "array", "dict":
            guard depth < Self.maximumDepth else { throw ApplePropertyList.fail("containers nest more than \(Self.maximumDepth) deep") }
            guard !empty else { return .other }
            while true {
                let next = try nextTag()
                if next == .close(name) { return .other }
                if name == "dict" {
                    guard next == .open("key", empty: false) else { throw ApplePropertyList.fail("expected <key> in a dictionary") }
                    _ = try text(until: "key")
                    _ = try value(try nextTag(), depth: depth + 1)
                } else {
                    _ = try value(next, depth: depth + 1)
                }
            }
        default:
            throw ApplePropertyList.fail("unknown element <\(name.prefix(40))>")
        }
    }

    private func closeName(_ tag: Tag) -> String {
        if case .close(let name) = tag { return name }
        return ""
    }

    /// Skips the XML declaration, comments, white space and a document type declaration.
    private mutating func skipProlog() throws {
        while true {
            skipSpaceAndComments()
            if starts(with: "<?") {
                guard let end = find("?>") else { throw ApplePropertyList.fail("an unterminated <?…?>") }
                position = end + 2
            } else if starts(with: "<!DOCTYPE") {
                guard let end = find(">") else { throw ApplePropertyList.fail("an unterminated <!DOCTYPE") }
                guard !bytes[position..<end].contains(UInt8(ascii: "[")) else {
                    throw ApplePropertyList.fail("a document type with an internal subset")
                }
                position = end + 1
            } else {
                return
            }
        }
    }

    private mutating func skipSpaceAndComments() {
        while true {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
            guard starts(with: "<!--"), let end = find("-->") else { return }
            position = end + 3
        }
    }

    /// The next start, end or empty-element tag, after white space and comments; its
    /// attributes are skipped.
    private mutating func nextTag() throws -> Tag {
        skipSpaceAndComments()
        guard position < bytes.count, bytes[position] == UInt8(ascii: "<") else {
            throw ApplePropertyList.fail(position < bytes.count ? "text where an element was expected" : "the XML ends early")
        }
        guard let end = find(">") else { throw ApplePropertyList.fail("an unterminated tag") }
        var inside = bytes[(position + 1)..<end]
        position = end + 1
        let closing = inside.first == UInt8(ascii: "/")
        if closing { inside = inside.dropFirst() }
        let empty = !closing && inside.last == UInt8(ascii: "/")
        if empty { inside = inside.dropLast() }
        let name = String(decoding: inside.prefix { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }, as: UTF8.self)
        guard !name.isEmpty, name.utf8.allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: "<") }) else {
            throw ApplePropertyList.fail("a malformed tag")
        }
        return closing ? .close(name) : .open(name, empty: empty)
    }

    /// The text up to `</name>`, which it consumes, with character references replaced.
    private mutating func text(until name: String) throws -> String {
        guard let end = find("<") else { throw ApplePropertyList.fail("<\(name)> is not closed") }
        let raw = bytes[position..<end]
        position = end
        guard try nextTag() == .close(name) else { throw ApplePropertyList.fail("<\(name)> holds elements or is not closed") }
        guard let text = String(validating: raw, as: UTF8.self) else { throw ApplePropertyList.fail("<\(name)> is not UTF-8") }
        return try Self.replacingReferences(in: text)
    }

    /// `text` with `&lt;`, `&gt;`, `&amp;`, `&quot;`, `&apos;` and `&#…;` replaced.
    private static func replacingReferences(in text: String) throws -> String {
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            guard let semicolon = rest[ampersand...].firstIndex(of: ";") else { throw ApplePropertyList.fail("an unterminated &…;") }
            let name = rest[rest.index(after: ampersand)..<semicolon]
            switch name {
            case "lt": result += "<"
            case "gt": result += ">"
            case "amp": result += "&"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                let number: UInt32?
                if name.hasPrefix("#x") { number = UInt32(name.dropFirst(2), radix: 16) } else if name.hasPrefix("#") {
                    number = UInt32(name.dropFirst(), radix: 10)
                } else {
                    number = nil
                }
                guard let number, let scalar = Unicode.Scalar(number) else {
                    throw ApplePropertyList.fail("an unknown reference &\(name.prefix(20));")
                }
                result.unicodeScalars.append(scalar)
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }

    private func starts(with text: String) -> Bool {
        bytes[position...].starts(with: text.utf8)
    }

    /// The offset of the next `text` from the current position.
    private func find(_ text: String) -> Int? {
        let pattern = Array(text.utf8)
        guard let first = pattern.first else { return position }
        var index = position
        while let found = bytes[index...].firstIndex(of: first) {
            if bytes[found...].starts(with: pattern) { return found }
            index = found + 1
        }
        return nil
    }
}
