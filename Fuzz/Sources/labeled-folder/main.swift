// The labelled-folder reader's decoding of one `.txt` file (byte-order mark, UTF-8 validation,
// the line and column of a bad byte), fed the input directly with both UTF-8 policies: the
// folder around the file brings names from the file system, not from the input. One input in
// 32 (by its CRC-32, so the choice is the same on every run) is also written into a real folder
// and read through `DatasetReader.read(contentsOf:format: .directory)`, which must agree.
import Foundation
import FuzzSupport
@_spi(Fuzzing) import MLKit

/// The folder of the real reads: `a/example.txt` (the input) and `b/plain.txt`.
let folder = URL(fileURLWithPath: NSTemporaryDirectory())
    .appendingPathComponent("mlkit-fuzz-labeled-folder-\(ProcessInfo.processInfo.processIdentifier)", isDirectory: true)
let example = folder.appendingPathComponent("a/example.txt")

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    Seeds.writeIfAsked {
        var seeds: [String: Data] = [:]
        for (index, example) in try Seeds.topics().examples.prefix(8).enumerated() {
            seeds["example-\(index).txt"] = Data(example.text.utf8)
        }
        seeds["bom.txt"] = Data([0xEF, 0xBB, 0xBF]) + Data("café\r\nline two".utf8)
        seeds["invalid.txt"] = Data("ok\nthen \u{FF}bad".utf8) + Data([0xC3, 0x28, 0xF0, 0x9F])
        return seeds
    }
    do {
        let manager = FileManager.default
        try manager.createDirectory(at: folder.appendingPathComponent("a"), withIntermediateDirectories: true)
        try manager.createDirectory(at: folder.appendingPathComponent("b"), withIntermediateDirectories: true)
        try Data("a plain example".utf8).write(to: folder.appendingPathComponent("b/plain.txt"))
    } catch {
        preconditionFailure("cannot make the harness's folder \(folder.path): \(error)")
    }
    atexit { try? FileManager.default.removeItem(at: folder) }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let data = FuzzInput.data(start, count)
    let strict = try? DatasetReader(invalidUTF8: .fail)._labeledFileText(data, source: "a/example.txt")
    let replaced: String
    do {
        replaced = try DatasetReader(invalidUTF8: .replace)._labeledFileText(data, source: "a/example.txt")
    } catch {
        preconditionFailure("with invalid UTF-8 replaced, any bytes must decode: \(error)")
    }
    if let strict { precondition(strict == replaced, "valid UTF-8 decodes the same under both policies") }

    guard CRC32.checksum(data) % 32 == 0 else { return 0 }
    do {
        try data.write(to: example)
    } catch {
        preconditionFailure("cannot write \(example.path): \(error)")
    }
    for (policy, expected) in [(InvalidUTF8Policy.fail, strict), (.replace, replaced)] {
        let dataset = try? DatasetReader(invalidUTF8: policy).read(contentsOf: folder, format: .directory)
        precondition(dataset?.examples.first?.text == expected, "the folder's reader and the decoding disagree")
        if let dataset { DatasetSeeds.use(dataset) }
    }
    return 0
}
