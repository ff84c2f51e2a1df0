public import Foundation
import ZIPFoundation

/// Decrypts one file of an encrypted model archive: given the file's bytes and the key
/// identifier that the archive names, it returns the plain bytes.
///
/// `MLKitCoreML` does no cryptography itself, so that reading plain models costs no crypto
/// library; `MLKitEncryption` provides the decryption (`ModelArchiveDecryption`), and the
/// caller joins the two with its key:
///
/// ```swift
/// let key = try ModelKey(contentsOf: URL(fileURLWithPath: "SentimentPolarity.mlmodelkey"))
/// let model = try CoreMLModel(contentsOf: archive) { file, identifier in
///     try ModelArchiveDecryption.decrypt(file, keyIdentifier: identifier, with: key)
/// }
/// ```
///
/// Whatever it throws reaches the caller unchanged.
public typealias CoreMLArchiveDecryptor = (_ encryptedFile: Data, _ keyIdentifier: String) throws -> Data

/// Reads a model archive (`.mlarchive`), the zip of compiled model parts that Core ML Model
/// Deployment takes, and rebuilds the model's specification from it.
///
/// The archive holds `metadata.json` and one compiled `coremldata.bin` per model of the
/// pipeline tree: the root's at the top, a pipeline's stages in `model0/`, `model1/`, … below
/// it (``CompiledNode``). An encrypted archive adds `encryptionInfo/coremldata.bin`, which names
/// the key, and every other file is encrypted (``ArchiveEncryptionInfo``).
enum ModelArchive {
    /// The name of a node's file within its folder.
    static let nodeFile = "coremldata.bin"
    /// The entry that marks an encrypted archive and names its key.
    static let encryptionInfoEntry = "encryptionInfo/coremldata.bin"

    /// Whether `data` starts as a zip file does.
    static func isArchive(_ data: Data) -> Bool {
        data.count >= 4 && data.prefix(2).elementsEqual([0x50, 0x4B])
            && (data.dropFirst(2).prefix(2).elementsEqual([0x03, 0x04]) || data.dropFirst(2).prefix(2).elementsEqual([0x05, 0x06]))
    }

    /// The key identifier of an encrypted archive, or `nil` for a plain one.
    /// - Throws: ``CoreMLError`` (`malformedModel`) when it is not a readable archive.
    static func keyIdentifier(of data: Data) throws -> String? {
        let reader = try ArchiveReader(data)
        guard let info = try reader.file(encryptionInfoEntry, required: false) else { return nil }
        return try ArchiveEncryptionInfo(info).keyIdentifier
    }

    /// Rebuilds the specification an archive holds.
    /// - Parameters:
    ///   - data: The archive's bytes.
    ///   - decryptor: Decrypts the files of an encrypted archive; `nil` when there is no key.
    /// - Throws: ``CoreMLError``: `malformedModel` naming the entry at fault, `keyUnavailable`
    ///   for an encrypted archive without a decryptor, `wrongKey` when its files do not decrypt
    ///   to model parts; or what `decryptor` throws.
    static func specification(of data: Data, decryptor: CoreMLArchiveDecryptor?) throws -> SpecModel {
        let reader = try ArchiveReader(data)
        var keyIdentifier: String?
        if let info = try reader.file(encryptionInfoEntry, required: false) {
            let identifier = try ArchiveEncryptionInfo(info).keyIdentifier
            guard decryptor != nil else {
                throw CoreMLError(.keyUnavailable, "key unavailable: the archive is encrypted with key \(identifier) "
                                  + "and no key was given")
            }
            keyIdentifier = identifier
        }
        var model = try node(at: "", reader: reader) { name, bytes in
            guard let keyIdentifier, let decryptor else { return bytes }
            return try decryptor(bytes, keyIdentifier)
        } wrongKey: { name, problem in
            guard let keyIdentifier else { return problem }
            return CoreMLError(.wrongKey, "wrong key: entry '\(name)' does not decrypt to a model part with key "
                               + "\(keyIdentifier) (\(problem.reason)): the key's material is not the one the archive "
                               + "was encrypted with, or the archive is damaged")
        }
        if let metadata = try reader.file("metadata.json", required: false) {
            model.specificationVersion = try specificationVersion(inMetadata: metadata) ?? model.specificationVersion
        }
        return model
    }

