public import Foundation
public import MLKit

/// Seed inputs, made from the project's own fixtures when a run starts.
///
/// `run.sh` sets `MLKIT_FUZZ_SEEDS` to the harness's corpus folder; a harness's
/// `LLVMFuzzerInitialize` calls ``writeIfAsked(_:)``, which fills the folder when it is empty.
/// No seed file is committed: they are all derived from `Tests/` fixtures.
public enum Seeds {
    /// The repository's root: this file is `Fuzz/Sources/FuzzSupport/Seeds.swift`.
    public static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The core tests' fixtures folder.
    public static let fixtures = repository.appendingPathComponent("Tests/MLKitTests/Fixtures")

    /// When `MLKIT_FUZZ_SEEDS` names a folder without files, writes the seeds `make` returns
    /// into it, by name.
    public static func writeIfAsked(_ make: () throws -> [String: Data]) {
        guard let path = ProcessInfo.processInfo.environment["MLKIT_FUZZ_SEEDS"], !path.isEmpty else { return }
        let folder = URL(fileURLWithPath: path, isDirectory: true)
        let manager = FileManager.default
        if let existing = try? manager.contentsOfDirectory(atPath: path), !existing.isEmpty { return }
        do {
            try manager.createDirectory(at: folder, withIntermediateDirectories: true)
            let seeds = try make()
            for (name, data) in seeds { try data.write(to: folder.appendingPathComponent(name)) }
            FileHandle.standardError.write(Data("wrote \(seeds.count) seeds into \(path)\n".utf8))
        } catch {
            FileHandle.standardError.write(Data("cannot write the seeds into \(path): \(error)\n".utf8))
            exit(1)
        }
    }

    /// The labelled examples the golden models are trained on (`Fixtures/datasets/topics.json`).
    public static func topics() throws -> TextDataset {
        try DatasetReader().read(contentsOf: fixtures.appendingPathComponent("datasets/topics.json"))
    }

    /// The bytes of every file with extension `ext` in `folder`, a path from the repository's
    /// root, by file name (none when there is no such folder).
    public static func files(in folder: String, extension ext: String) throws -> [String: Data] {
        let url = repository.appendingPathComponent(folder)
        var result: [String: Data] = [:]
        guard FileManager.default.fileExists(atPath: url.path) else { return result }
        for name in try FileManager.default.contentsOfDirectory(atPath: url.path) where name.hasSuffix("." + ext) {
            result[name] = try Data(contentsOf: url.appendingPathComponent(name))
        }
        return result
    }

    /// A small model of each algorithm, trained on two texts of each label of ``topics()``, in
    /// every format version (`small-nb-v1.mlkit`, …), and the golden hashed model: small
    /// files, so that most mutations land in the header and the section table.
    public static func smallModels() throws -> [String: Data] {
        let examples = try topics().examples
        let labels = Set(examples.map(\.label)).sorted()
        let few = TextDataset(labels.flatMap { label in examples.filter { $0.label == label }.prefix(2) })
        var result: [String: Data] = [:]
        for algorithm in TextClassifierParameters.Algorithm.allCases where algorithm != .automatic {
            let classifier = try TextClassifier(trainingData: few,
                                                parameters: .init(algorithm: algorithm, validation: .none, seed: 1, threads: 1))
            guard let layout = ModelFileLayout(classifier.modelFileData()) else { continue }
            for version: UInt32 in 1...3 {
                result["small-\(algorithm.rawValue)-v\(version).mlkit"] = try layout.inVersion(version).data
            }
        }
        let golden = try files(in: "Tests/MLKitTests/Fixtures/models", extension: "mlkit")
        let hashed = golden.filter { $0.key.hasSuffix("-hashed.mlkit") }
        result.merge(hashed) { $1 }
        // The golden word tagger, so that mutations reach the tagger's decoder too.
        result.merge(golden.filter { $0.key.hasSuffix("-tagger.mlkit") }) { $1 }
        // The golden hashed model over 2^24 buckets: its whole matrix is larger than the loader
        // expands, so it keeps the stored rows, and mutations reach that path too.
        if let golden = hashed["v3-topics-hashed.mlkit"], var layout = ModelFileLayout(golden),
           var header = try JSONSerialization.jsonObject(with: layout.header) as? [String: Any],
           var featurizer = header["featurizer"] as? [String: Any] {
            featurizer["indexing"] = ["hashed": ["bits": 24]]
            header["featurizer"] = featurizer
            header["features"] = 1 << 24
            layout.header = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
            result["stored-rows-hashed-v3.mlkit"] = layout.data
        }
        return result
    }
}
