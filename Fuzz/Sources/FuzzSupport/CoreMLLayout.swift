public import Foundation
import Crypto
import _CryptoExtras

/// Protocol buffers, written and read here from the wire format, so that the Core ML seeds and
/// archives do not depend on the code under test (`Sources/MLKitCoreML/Specification/` has the
/// field numbers).
public enum Protobuf {
    /// A base-128 varint.
    public static func varint(_ value: UInt64) -> Data {
        var value = value, data = Data()
        while value >= 0x80 {
            data.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        data.append(UInt8(value))
        return data
    }

    /// A varint field (int32, int64, uint64, bool, enum); a negative number as ten bytes.
    public static func int(_ field: Int, _ value: Int64) -> Data {
        varint(UInt64(field << 3)) + varint(UInt64(bitPattern: value))
    }

    /// A length-delimited field: a message, bytes or a packed list.
    public static func bytes(_ field: Int, _ value: Data) -> Data {
        varint(UInt64(field << 3 | 2)) + varint(UInt64(value.count)) + value
    }

    /// A string field.
    public static func string(_ field: Int, _ value: String) -> Data { bytes(field, Data(value.utf8)) }

    /// A double field.
    public static func double(_ field: Int, _ value: Double) -> Data {
        varint(UInt64(field << 3 | 1)) + withUnsafeBytes(of: value.bitPattern.littleEndian) { Data($0) }
    }

    /// A packed list of doubles.
    public static func doubles(_ field: Int, _ values: [Double]) -> Data {
        bytes(field, values.reduce(into: Data()) { data, value in
            withUnsafeBytes(of: value.bitPattern.littleEndian) { data.append(contentsOf: $0) }
        })
    }

    /// A packed list of varints.
    public static func ints(_ field: Int, _ values: [Int64]) -> Data {
        bytes(field, values.reduce(into: Data()) { $0 += varint(UInt64(bitPattern: $1)) })
    }

    /// The length-delimited fields of a message, in order: field number and bytes. Other wire
    /// types are skipped. `nil` when the bytes are not a message.
    public static func fields(_ data: Data) -> [(field: Int, bytes: Data)]? {
        var result: [(Int, Data)] = []
        var index = data.startIndex
        func readVarint() -> UInt64? {
            var value: UInt64 = 0, shift: UInt64 = 0
            while index < data.endIndex, shift < 64 {
                let byte = data[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil
        }
        while index < data.endIndex {
            guard let key = readVarint() else { return nil }
            switch key & 7 {
            case 0: guard readVarint() != nil else { return nil }
            case 1: index += 8
            case 5: index += 4
            case 2:
                guard let length = readVarint(), length <= UInt64(data.endIndex - index) else { return nil }
                result.append((Int(key >> 3), data.subdata(in: index..<(index + Int(length)))))
                index += Int(length)
            default: return nil
            }
            guard index <= data.endIndex else { return nil }
        }
        return result
    }
}

/// Core ML models and model archives laid out as `docs/coreml.md` describes them: the compiled
/// nodes of an archive, its zip (stored, or deflated in stored blocks), and the encryption of
/// Apple's encrypted archives.
public enum CoreMLLayout {
    /// The field numbers of the pipeline types of `Model`.
    static let pipelineTypes: Set<Int> = [200, 201, 202]

    /// The files of the archive of a `.mlmodel`'s bytes, by path; `nil` when the bytes are not
    /// a model with a type.
    public static func archiveFiles(of model: Data) -> [(path: String, data: Data)]? {
        guard let version = specificationVersion(of: model) else { return nil }
        var files: [(String, Data)] = [("metadata.json", Data("[{\"specificationVersion\": \(version)}]".utf8))]
        guard addNode(model, folder: "", to: &files) else { return nil }
        return files
    }

    private static func specificationVersion(of model: Data) -> Int? {
        // Field 1, a varint: the first byte 0x08 and a one-byte version in the seeds.
        guard model.count >= 2, model[model.startIndex] == 0x08, model[model.startIndex + 1] < 0x80 else { return nil }
        return Int(model[model.startIndex + 1])
    }

    private static func addNode(_ model: Data, folder: String, to files: inout [(String, Data)]) -> Bool {
        guard let fields = Protobuf.fields(model), let type = fields.last(where: { $0.field >= 200 }) else { return false }
        guard pipelineTypes.contains(type.field) else {
            files.append((folder + "coremldata.bin", header(type: type.field, pipeline: false) + model))
            return true
        }
        let pipeline = type.field == 202 ? type.bytes : Protobuf.fields(type.bytes)?.first(where: { $0.field == 1 })?.bytes ?? Data()
        let stages = (Protobuf.fields(pipeline) ?? []).filter { $0.field == 1 }.map(\.bytes)
        let description = fields.first(where: { $0.field == 2 })?.bytes ?? Data()
        files.append((folder + "coremldata.bin", header(type: type.field, pipeline: true) + u64(UInt64(description.count))
                      + description + u64(UInt64(stages.count)) + u64(UInt64(type.field))))
        for (index, stage) in stages.enumerated() {
            guard addNode(stage, folder: "\(folder)model\(index)/", to: &files) else { return false }
        }
        return true
    }

    /// A compiled node's header, up to its model or description (0x48 bytes, the name `spec`).
    static func header(type: Int, pipeline: Bool) -> Data {
        u32(UInt32(type)) + u32(1) + Data(count: 12) + u32(pipeline ? 1 : 0) + u32(0)
            + u64(4) + Data("spec".utf8) + u64(1) + Data(count: 24)
    }

    static func u16(_ value: UInt16) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }
    static func u32(_ value: UInt32) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }
    static func u64(_ value: UInt64) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }

