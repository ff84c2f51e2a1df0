import Foundation
import TestSupport
import Testing
@testable import MLKit

@Suite("Model files round-trip", .onOwnThreads)
struct ModelFileRoundTripTests {
    @Test("Writing and reading keeps every probability, label and piece of metadata",
          arguments: [TextClassifierParameters.Algorithm.naiveBayes, .complementNaiveBayes, .maxEnt, .linearSVM, .embedding])
    func roundTrip(algorithm: TextClassifierParameters.Algorithm) throws {
        let data = try Reference.headlines()
        let trained = try TextClassifier(trainingData: data, parameters: .init(algorithm: algorithm))
        let metadata = ModelMetadata(author: "Ada", shortDescription: "Headlines", license: "MIT", version: "1.2",
                                     additional: ["dataset": "texts.json"])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mlkit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("headlines.mlkit")
        try trained.write(to: url, metadata: metadata)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["headlines.mlkit"])  // no temporary left

        let loaded = try TextClassifier(contentsOf: url)
        #expect(loaded.formatVersion == 3)
        #expect(loaded.labels == trained.labels)
        #expect(loaded.metadata == metadata)
        #expect(loaded.trainingSummary?.algorithm == algorithm)
        #expect(loaded.validationMetrics == trained.validationMetrics)
        #expect(loaded.featurizer.vocabularyTerms == trained.featurizer.vocabularyTerms)
        for example in data.examples {
            #expect(loaded.predictedLabelHypotheses(for: example.text, maximumCount: 2)
                    == trained.predictedLabelHypotheses(for: example.text, maximumCount: 2))
        }
    }

    @Test("Hashed models store only the weight rows in use")
    func sparseRows() throws {
        let featurizer = try Featurizer(configuration: .init(indexing: .hashed(bits: 16)))
        var weights = [Float](repeating: 0, count: (1 << 16) * 2)
        weights[2 * 100] = 1.5
        weights[2 * 4000 + 1] = -2
        let model = LinearModel(features: 1 << 16, classes: 2, weights: weights, bias: [0.25, -0.25],
                                probability: .softmax(temperature: 1))
        let classifier = TextClassifier(labels: ["a", "b"], featurizer: featurizer, model: .linear(model),
                                        metadata: ModelMetadata(), trainingSummary: nil, trainingMetrics: nil,
                                        validationMetrics: nil, formatVersion: nil)
        let data = classifier.modelFileData()
        #expect(data.count < 2_000)
        let loaded = try TextClassifier(modelFileData: data)
        guard case .linear(let restored) = loaded.model else { Issue.record("not linear"); return }
        // The two stored rows are kept as they are, not expanded: the same weights, row by row.
        #expect(restored.storedRows == [100, 4000])
        #expect(restored.features == model.features && restored.classes == model.classes)
        #expect(restored.denseWeights == weights && restored.bias == model.bias && restored.probability == model.probability)
    }

    @Test("A written file holds the sections that modelFileData lays out in memory",
          arguments: [TextClassifierParameters.Algorithm.linearSVM, .embedding])
    func streamedWrite(algorithm: TextClassifierParameters.Algorithm) throws {
        let trained = try TextClassifier(trainingData: try Reference.headlines(), parameters: .init(algorithm: algorithm))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mlkit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("headlines.mlkit")
        try trained.write(to: url)
        // The header holds the time of writing, so only the sections can be compared byte for byte.
        let written = try ModelContainer.decode(Data(contentsOf: url), file: url.path, knownSections: ModelFileSection.all)
        let inMemory = try ModelContainer.decode(trained.modelFileData(), file: nil, knownSections: ModelFileSection.all)
        #expect(written.sections.count == inMemory.sections.count)
        for (name, section) in inMemory.sections {
            #expect(written.sections[name]?.bytes == section.bytes, "section \(name)")
        }
    }
}

