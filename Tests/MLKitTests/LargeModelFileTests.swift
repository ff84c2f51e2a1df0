import Foundation
import TestSupport
import Testing
@testable import MLKit

/// Models whose whole weight matrix is far larger than their file: the file stores the non-zero
/// rows, and the loader must read them back however large the matrix they come from.
@Suite("Large sparse models load back and predict as they did", .onOwnThreads)
struct LargeModelFileTests {
    /// Four short texts for each of `classes` labels, with words of the label's own and words
    /// that all labels share.
    private static func dataset(classes: Int) -> TextDataset {
        TextDataset((0..<classes).flatMap { label in
            (0..<4).map { example in
                LabeledText(text: "topic\(label) word\(label)x\(example) shared\(example % 2) news of the day",
                            label: "label-\(label)")
            }
        })
    }

    /// The texts whose probabilities are compared: seen ones, mixed ones, and unseen words.
    private static let texts = ["topic3 word3x1 shared1 news", "topic40 and topic7 shared0", "nothing seen here",
                                "word12x2 word12x3 of the day", "", "t3000", "t103000 t5 t7000", "t199000 t1000"]

    /// Every label's probability for each of ``texts``.
    private static func probabilities(_ classifier: TextClassifier) -> [[Double]] {
        texts.map { text in
            let hypotheses = classifier.predictedLabelHypotheses(for: text, maximumCount: classifier.labels.count)
            return classifier.labels.map { hypotheses[$0] ?? -1 }
        }
    }

    /// Loads `data`, checks that the matrix kept only its stored rows, that every probability
    /// matches `classifier`'s within 1e-6, and that writing it again gives the same weights.
    private static func checkRoundTrip(_ classifier: TextClassifier, data: Data, denseBytes: Int) throws {
        #expect(denseBytes > TextClassifier.denseExpansionBudget(ofFileLength: data.count),
                "the matrix must be too large to be expanded, or the test tries nothing")
        let loaded = try TextClassifier(modelFileData: data)
        guard case .linear(let model) = loaded.model else { Issue.record("not a linear model"); return }
        let rows = try #require(model.storedRows)
        #expect(model.weights.count == rows.count * model.classes)
        #expect(model.weights.count * MemoryLayout<Float>.stride <= data.count)
        for (expected, actual) in zip(probabilities(classifier), probabilities(loaded)) {
            for (p, q) in zip(expected, actual) { #expect(abs(p - q) <= 1e-6) }
        }
        #expect(probabilities(classifier).flatMap { $0 }.allSatisfy { $0 >= 0 })
        func weightSections(_ data: Data) throws -> [Data] {
            try ModelFileParts(data).sections.filter { $0.name.hasPrefix("linear.") }.map(\.bytes)
        }
        #expect(try weightSections(loaded.modelFileData()) == weightSections(data))
    }

    @Test("A maximum entropy model over 2^20 hashed buckets and 41 classes (172 MB of weights)")
    func hashedBuckets() throws {
        let data = Self.dataset(classes: 41)
        let configuration = FeaturizerConfiguration(maxWordNGram: 2, indexing: .hashed(bits: 20))
        let featurizer = try Featurizer(configuration: configuration)
        let classes = Dictionary(uniqueKeysWithValues: data.labels.enumerated().map { ($1, Int32($0)) })
        let problem = TrainingProblem(matrix: featurizer.matrix(for: data.examples.map(\.text), threads: 1),
                                      labels: data.examples.map { classes[$0.label]! }, classCount: data.labels.count)
        let model = try LogisticRegression(c: 10, threads: 1).fit(problem, start: nil).model
        #expect(model.features == 1 << 20 && model.classes == 41)
        let classifier = TextClassifier(labels: data.labels, featurizer: featurizer, model: .linear(model), metadata: ModelMetadata(),
                                        trainingSummary: nil, trainingMetrics: nil, validationMetrics: nil, formatVersion: nil)
        let file = classifier.modelFileData()
        #expect(file.count < 1 << 20)
        try Self.checkRoundTrip(classifier, data: file, denseBytes: (1 << 20) * 41 * MemoryLayout<Float>.stride)
    }

