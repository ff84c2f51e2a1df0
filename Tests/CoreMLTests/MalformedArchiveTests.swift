import Foundation
@testable import MLKit
@testable import MLKitCoreML
import MLKitEncryption
import SwiftProtobuf
import TestSupport
import Testing
import ZIPFoundation

/// The files of the archive of the small valid model.
func validArchiveFiles() throws -> [(path: String, data: Data)] {
    try ArchiveBuilder.files(of: Specs.valid)
}

/// `files` with the file at `path` replaced by `data` (or removed when `nil`).
func replacing(_ files: [(path: String, data: Data)], _ path: String, with data: Data?) -> [(path: String, data: Data)] {
    files.compactMap { $0.path == path ? data.map { (path, $0) } : $0 }
}

/// The central directory record's and the local header's uncompressed size of `path` set to `size`.
func patchingUncompressedSize(_ zip: Data, of path: String, to size: UInt32) -> Data {
    patching(zip, of: path, centralOffset: 24, localOffset: 22, to: size)
}

/// The same with the compressed size: the entry's data then ends early.
func patchingCompressedSize(_ zip: Data, of path: String, to size: UInt32) -> Data {
    patching(zip, of: path, centralOffset: 20, localOffset: 18, to: size)
}

/// A 32-bit field of `path`'s central directory record and local header set to `value`.
func patching(_ zip: Data, of path: String, centralOffset: Int, localOffset: Int, to value: UInt32) -> Data {
    var data = zip
    let name = Array(path.utf8)
    for (signature, nameOffset, field) in [([0x50, 0x4B, 0x01, 0x02] as [UInt8], 46, centralOffset), ([0x50, 0x4B, 0x03, 0x04], 30, localOffset)] {
        var index = 0
        while index + nameOffset + name.count <= data.count {
            if data[index..<(index + 4)].elementsEqual(signature),
               data[(index + nameOffset)..<(index + nameOffset + name.count)].elementsEqual(name) {
                withUnsafeBytes(of: value.littleEndian) { data.replaceSubrange((index + field)..<(index + field + 4), with: $0) }
            }
            index += 1
        }
    }
    return data
}

/// The compressed size of `path` in `zip`.
func compressedSize(_ zip: Data, of path: String) -> UInt32 {
    let name = Array(path.utf8)
    var index = 0
    while index + 46 + name.count <= zip.count {
        if zip[index..<(index + 4)].elementsEqual([0x50, 0x4B, 0x01, 0x02]), zip[(index + 46)..<(index + 46 + name.count)].elementsEqual(name) {
            return zip[(index + 20)..<(index + 24)].reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }
        index += 1
    }
    return 0
}

@Suite("Bad model archives give clear errors, never a crash", .onOwnThreads)
struct MalformedArchiveTests {
    @Test("The valid archive of the small model runs")
    func valid() throws {
        let model = try CoreMLModel(fileData: try ArchiveBuilder.zip(try validArchiveFiles()))
        #expect(try model.predictedLabel(forWordCounts: ["good": 2]) == "Pos")
    }

    /// The damaged archive that `name` describes.
    static func damagedArchive(_ name: String) throws -> Data {
        switch name {
        case "no root":
            return try ArchiveBuilder.zip(replacing(try validArchiveFiles(), "coremldata.bin", with: nil))
        case "a truncated leaf":
            let files = try validArchiveFiles()
            let leaf = files.first { $0.path == "model2/coremldata.bin" }!.data
            return try ArchiveBuilder.zip(replacing(files, "model2/coremldata.bin", with: leaf.prefix(0x30)))
        case "a leaf of another type":
            let files = try validArchiveFiles()
            var leaf = files.first { $0.path == "model2/coremldata.bin" }!.data
            leaf.replaceSubrange(0..<4, with: ArchiveBuilder.u32(603))
            return try ArchiveBuilder.zip(replacing(files, "model2/coremldata.bin", with: leaf))
        case "a description longer than its node":
            let files = try validArchiveFiles()
            var root = files.first { $0.path == "coremldata.bin" }!.data
            root.replaceSubrange(0x48..<0x50, with: ArchiveBuilder.u64(1 << 40))
            return try ArchiveBuilder.zip(replacing(files, "coremldata.bin", with: root))
        case "a name table longer than its node":
            let files = try validArchiveFiles()
            var root = files.first { $0.path == "coremldata.bin" }!.data
            root.replaceSubrange(0x1C..<0x24, with: ArchiveBuilder.u64(UInt64.max))
            return try ArchiveBuilder.zip(replacing(files, "coremldata.bin", with: root))
        case "a stage missing":
            return try ArchiveBuilder.zip(replacing(try validArchiveFiles(), "model2/coremldata.bin", with: nil))
        case "an unknown node type":
            let files = try validArchiveFiles()
            var root = files.first { $0.path == "coremldata.bin" }!.data
            root.replaceSubrange(0..<4, with: ArchiveBuilder.u32(7))
            return try ArchiveBuilder.zip(replacing(files, "coremldata.bin", with: root))
        case "garbage after the description":
            let files = try validArchiveFiles()
            let root = files.first { $0.path == "coremldata.bin" }!.data
            return try ArchiveBuilder.zip(replacing(files, "coremldata.bin", with: root + Data([1, 2, 3])))
        case "bad metadata.json":
            return try ArchiveBuilder.zip(replacing(try validArchiveFiles(), "metadata.json", with: Data("{".utf8)))
        case "a bad encryptionInfo":
            return try ArchiveBuilder.zip(try validArchiveFiles() + [("encryptionInfo/coremldata.bin", Data(repeating: 1, count: 200))])
        case "an entry that states more than its compression can give":
            return patchingUncompressedSize(try ArchiveBuilder.zip(try validArchiveFiles()), of: "model1/coremldata.bin", to: 900_000_000)
        case "an entry past the size limit":
            return patchingUncompressedSize(try ArchiveBuilder.zip(try validArchiveFiles()), of: "model1/coremldata.bin", to: 0x7FFF_FFFF)
        case "an entry that expands to other than its size":
            return patchingUncompressedSize(try ArchiveBuilder.zip(try validArchiveFiles()), of: "model1/coremldata.bin", to: 10)
        case "a deflate stream cut short":
            let zip = try ArchiveBuilder.zip(try validArchiveFiles())
            return patchingCompressedSize(zip, of: "model1/coremldata.bin", to: compressedSize(zip, of: "model1/coremldata.bin") / 2)
        case "not a zip":
            return Data("PK\u{3}\u{4} and then nothing of a zip".utf8)
        default: preconditionFailure(name)
        }
    }