    /// The most folder entries ``zip(_:deflate:)`` writes for one file: its outermost folders.
    /// An entry for every folder would make the zip grow as the square of a path's depth (a
    /// 14 KB input of deep paths became a 3.5 MB archive that took the harness 2 s to build); a
    /// zip need not list its folders, and the reader looks files up by path without them.
    static let maximumFolderEntriesPerFile = 16

    /// A zip of `files`, each stored (method 0) or, with `deflate`, as deflate stored blocks
    /// (method 8), so that the inflater runs; a folder entry for each of a file's first
    /// ``maximumFolderEntriesPerFile`` folders, so the zip grows in proportion to its files.
    public static func zip(_ files: [(path: String, data: Data)], deflate: Bool) -> Data {
        var entries: [(path: String, data: Data, method: UInt16, stored: Data)] = []
        var folders: Set<String> = []
        for file in files {
            let parts = file.path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
                .prefix(maximumFolderEntriesPerFile)
            for depth in parts.indices {
                let folder = parts[...depth].joined(separator: "/") + "/"
                if folders.insert(folder).inserted { entries.append((folder, Data(), 0, Data())) }
            }
            entries.append((file.path, file.data, deflate ? 8 : 0, deflate ? storedBlocks(file.data) : file.data))
        }
        var archive = Data(), directory = Data()
        for entry in entries {
            let name = Data(entry.path.utf8)
            let crc = CRC32.checksum(entry.data)
            let common = u16(20) + u16(0) + u16(entry.method) + u16(0) + u16(0x21) + u32(crc)
                + u32(UInt32(truncatingIfNeeded: entry.stored.count)) + u32(UInt32(truncatingIfNeeded: entry.data.count))
                + u16(UInt16(truncatingIfNeeded: name.count)) + u16(0)
            let offset = archive.count
            archive += u32(0x0403_4B50) + common + name + entry.stored
            directory += u32(0x0201_4B50) + u16(20) + common + u16(0) + u16(0) + u16(0)
                + u32(entry.path.hasSuffix("/") ? 0x10 : 0) + u32(UInt32(truncatingIfNeeded: offset)) + name
        }
        let count = u16(UInt16(truncatingIfNeeded: entries.count))
        return archive + directory + u32(0x0605_4B50) + u16(0) + u16(0) + count + count
            + u32(UInt32(truncatingIfNeeded: directory.count)) + u32(UInt32(truncatingIfNeeded: archive.count)) + u16(0)
    }

    /// `data` as a raw deflate stream of stored blocks (RFC 1951, BTYPE 00).
    static func storedBlocks(_ data: Data) -> Data {
        var stream = Data()
        var start = data.startIndex
        repeat {
            let end = min(start + 65_535, data.endIndex)
            let length = UInt16(end - start)
            stream.append(end == data.endIndex ? 1 : 0)
            stream += u16(length) + u16(~length) + data[start..<end]
            start = end
        } while start < data.endIndex
        return stream
    }