    /// The specification version that `metadata.json` states, if it states one.
    private static func specificationVersion(inMetadata data: Data) throws -> Int32? {
        guard let object = try? JSONSerialization.jsonObject(with: data) else {
            throw CoreMLError(.malformedModel, "entry 'metadata.json' is not JSON")
        }
        let entries = (object as? [Any]) ?? [object]
        guard let first = entries.first as? [String: Any] else {
            throw CoreMLError(.malformedModel, "entry 'metadata.json' is not a JSON object or an array of them")
        }
        guard let version = first["specificationVersion"] else { return nil }
        guard let number = version as? Int, number > 0, number <= Int(Int32.max) else {
            throw CoreMLError(.malformedModel, "entry 'metadata.json': field \"specificationVersion\" is not a positive integer")
        }
        return Int32(number)
    }

    /// The model of the node in `folder` (`""` for the root, `model0/` for its first stage),
    /// with its stages if it is a pipeline.
    /// - Parameters:
    ///   - open: Turns an entry's stored bytes into its plain bytes (decrypts them).
    ///   - wrongKey: Turns a parsing failure of decrypted bytes into the error to report.
    private static func node(at folder: String, reader: ArchiveReader, depth: Int = 0,
                             open: (String, Data) throws -> Data,
                             wrongKey: (String, CoreMLError) -> CoreMLError) throws -> SpecModel {
        guard depth <= Limits.maximumPipelineDepth else {
            throw CoreMLError(.malformedModel, "entry '\(folder)': pipelines nest more than \(Limits.maximumPipelineDepth) deep")
        }
        let name = folder + nodeFile
        let stored = try reader.file(name, required: true)!
        let compiled: CompiledNode
        do {
            compiled = try CompiledNode(open(name, stored), entry: name)
        } catch let error as CoreMLError where error.code == .malformedModel {
            throw wrongKey(name, error)
        }
        switch compiled.content {
        case .leaf(let model):
            return model
        case .pipeline(let type, let description, let declaredStages):
            var stages: [SpecModel] = []
            while reader.has("\(folder)model\(stages.count)/\(nodeFile)") {
                guard stages.count < Limits.maximumArchiveEntries else { break }
                stages.append(try node(at: "\(folder)model\(stages.count)/", reader: reader, depth: depth + 1,
                                       open: open, wrongKey: wrongKey))
            }
            if let declaredStages, declaredStages != stages.count {
                throw CoreMLError(.malformedModel, "entry '\(name)': the pipeline node names \(declaredStages) stages, "
                                  + "but the archive holds \(stages.count)")
            }
            guard !stages.isEmpty else {
                throw CoreMLError(.malformedModel, "entry '\(name)': a pipeline node without stages (no \(folder)model0/\(nodeFile))")
            }
            var pipeline = SpecPipeline()
            pipeline.models = stages
            var model = SpecModel()
            model.specificationVersion = stages.map(\.specificationVersion).max() ?? 1
            model.description_p = description
            switch type {
            case 200:
                var classifier = SpecPipelineClassifier()
                classifier.pipeline = pipeline
                model.type = .pipelineClassifier(classifier)
            case 201:
                var regressor = SpecPipelineRegressor()
                regressor.pipeline = pipeline
                model.type = .pipelineRegressor(regressor)
            default:
                model.type = .pipeline(pipeline)
            }
            return model
        }
    }
}

/// The files of a zip archive, listed by ZIPFoundation and inflated with its decoder, each
/// expanded under a cap; ``ZipStructure`` checks the archive first and gives each entry's
/// stored bytes.
final class ArchiveReader {
    private let data: Data
    private let entries: [String: (entry: Entry, location: ZipStructure.Location)]
    /// The bytes expanded so far, for the cap on the whole archive.
    private var expanded = 0
    /// The most one entry may expand to.
    private let entryLimit: Int
    /// The most all entries may expand to, together.
    private let totalLimit: Int

    /// Opens an archive; the limits are ``Limits``' unless a test asks for smaller ones.
    init(_ data: Data, entryLimit: Int = Limits.maximumArchiveEntrySize,
         totalLimit: Int = Limits.maximumArchiveExpansion) throws {
        self.data = data
        self.entryLimit = entryLimit
        self.totalLimit = totalLimit
        let locations = try ZipStructure.check(data)
        let archive: Archive
        do {
            archive = try Archive(data: data, accessMode: .read)
        } catch {
            throw CoreMLError(.malformedModel, "not a model archive: the zip's central directory cannot be read (\(error))")
        }
        var entries: [String: (entry: Entry, location: ZipStructure.Location)] = [:]
        var count = 0
        for entry in archive {
            guard count < locations.count else { break }
            guard entries.updateValue((entry, locations[count]), forKey: entry.path) == nil else {
                throw CoreMLError(.malformedModel, "entry '\(entry.path)' appears twice in the archive")
            }
            count += 1
        }
        guard count == locations.count else {
            throw CoreMLError(.malformedModel, "not a model archive: its central directory lists \(locations.count) entries, "
                              + "of which \(count) can be read")
        }
        self.entries = entries
    }