    @Test("Damaged archives are refused, naming the entry", arguments: [
        ("no root", "the archive has no entry 'coremldata.bin'"),
        ("a truncated leaf", "entry 'model2/coremldata.bin' is truncated: its header ends at byte 72, past its end (48 bytes)"),
        ("a leaf of another type", "entry 'model2/coremldata.bin': its header says model type 603, but its model is glmClassifier"),
        ("a description longer than its node", "entry 'coremldata.bin' is truncated or damaged: its model description at offset 0x48 states 1099511627776 bytes"),
        ("a name table longer than its node", "entry 'coremldata.bin' is truncated or damaged: its table of names at offset 0x1c states 18446744073709551615 bytes"),
        ("a stage missing", "entry 'coremldata.bin': the pipeline node names 3 stages, but the archive holds 2"),
        ("an unknown node type", "entry 'coremldata.bin': 7 at offset 0 is not a model type"),
        ("garbage after the description", "entry 'coremldata.bin': 19 unexpected bytes after the model description"),
        ("bad metadata.json", "entry 'metadata.json' is not JSON"),
        ("a bad encryptionInfo", "entry 'encryptionInfo/coremldata.bin' does not start with LMNE"),
        ("an entry that states more than its compression can give", "entry 'model1/coremldata.bin' states 900000000 bytes from"),
        ("an entry past the size limit", "entry 'model1/coremldata.bin' expands to 2147483647 bytes, more than the limit of 1073741824"),
        ("an entry that expands to other than its size", "entry 'model1/coremldata.bin'"),
        ("a deflate stream cut short", "entry 'model1/coremldata.bin' expands to 89 bytes, not the 128 its header states"),
        ("not a zip", "not a model archive: the zip's central directory cannot be read"),
    ])
    func damaged(name: String, reason: String) throws {
        let error = loadError(try Self.damagedArchive(name), "bad.mlarchive")
        #expect(error?.code == .malformedModel, "\(name): \(String(describing: error))")
        #expect(error?.file == "bad.mlarchive")
        #expect(error?.reason.hasPrefix(reason) == true, "\(name): \(error?.reason ?? "no error")")
    }