@Suite("Damaged model files give clear errors", .onOwnThreads)
struct DamagedModelFileTests {
    static let golden: Data = {
        try! Data(contentsOf: Reference.models.appendingPathComponent("v1-headlines-svm.mlkit"))
    }()

    /// Rewrites the CRC-32 so that a deliberate change reaches the check after the checksum.
    static func resealed(_ data: Data) -> Data {
        var data = data
        let end = data.count - ModelContainer.footerSize + 8
        let crc = data.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<end])) }
        withUnsafeBytes(of: crc.littleEndian) { data.replaceSubrange(end..<(end + 4), with: $0) }
        return data
    }

    @Test("CRC-32 matches its published check value, whole or in pieces")
    func crcCheckValue() {
        let crc = Array("123456789".utf8).withUnsafeBytes { CRC32.checksum($0) }
        #expect(crc == 0xCBF4_3926)
        // In pieces, as the model writer feeds it, empty ones included.
        let pieces = ["1234", "", "5", "6789"].reduce(UInt32(0)) { crc, piece in
            Array(piece.utf8).withUnsafeBytes { CRC32.checksum($0, continuing: crc) }
        }
        #expect(pieces == 0xCBF4_3926)
    }

    @Test("A file that is not a model")
    func badMagic() {
        #expect(throws: MLKitError(.malformedData, "not an mlkit model file (its first bytes are not \"MLKITMOD\")",
                                   at: .init(file: "x.mlkit"))) {
            try TextClassifier(modelFileData: Data("{\"text\": 1}".utf8), source: "x.mlkit")
        }
    }

    @Test("A newer format version names both versions")
    func newerVersion() {
        var data = Self.golden
        data.replaceSubrange(8..<12, with: [5, 0, 0, 0])
        #expect(throws: MLKitError(.unsupportedVersion,
                                   "model format version 5 is newer than this mlkit reads (versions 1–4); upgrade mlkit",
                                   at: .init(file: "new.mlkit"))) {
            try TextClassifier(modelFileData: Self.resealed(data), source: "new.mlkit")
        }
    }

    @Test("A flipped byte anywhere is caught by the checksum")
    func flippedBytes() {
        for offset in stride(from: 12, to: Self.golden.count - 16, by: 97) {
            var data = Self.golden
            data[offset] ^= 0x40
            do {
                _ = try TextClassifier(modelFileData: data, source: "m.mlkit")
                Issue.record("a flipped byte at \(offset) was not detected")
            } catch let error as MLKitError {
                #expect(error.code == .malformedData)
                #expect(error.description.hasPrefix("m.mlkit: checksum mismatch"))
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
    }

    @Test("Truncation at any length is an error, never a crash")
    func truncation() {
        for length in Array(0..<64) + Array(stride(from: 64, to: Self.golden.count, by: 61)) {
            #expect(throws: MLKitError.self) {
                try TextClassifier(modelFileData: Self.golden.prefix(length), source: "cut.mlkit")
            }
        }
    }

    @Test("An unknown section is refused by name")
    func unknownSection() {
        let data = ModelContainer.encode(header: Data("{}".utf8),
                                         sections: [ModelContainer.section("future.weights", floats: [1, 2])])
        #expect(throws: MLKitError(.malformedData, "unknown section 'future.weights'", at: .init(file: "f.mlkit"))) {
            try TextClassifier(modelFileData: data, source: "f.mlkit")
        }
    }

    @Test("An inconsistent header names what does not fit")
    func inconsistentHeader() {
        let data = ModelContainer.encode(header: Data("{\"kind\": \"linear\"}".utf8), sections: [])
        do {
            _ = try TextClassifier(modelFileData: data, source: "h.mlkit")
            Issue.record("an invalid header was accepted")
        } catch let error as MLKitError {
            #expect(error.code == .malformedData)
            #expect(error.description.hasPrefix("h.mlkit: the model's header is invalid: missing field"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}
