import Crypto
import Foundation
@testable import MLKitCoreML
import SwiftProtobuf
import ZIPFoundation
import _CryptoExtras

/// Builds model archives (`.mlarchive`) as Core ML Model Deployment takes them, from a model
/// specification: the tests' own archives, plain and encrypted, laid out as
/// `docs/coreml.md` describes the reference archives.
enum ArchiveBuilder {
    /// An Apple model key: identifier, 16-byte key and IV.
    struct Key {
        let identifier: String
        let material: [UInt8]
        let iv: [UInt8]

        /// A key with fresh random material.
        static func random(identifier: String = UUID().uuidString) -> Key {
            Key(identifier: identifier, material: (0..<16).map { _ in UInt8.random(in: 0...255) },
                iv: (0..<16).map { _ in UInt8.random(in: 0...255) })
        }

        /// The key as an `.mlmodelkey` property list.
        func keyFile() throws -> Data {
            let plist: [String: Any] = ["Key": Data(material), "IV": Data(iv), "KeyIdentifier": identifier, "Version": 1]
            return try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
        }
    }

    /// The files of the archive of `model`, by path, before zipping.
    static func files(of model: SpecModel) throws -> [(path: String, data: Data)] {
        var files: [(String, Data)] = [("metadata.json", Data("[{\"specificationVersion\": \(model.specificationVersion)}]".utf8))]
        try addNode(model, folder: "", to: &files)
        return files
    }

    private static func addNode(_ model: SpecModel, folder: String, to files: inout [(String, Data)]) throws {
        let type = CompiledNode.fieldNumber(of: model)!
        if let stages = CoreMLModelInfo.pipelineModels(model) {
            var node = header(type: type, pipeline: true)
            let description: Data = try model.description_p.serializedBytes()
            node += u64(UInt64(description.count)) + description + u64(UInt64(stages.count)) + u64(UInt64(type))
            files.append((folder + "coremldata.bin", node))
            for (index, stage) in stages.enumerated() { try addNode(stage, folder: "\(folder)model\(index)/", to: &files) }
        } else {
            files.append((folder + "coremldata.bin", header(type: type, pipeline: false) + (try model.serializedBytes() as Data)))
        }
    }

    /// A node's header, up to the model or the description (0x48 bytes, with the name `spec`).
    static func header(type: UInt32, pipeline: Bool) -> Data {
        var data = u32(type) + u32(1) + Data(count: 12) + u32(pipeline ? 1 : 0) + u32(0)
        data += u64(4) + Data("spec".utf8) + u64(1) + Data(count: 24)
        return data
    }

    static func u32(_ value: UInt32) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }
    static func u64(_ value: UInt64) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }

    /// Encrypts a file as Apple's encrypted archives do: 0x60 bytes of room, the plaintext, zeros
    /// to whole 4096-byte pages, each page AES-128-CBC on its own, then the clear header over
    /// the first 0x50 bytes.
    static func encrypt(_ plaintext: Data, with key: Key) throws -> Data {
        let pages = (plaintext.count + 0x60 + 4095) / 4096
        var buffer = Data(count: 0x60) + plaintext
        buffer += Data(count: pages * 4096 - buffer.count)
        var encrypted = Data()
        for page in 0..<pages {
            encrypted += try AES._CBC.encrypt(buffer[(page * 4096)..<((page + 1) * 4096)], using: SymmetricKey(data: key.material),
                                              iv: AES._CBC.IV(ivBytes: key.iv), noPadding: true)
        }
        let clear = Data("LMNE".utf8) + Data([2, 0, 0, 0x60]) + u64(UInt64(plaintext.count)) + u64(UInt64(pages))
        encrypted.replaceSubrange(0..<0x50, with: clear + Data(count: 0x50 - clear.count))
        return encrypted
    }

    /// The `encryptionInfo/coremldata.bin` that names `identifier`.
    static func encryptionInfo(_ identifier: String) -> Data {
        let payload = u64(UInt64(identifier.utf8.count)) + Data(identifier.utf8)
        let clear = Data("LMNE".utf8) + Data([2, 0, 0, 0x60]) + u64(UInt64(payload.count)) + u64(0)
        return clear + Data(count: 0x60 - clear.count) + payload
    }

    /// The archive of `model`, encrypted with `key` when one is given.
    static func archive(of model: SpecModel, key: Key? = nil) throws -> Data {
        var files = try files(of: model)
        if let key {
            files = try files.filter { $0.path != "metadata.json" }.map { ($0.path, try encrypt($0.data, with: key)) }
            files.append(("encryptionInfo/coremldata.bin", encryptionInfo(key.identifier)))
        }
        return try zip(files)
    }

    /// A zip of `files`, with an entry for each folder, deflated.
    static func zip(_ files: [(path: String, data: Data)]) throws -> Data {
        let archive = try Archive(data: Data(), accessMode: .create)
        var folders: Set<String> = []
        for file in files {
            let parts = file.path.split(separator: "/").dropLast()
            for depth in parts.indices {
                let folder = parts[...depth].joined(separator: "/") + "/"
                if folders.insert(folder).inserted {
                    try archive.addEntry(with: folder, type: .directory, uncompressedSize: Int64(0)) { (_: Int64, _: Int) in Data() }
                }
            }
            try archive.addEntry(with: file.path, type: .file, uncompressedSize: Int64(file.data.count),
                                 compressionMethod: .deflate) { (position: Int64, size: Int) in
                file.data.subdata(in: Int(position)..<(Int(position) + size))
            }
        }
        return archive.data!
    }
}