    /// The files as one input of the archive harness: each as `\nFILE:` + path + `\n` + bytes.
    public static func container(_ files: [(path: String, data: Data)]) -> Data {
        files.reduce(into: Data()) { $0 += Data("\nFILE:\($1.path)\n".utf8) + $1.data }
    }

    /// The files of a ``container(_:)``: whatever lies between the separators, at most 64.
    public static func files(inContainer data: Data) -> [(path: String, data: Data)] {
        let separator = Data("\nFILE:".utf8)
        var files: [(String, Data)] = []
        var rest = data[...]
        guard let first = rest.range(of: separator) else { return [] }
        rest = rest[first.upperBound...]
        while files.count < 64 {
            let next = rest.range(of: separator)
            let record = next.map { rest[..<$0.lowerBound] } ?? rest
            let newline = record.firstIndex(of: 0x0A) ?? record.endIndex
            files.append((String(decoding: record[..<newline], as: UTF8.self),
                          Data(newline < record.endIndex ? record[(newline + 1)...] : Data()[...])))
            guard let next else { break }
            rest = rest[next.upperBound...]
        }
        return files
    }

    /// A known Apple model key (`.mlmodelkey`): material 0, 1, … 15 and IV 16, 17, … 31.
    public static let keyIdentifier = "00000000-0000-4000-8000-00000000c0de"
    static let keyMaterial = (0..<16).map { UInt8($0) }
    static let iv = (16..<32).map { UInt8($0) }

    /// The known Apple key as an XML `.mlmodelkey`.
    public static let keyFile = Data("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict>
        <key>IV</key><data>\(Data(iv).base64EncodedString())</data>
        <key>Key</key><data>\(Data(keyMaterial).base64EncodedString())</data>
        <key>KeyIdentifier</key><string>\(keyIdentifier)</string>
        <key>Version</key><integer>1</integer>
        </dict></plist>
        """.utf8)

    /// Encrypts a file as Apple's encrypted archives do, with the known key: 0x60 bytes of
    /// room, the plaintext, zeros to whole 4096-byte pages, each page AES-128-CBC on its own,
    /// then the clear header over the first 0x50 bytes.
    public static func encrypt(_ plaintext: Data) -> Data {
        let pages = (plaintext.count + 0x60 + 4095) / 4096
        var buffer = Data(count: 0x60) + plaintext
        buffer += Data(count: pages * 4096 - buffer.count)
        var encrypted = Data()
        do {
            for page in 0..<pages {
                encrypted += try AES._CBC.encrypt(buffer[(page * 4096)..<((page + 1) * 4096)],
                                                  using: SymmetricKey(data: keyMaterial), iv: AES._CBC.IV(ivBytes: iv),
                                                  noPadding: true)
            }
        } catch {
            preconditionFailure("AES-CBC encryption with the known key failed: \(error)")
        }
        let clear = Data("LMNE".utf8) + Data([2, 0, 0, 0x60]) + u64(UInt64(plaintext.count)) + u64(UInt64(pages))
        encrypted.replaceSubrange(0..<0x50, with: clear + Data(count: 0x50 - clear.count))
        return encrypted
    }

    /// The `encryptionInfo/coremldata.bin` that names the known key.
    public static func encryptionInfo() -> Data {
        let payload = u64(UInt64(keyIdentifier.utf8.count)) + Data(keyIdentifier.utf8)
        let clear = Data("LMNE".utf8) + Data([2, 0, 0, 0x60]) + u64(UInt64(payload.count)) + u64(0)
        return clear + Data(count: 0x60 - clear.count) + payload
    }

    /// The files of an encrypted archive: every file but `metadata.json` encrypted with the
    /// known key, and the entry that names it.
    public static func encrypted(_ files: [(path: String, data: Data)]) -> [(path: String, data: Data)] {
        files.filter { $0.path != "metadata.json" }.map { ($0.path, encrypt($0.data)) }
            + [("encryptionInfo/coremldata.bin", encryptionInfo())]
    }
}