    @Test("An entry that expands past the limit is cut off while it expands, whatever its header says")
    func expansionCap() throws {
        let zeros = Data(count: 2 << 20)
        let zip = patchingUncompressedSize(try ArchiveBuilder.zip([("model0/coremldata.bin", zeros)]), of: "model0/coremldata.bin", to: 1000)
        let reader = try ArchiveReader(zip, entryLimit: 1 << 20)
        #expect(throws: CoreMLError(.malformedModel, "entry 'model0/coremldata.bin' expands past the limit of 1048576 bytes")) {
            _ = try reader.file("model0/coremldata.bin", required: true)
        }
        let total = try ArchiveReader(try ArchiveBuilder.zip([("a", Data(count: 600)), ("b", Data(count: 600))]), totalLimit: 1000)
        _ = try total.file("a", required: true)
        #expect(throws: CoreMLError(.malformedModel, "the archive's entries expand past the limit of 1000 bytes together")) {
            _ = try total.file("b", required: true)
        }
    }

    @Test("Duplicate entries and too many entries are refused")
    func entries() throws {
        let files = try validArchiveFiles()
        let duplicate = try ArchiveBuilder.zip(files + [files[1]])
        #expect(loadError(duplicate, "bad.mlarchive")?.reason == "entry '\(files[1].path)' appears twice in the archive")
        let many = try ArchiveBuilder.zip(files + (0...4096).map { ("extra/\($0)", Data()) })
        #expect(loadError(many, "bad.mlarchive")?.reason == "the archive has more than 4096 entries")
    }

    @Test("Encrypted files with a damaged header are refused by the decryption, naming the key")
    func damagedEncryption() throws {
        let key = ArchiveBuilder.Key.random()
        var files = try validArchiveFiles().filter { $0.path != "metadata.json" }.map { ($0.path, try ArchiveBuilder.encrypt($0.data, with: key)) }
        files.append(("encryptionInfo/coremldata.bin", ArchiveBuilder.encryptionInfo(key.identifier)))
        var root = files.first { $0.0 == "coremldata.bin" }!.1
        root.replaceSubrange(0x10..<0x18, with: ArchiveBuilder.u64(9))
        let data = try ArchiveBuilder.zip(replacing(files, "coremldata.bin", with: root))
        let error = try #require(throws: EncryptionError.self) { try CoreMLModel(fileData: data, decryptor: try decryptor(key)) }
        #expect(error.code == .decryptionFailed)
        #expect(error.keyIdentifier == key.identifier)
        #expect(error.message.contains("not the 9 pages of 4096 bytes its header states"))
    }
}

@Suite("Mutated models and archives never crash", .timeLimit(.minutes(10)), .onOwnThreads)
struct MutationTests {

    /// `data` changed a few times: bytes flipped, set to extreme values, cut, repeated, removed.
    static func mutate(_ data: Data, _ generator: inout SeededGenerator) -> Data {
        var bytes = [UInt8](data)
        for _ in 0..<Int.random(in: 1...4, using: &generator) where !bytes.isEmpty {
            let at = Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<6, using: &generator) {
            case 0: bytes[at] ^= 1 << UInt8.random(in: 0...7, using: &generator)
            case 1: bytes[at] = [0, 0x7F, 0x80, 0xFF].randomElement(using: &generator)!
            case 2: bytes.removeSubrange(at...)
            case 3: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + Int.random(in: 1...64, using: &generator))], at: at)
            case 4: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...16, using: &generator)))
            default: bytes[at] = UInt8.random(in: 0...255, using: &generator)
            }
        }
        return Data(bytes)
    }

    /// Loads each mutation of `data`; when one loads, predicts with it too. Only this module's
    /// errors (or the decryptor's) may come out.
    static func run(_ data: Data, count: Int, seed: UInt64, decryptor: CoreMLArchiveDecryptor? = nil) -> (loaded: Int, refused: Int) {
        var generator = SeededGenerator(seed: seed)
        var loaded = 0, refused = 0
        for _ in 0..<count {
            let mutated = mutate(data, &generator)
            do {
                let model = try CoreMLModel(fileData: mutated, source: "mutated", decryptor: decryptor)
                loaded += 1
                if model.isTextClassifier {
                    _ = try? model.rankedLabels(for: "the storm and the rain!!! good bad", maximumCount: 3)
                }
                for input in model.info.inputs {
                    _ = try? model.prediction(from: [input.name: .stringDictionary(["good": 1, "bad": 2])])
                    _ = try? model.prediction(from: [input.name: .int64Dictionary([0: 1, 3: 2])])
                    _ = try? model.prediction(from: [input.name: .multiArray(values: [1, 2, 3], shape: [3])])
                }
            } catch is CoreMLError {
                refused += 1
            } catch is EncryptionError {
                refused += 1
            } catch {
                Issue.record("an error of another kind: \(error)")
            }
        }
        return (loaded, refused)
    }

    @Test("Thousands of mutations of exported .mlmodel files load or are refused")
    func models() throws {
        let classifier = try TextClassifier(trainingData: Corpus.training(), parameters: .init(algorithm: .linearSVM))
        for (index, data) in [try classifier.coreMLModelData(), try Specs.data(Specs.valid),
                              try hashedNaiveBayes(Corpus.training(), bits: 8).coreMLModelData()].enumerated() {
            let (loaded, refused) = Self.run(data, count: 1000, seed: UInt64(index + 1))
            #expect(loaded + refused == 1000)
        }
    }

    @Test("Hundreds of mutations of plain and encrypted archives load or are refused")
    func archives() throws {
        let plain = try ArchiveBuilder.archive(of: Specs.valid)
        let (loaded, refused) = Self.run(plain, count: 600, seed: 11)
        #expect(loaded + refused == 600)
        // A fixed key, so that every run mutates the same bytes.
        let key = ArchiveBuilder.Key(identifier: "00000000-0000-4000-8000-00000000000B", material: Array(0..<16), iv: Array(16..<32))
        let encrypted = try ArchiveBuilder.archive(of: Specs.valid, key: key)
        let result = Self.run(encrypted, count: 600, seed: 12, decryptor: try decryptor(key))
        #expect(result.loaded + result.refused == 600)
    }
}
