// Inputs for the benchmarks: real text from the system's own documentation (the same sources as
// `MLKitProbe`), cut to exact byte counts so that throughput reads directly as MB/s, and a JSON
// dataset generated in memory.
import Foundation

/// One megabyte as the probe counts it: 10^6 bytes of UTF-8.
let megabyte = 1_000_000

enum Corpus {
    /// English: the licence texts in /usr/share/common-licenses and every
    /// /usr/share/doc/*/copyright file, in a fixed order.
    static let english: String = {
        var parts: [String] = []
        let manager = FileManager.default
        let licences = "/usr/share/common-licenses"
        for name in ((try? manager.contentsOfDirectory(atPath: licences)) ?? []).sorted() {
            if let text = try? String(contentsOfFile: licences + "/" + name, encoding: .utf8) { parts.append(text) }
        }
        for package in ((try? manager.contentsOfDirectory(atPath: "/usr/share/doc")) ?? []).sorted() {
            if let text = try? String(contentsOfFile: "/usr/share/doc/\(package)/copyright", encoding: .utf8) {
                parts.append(text)
            }
        }
        return checked(parts.joined(separator: "\n"), "English", from: "/usr/share/common-licenses, /usr/share/doc/*/copyright")
    }()

    /// Chinese: the translated strings (msgstr) of the zh_CN gettext catalogs.
    static let chinese: String = {
        let folder = "/usr/share/locale/zh_CN/LC_MESSAGES"
        var parts: [String] = []
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        where name.hasSuffix(".mo") {
            guard let data = FileManager.default.contents(atPath: folder + "/" + name) else { continue }
            parts.append(contentsOf: translations(inCatalog: data))
        }
        return checked(parts.joined(separator: "\n"), "Chinese", from: folder + "/*.mo")
    }()

    /// Exactly `bytes` bytes of `text`, repeated as needed, cut at a scalar boundary and
    /// padded with newlines.
    static func text(_ text: String, bytes: Int = megabyte) -> String {
        var result = ""
        result.reserveCapacity(bytes)
        while result.utf8.count < bytes { result += text + "\n" }
        return exactly(result, bytes: bytes, padding: "\n")
    }

    /// Documents of `text` (split at `separator`, empty ones dropped), repeated as needed,
    /// whose UTF-8 sizes add up to exactly `bytes`: the last one is cut or padded with spaces.
    static func documents(_ text: String, separator: String, bytes: Int = megabyte) -> [String] {
        let pieces = text.split(separator: separator).map(String.init).filter { !$0.isEmpty }
        precondition(!pieces.isEmpty, "no documents in the corpus")
        var documents: [String] = []
        var total = 0
        var next = 0
        while total < bytes {
            let piece = pieces[next % pieces.count]
            next += 1
            let room = bytes - total
            let document = piece.utf8.count <= room ? piece : exactly(piece, bytes: room, padding: " ")
            documents.append(document)
            total += document.utf8.count
        }
        return documents
    }

    /// A JSON array of `{"text": ..., "label": ...}` records, about `bytes` long, built from
    /// the English corpus's paragraphs with five labels.
    static func jsonDataset(bytes: Int) -> (data: Data, records: Int) {
        let paragraphs = english.split(separator: "\n\n").map(String.init).filter { !$0.isEmpty }
        let labels = ["licence", "copyright", "warranty", "notice", "other"]
        var json = "[\n"
        json.reserveCapacity(bytes + 4096)
        var records = 0
        while json.utf8.count < bytes {
            if records > 0 { json += ",\n" }
            let text = paragraphs[records % paragraphs.count]
            json += "{\"text\": " + quoted(text) + ", \"label\": \"" + labels[records % labels.count] + "\", \"id\": \(records)}"
            records += 1
        }
        json += "\n]\n"
        return (Data(json.utf8), records)
    }

    // MARK: Helpers

    /// The msgstr strings of a little-endian GNU gettext `.mo` file.
    static func translations(inCatalog data: Data) -> [String] {
        let bytes = [UInt8](data)
        func word(_ offset: Int) -> Int {
            guard offset + 4 <= bytes.count else { return 0 }
            return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
        }
        guard word(0) == 0x9504_12DE else { return [] }
        let count = word(8), table = word(16)
        return (0..<count).compactMap { entry in
            let length = word(table + 8 * entry), offset = word(table + 8 * entry + 4)
            guard offset + length <= bytes.count else { return nil }
            return String(decoding: bytes[offset..<(offset + length)], as: UTF8.self)
        }
    }

    /// `text` cut to at most `bytes` bytes at a scalar boundary, then padded to exactly `bytes`.
    static func exactly(_ text: String, bytes: Int, padding: Character) -> String {
        var utf8 = Array(text.utf8.prefix(bytes))
        if utf8.count == bytes, bytes < text.utf8.count {
            // Back off to the start of the scalar the cut fell in (continuation bytes are 10xxxxxx).
            var end = utf8.count
            while end > 0 && utf8[end - 1] & 0xC0 == 0x80 { end -= 1 }
            if end > 0 && utf8[end - 1] >= 0xC0 { end -= 1 }
            utf8.removeSubrange(end...)
        }
        var result = String(decoding: utf8, as: UTF8.self)
        result += String(repeating: padding, count: bytes - result.utf8.count)
        precondition(result.utf8.count == bytes)
        return result
    }

    /// `text` as a JSON string literal.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    private static func checked(_ text: String, _ name: String, from source: String) -> String {
        precondition(text.utf8.count > 10_000, "the \(name) corpus (\(source)) is missing or tiny on this machine")
        return text
    }
}