    /// Whether the archive has a file named `name`.
    func has(_ name: String) -> Bool { entries[name]?.entry.type == .file }

    /// The expanded bytes of file `name`, or `nil` when it is absent and not `required`.
    /// - Throws: ``CoreMLError`` (`malformedModel`) naming the entry: missing, not a file,
    ///   larger than ``Limits/maximumArchiveEntrySize`` (declared or once expanded), a total
    ///   past ``Limits/maximumArchiveExpansion``, or a damaged entry (bad compressed data, wrong
    ///   checksum or size).
    func file(_ name: String, required: Bool) throws -> Data? {
        guard let (entry, location) = entries[name] else {
            guard required else { return nil }
            throw CoreMLError(.malformedModel, "the archive has no entry '\(name)'")
        }
        guard entry.type == .file else { throw CoreMLError(.malformedModel, "entry '\(name)' is not a file") }
        let limit = entryLimit
        guard entry.uncompressedSize <= UInt64(limit) else {
            throw CoreMLError(.malformedModel, "entry '\(name)' expands to \(entry.uncompressedSize) bytes, more than the "
                              + "limit of \(limit)")
        }
        let stored = data.subdata(in: (data.startIndex + location.data.lowerBound)..<(data.startIndex + location.data.upperBound))
        // Deflate expands at most 1032 to 1; a header that states more is lying.
        let most = location.method == 0 ? stored.count : stored.count * 1032 + 1024
        guard entry.uncompressedSize <= UInt64(most) else {
            throw CoreMLError(.malformedModel, "entry '\(name)' states \(entry.uncompressedSize) bytes from "
                              + "\(stored.count) stored, more than its compression can give")
        }
        var expandedData = Data()
        switch location.method {
        case 0:
            expandedData = stored
            try count(stored.count, name)
        case 8:
            expandedData.reserveCapacity(min(Int(entry.uncompressedSize), 1 << 26))
            do {
                // Only the entry's own bytes are inflated: past them the stream is cut short. The
                // decoder gives zlib a whole buffer whatever the chunk's length, so a short last
                // chunk is filled up with zeros, which no stream continues with for long.
                _ = try Data.decompress(size: Int64(stored.count), bufferSize: 1 << 16, skipCRC32: true, provider: { position, size in
                    guard position < Int64(stored.count) else { throw Damage.cutShort }
                    let start = stored.startIndex + Int(position)
                    var chunk = stored.subdata(in: start..<min(start + size, stored.endIndex))
                    if chunk.count < size { chunk.append(Data(count: size - chunk.count)) }
                    return chunk
                }, consumer: { chunk in
                    guard expandedData.count + chunk.count <= limit else { throw Damage.oversized }
                    try self.count(chunk.count, name)
                    expandedData.append(chunk)
                })
            } catch Damage.oversized {
                throw CoreMLError(.malformedModel, "entry '\(name)' expands past the limit of \(limit) bytes")
            } catch Damage.cutShort {
                throw CoreMLError(.malformedModel, "entry '\(name)' is damaged: its compressed data ends before its stream does")
            } catch let error as CoreMLError {
                throw error
            } catch {
                throw CoreMLError(.malformedModel, "entry '\(name)' is damaged: its compressed data cannot be inflated (\(error))")
            }
        default:
            throw CoreMLError(.malformedModel, "entry '\(name)' is damaged: unknown compression method \(location.method)")
        }
        guard expandedData.count == Int(entry.uncompressedSize) else {
            throw CoreMLError(.malformedModel, "entry '\(name)' expands to \(expandedData.count) bytes, not the "
                              + "\(entry.uncompressedSize) its header states")
        }
        guard expandedData.crc32(checksum: 0) == location.checksum else {
            throw CoreMLError(.malformedModel, "entry '\(name)' is damaged: its checksum does not match")
        }
        return expandedData
    }

    /// Counts expanded bytes against the cap on the whole archive.
    private func count(_ bytes: Int, _ name: String) throws {
        expanded += bytes
        guard expanded <= totalLimit else {
            throw CoreMLError(.malformedModel, "the archive's entries expand past the limit of \(totalLimit) bytes together")
        }
    }

    private enum Damage: Error {
        case oversized, cutShort
    }
}
