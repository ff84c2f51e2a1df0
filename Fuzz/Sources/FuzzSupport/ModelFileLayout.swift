public import Foundation

/// A model file taken apart and laid out again, as `docs/model-format.md` describes it: written
/// here from the documentation, so that the seeds do not depend on the code under test. Used to
/// make the seeds of older format versions from a model that this mlkit writes.
public struct ModelFileLayout {
    /// The format version.
    public var version: UInt32
    /// The JSON header.
    public var header: Data
    /// The sections in table order: name, element type and bytes.
    public var sections: [(name: String, type: UInt32, bytes: Data)]

    /// Parses a file; `nil` when it does not follow the layout.
    public init?(_ data: Data) {
        let bytes = [UInt8](data)
        func integer<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T? {
            guard offset >= 0, offset + MemoryLayout<T>.size <= bytes.count else { return nil }
            return bytes[offset..<(offset + MemoryLayout<T>.size)].reversed().reduce(T(0)) { $0 << 8 | T($1) }
        }
        guard bytes.count >= 40, bytes.starts(with: Array("MLKITMOD".utf8)),
              let version = integer(8, UInt32.self), let count = integer(12, UInt32.self), count <= 1024,
              let headerLength = integer(16, UInt64.self) else { return nil }
        let tableEnd = 24 + Int(count) * 64
        guard headerLength <= UInt64(bytes.count), tableEnd + Int(headerLength) <= bytes.count - 16 else { return nil }
        self.version = version
        header = Data(bytes[tableEnd..<(tableEnd + Int(headerLength))])
        sections = []
        for index in 0..<Int(count) {
            let entry = 24 + index * 64
            guard let type = integer(entry + 40, UInt32.self), let offset = integer(entry + 48, UInt64.self),
                  let length = integer(entry + 56, UInt64.self), offset <= UInt64(bytes.count),
                  length <= UInt64(bytes.count) - offset else { return nil }
            let name = String(decoding: bytes[entry..<(entry + 40)].prefix { $0 != 0 }, as: UTF8.self)
            sections.append((name, type, Data(bytes[Int(offset)..<Int(offset + length)])))
        }
    }

    /// The file: prefix, table, header, sections aligned to 64 bytes, then length, CRC-32, `MEND`.
    public var data: Data {
        var bytes: [UInt8] = []
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        func padded(_ offset: Int) -> Int { (offset + 63) / 64 * 64 }
        bytes += Array("MLKITMOD".utf8)
        append(version)
        append(UInt32(sections.count))
        append(UInt64(header.count))
        var offset = 24 + 64 * sections.count + header.count
        for section in sections {
            offset = padded(offset)
            var name = Array(section.name.utf8.prefix(40))
            name += [UInt8](repeating: 0, count: 40 - name.count)
            bytes += name
            append(section.type)
            append(UInt32(0))
            append(UInt64(offset))
            append(UInt64(section.bytes.count))
            offset += section.bytes.count
        }
        bytes += header
        for section in sections {
            bytes += [UInt8](repeating: 0, count: padded(bytes.count) - bytes.count)
            bytes += section.bytes
        }
        append(UInt64(bytes.count + 16))
        append(CRC32.checksum(bytes))
        bytes += Array("MEND".utf8)
        return Data(bytes)
    }

    /// The same model in format version `version`: the header's featurizer loses the fields
    /// that came later (`wordParts` in version 2, `punctuation` in version 3).
    public func inVersion(_ version: UInt32) throws -> ModelFileLayout {
        var copy = self
        copy.version = version
        guard var object = try JSONSerialization.jsonObject(with: header) as? [String: Any],
              var featurizer = object["featurizer"] as? [String: Any] else { return copy }
        if version < 3 { featurizer["punctuation"] = nil }
        if version < 2 { featurizer["wordParts"] = nil }
        object["featurizer"] = featurizer
        copy.header = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return copy
    }
}