    @Test("A vocabulary of 200,000 terms and 100 classes whose rows are mostly zero (80 MB of weights)")
    func largeVocabulary() throws {
        let terms = (0..<200_000).map { "t\($0)" }
        let featurizer = Featurizer(configuration: FeaturizerConfiguration(indexing: .vocabulary(.init())),
                                    vocabulary: Vocabulary(terms: terms), inverseDocumentFrequency: nil)
        let classes = 100
        var weights = [Float](repeating: 0, count: terms.count * classes)
        // One row in a thousand is non-zero: term t(k·1000) votes for class k mod 100.
        for feature in stride(from: 0, to: terms.count, by: 1_000) {
            var row: Int32?
            featurizer.matrix(for: ["t\(feature)"], threads: 1).forEachRow(in: 0..<1) { _, indices, _ in row = indices.first }
            weights[Int(try #require(row)) * classes + (feature / 1_000) % classes] = 5
        }
        let model = LinearModel(features: terms.count, classes: classes, weights: weights,
                                bias: [Float](repeating: 0, count: classes), probability: .softmax(temperature: 1))
        let labels = (0..<classes).map { "c\($0)" }
        let classifier = TextClassifier(labels: labels, featurizer: featurizer, model: .linear(model), metadata: ModelMetadata(),
                                        trainingSummary: nil, trainingMetrics: nil, validationMetrics: nil, formatVersion: nil)
        let file = classifier.modelFileData()
        try Self.checkRoundTrip(classifier, data: file, denseBytes: terms.count * classes * MemoryLayout<Float>.stride)
        let loaded = try TextClassifier(modelFileData: file)
        #expect(loaded.predictedLabel(for: "t3000") == "c3")
        #expect(loaded.predictedLabel(for: "t103000 t5") == "c3")
    }

    #if canImport(Glibc)
    @Test("A small file that claims 2^24 features makes resident only the pages of its row table that it uses")
    func rowTableOfFewRows() throws {
        let features = 1 << 24
        let featurizer = try Featurizer(configuration: FeaturizerConfiguration(indexing: .hashed(bits: 24)))
        let stored = LinearModel(features: features, classes: 2, rows: [7, 9_000_000], weights: [1, 0, 0, -1],
                                 bias: [0.5, 0], probability: .softmax(temperature: 1))
        let classifier = TextClassifier(labels: ["a", "b"], featurizer: featurizer, model: .linear(stored), metadata: ModelMetadata(),
                                        trainingSummary: nil, trainingMetrics: nil, validationMetrics: nil, formatVersion: nil)
        let file = classifier.modelFileData()
        let tableBytes = features * MemoryLayout<Int32>.stride
        #expect(file.count < 1 << 16 && tableBytes <= TextClassifier.denseExpansionBudget(ofFileLength: file.count),
                "the file must be small and its table within the budget, or the test tries nothing")
        let before = threadPageFaults()
        let loaded = try TextClassifier(modelFileData: file)
        let faults = threadPageFaults() - before
        // The whole table is 16,384 pages of 4 KiB; two of them hold entries.
        #expect(faults < 1_024, "\(faults) page faults to load a \(file.count)-byte file")
        guard case .linear(let model) = loaded.model else { Issue.record("not a linear model"); return }
        #expect(model.rowPositions?.count == features)
        let indices: [Int32] = [3, 7, 8_999_999, 9_000_000, Int32(features - 1)]
        var scores = [Float](repeating: .nan, count: 2)
        indices.withUnsafeBufferPointer { indices in
            [Float](repeating: 2, count: indices.count).withUnsafeBufferPointer { values in
                scores.withUnsafeMutableBufferPointer { model.scores(indices: indices, values: values, into: $0) }
            }
        }
        // The bias, plus twice row 7 (1, 0) and twice row 9,000,000 (0, -1).
        #expect(scores == [2.5, -2])
    }
    #endif
}

