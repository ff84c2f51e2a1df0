import Foundation
import TestSupport
import Testing
@testable import MLKit

/// A model file taken apart, so that a test can change one thing and write it again with a
/// valid length and CRC-32: what reaches the decoder behind the checksum.
struct ModelFileParts {
    var header: [String: Any]
    var sections: [(name: String, type: ModelContainer.ElementType, bytes: Data)]
    var version: UInt32 = ModelContainer.currentVersion

    /// The parts of a file that mlkit wrote, a classifier's unless `knownSections` says otherwise.
    init(_ data: Data, knownSections: Set<String> = ModelFileSection.all) throws {
        let container = try ModelContainer.decode(data, file: nil, knownSections: knownSections)
        version = container.version
        header = try #require(try JSONSerialization.jsonObject(with: container.header) as? [String: Any])
        sections = container.sections.values.sorted { $0.name < $1.name }.map { ($0.name, $0.type, Data($0.bytes)) }
    }

    /// A naive Bayes model over a vocabulary of the words of six short texts, three labels.
    static func vocabularyModel() throws -> ModelFileParts {
        try ModelFileParts(try smallClassifier(.naiveBayes).modelFileData())
    }

    /// An embedding model over hashed buckets, trained on the same texts.
    static func embeddingModel() throws -> ModelFileParts {
        try ModelFileParts(try smallClassifier(.embedding).modelFileData())
    }

    /// A linear model over 2^10 hashed buckets that stores only its two non-zero rows.
    static func hashedModel() throws -> ModelFileParts {
        let featurizer = try Featurizer(configuration: .init(indexing: .hashed(bits: 10)))
        var weights = [Float](repeating: 0, count: (1 << 10) * 2)
        weights[2 * 7] = 1
        weights[2 * 900 + 1] = -1
        let model = LinearModel(features: 1 << 10, classes: 2, weights: weights, bias: [0, 0], probability: .softmax(temperature: 1))
        let classifier = TextClassifier(labels: ["a", "b"], featurizer: featurizer, model: .linear(model), metadata: ModelMetadata(),
                                        trainingSummary: nil, trainingMetrics: nil, validationMetrics: nil, formatVersion: nil)
        return try ModelFileParts(classifier.modelFileData())
    }

    private static func smallClassifier(_ algorithm: TextClassifierParameters.Algorithm) throws -> TextClassifier {
        let examples = [("rain and wind", "weather"), ("snow tonight", "weather"), ("bake the bread", "kitchen"),
                        ("stir the soup", "kitchen"), ("a late goal", "sport"), ("the final lap", "sport")]
        return try TextClassifier(trainingData: TextDataset(examples.map { LabeledText(text: $0.0, label: $0.1) }),
                                  parameters: .init(algorithm: algorithm, validation: .none, seed: 1, threads: 1))
    }

    /// The file: header as sorted JSON, the sections in order, a valid footer.
    func encoded() throws -> Data {
        let json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        let output = sections.map { section in
            ModelContainer.OutputSection(name: section.name, type: section.type, count: section.bytes.count) { emit in
                try section.bytes.withUnsafeBytes { try emit($0) }
            }
        }
        return ModelContainer.encode(header: json, sections: output, version: version)
    }

    /// Replaces the bytes of section `name`, or adds it.
    mutating func set(_ name: String, _ type: ModelContainer.ElementType, _ bytes: Data) {
        sections.removeAll { $0.name == name }
        sections.append((name, type, bytes))
    }

    mutating func remove(_ name: String) { sections.removeAll { $0.name == name } }

    /// The featurizer object of the header, changed by `change`.
    mutating func changeFeaturizer(_ change: (inout [String: Any]) -> Void) {
        var featurizer = header["featurizer"] as? [String: Any] ?? [:]
        change(&featurizer)
        header["featurizer"] = featurizer
    }

    static func bytes(of values: [UInt64]) -> Data { values.withUnsafeBytes { Data($0) } }
    static func bytes(of values: [Float]) -> Data { values.withUnsafeBytes { Data($0) } }
}

/// Loads `parts` and returns the error, recording an issue when it loads.
private func refusal(_ parts: ModelFileParts, sourceLocation: SourceLocation = #_sourceLocation) throws -> MLKitError? {
    do {
        _ = try TextClassifier(modelFileData: try parts.encoded(), source: "m.mlkit")
        Issue.record("the model loaded", sourceLocation: sourceLocation)
    } catch let error as MLKitError {
        #expect(error.code == .malformedData, "\(error)", sourceLocation: sourceLocation)
        #expect(error.location?.file == "m.mlkit", sourceLocation: sourceLocation)
        return error
    }
    return nil
}

@Suite("Model files that pass the checksum but do not hold together are refused", .onOwnThreads)
struct InconsistentModelFileTests {
    @Test("The parts of a valid file load again as they are")
    func unchangedPartsLoad() throws {
        for parts in [try ModelFileParts.vocabularyModel(), try .embeddingModel(), try .hashedModel()] {
            let classifier = try TextClassifier(modelFileData: try parts.encoded())
            #expect(!classifier.labels.isEmpty)
            #expect(classifier.labels.contains(classifier.predictedLabel(for: "rain")))
        }
    }

    @Test("A label that appears twice is refused: the labels key dictionaries of probabilities")
    func duplicateLabels() throws {
        var parts = try ModelFileParts.vocabularyModel()
        parts.header["labels"] = ["kitchen", "kitchen", "weather"]
        #expect(try refusal(parts)?.reason == "inconsistent model: a label appears twice")
        // Equal as Swift strings, though not byte for byte: a dictionary keyed by label traps on them too.
        parts.header["labels"] = ["caf\u{E9}", "cafe\u{301}", "weather"]
        #expect(try refusal(parts)?.reason == "inconsistent model: a label appears twice")
    }

    @Test("Platt coefficients must be one pair per class, finite: prediction reads one per class")
    func plattCoefficients() throws {
        var parts = try ModelFileParts.vocabularyModel()
        parts.header["probability"] = ["platt": ["a": [1.0], "b": [0.5]]]
        #expect(try refusal(parts)?.reason == "inconsistent model: 1 and 1 Platt coefficients for 3 classes")
        parts.header["probability"] = ["platt": ["a": [1.0, 2, 3], "b": [0.5, 0.5, "nan"]]]
        #expect(try refusal(parts)?.reason == "inconsistent model: a Platt coefficient is not a finite number")
    }

    @Test("A softmax temperature must be a positive number", arguments: [0.0, -1.0])
    func temperature(value: Double) throws {
        var parts = try ModelFileParts.vocabularyModel()
        parts.header["probability"] = ["softmax": ["temperature": value]]
        #expect(try refusal(parts)?.reason.hasPrefix("inconsistent model: softmax temperature") == true)
        parts.header["probability"] = ["softmax": ["temperature": "inf"]]
        #expect(try refusal(parts)?.reason == "inconsistent model: softmax temperature inf")
    }

    @Test("A vocabulary in a hashed model is refused: its indices would run past the weight rows")
    func vocabularyInHashedModel() throws {
        var parts = try ModelFileParts.hashedModel()
        // 2,000 entries for 2^10 rows of weights.
        let terms = (0..<2_000).map { "t\($0)" }
        parts.set(ModelFileSection.vocabularyHashes, .uint64, ModelFileParts.bytes(of: terms.map(FeatureHash.of)))
        parts.set(ModelFileSection.vocabularyTerms, .utf8, Data(PackedStrings(terms).bytes))
        #expect(try refusal(parts)?.reason == "inconsistent model: a vocabulary in a model whose features are hashed")
    }

    @Test("Vocabulary indexing needs both vocabulary sections, as long as each other")
    func vocabularySections() throws {
        var parts = try ModelFileParts.vocabularyModel()
        parts.remove(ModelFileSection.vocabularyHashes)
        #expect(try refusal(parts)?.reason == "the model has no 'vocabulary.hashes' section")
        parts = try ModelFileParts.vocabularyModel()
        parts.set(ModelFileSection.vocabularyHashes, .uint64, ModelFileParts.bytes(of: [UInt64]([1, 2])))
        #expect(try refusal(parts)?.reason.hasPrefix("inconsistent model: 2 vocabulary hashes for ") == true)
    }

    @Test("A vocabulary that holds a feature twice is refused: a lookup would find only the first")
    func repeatedVocabularyTerm() throws {
        var parts = try ModelFileParts.vocabularyModel()
        let terms = ["rain", "sun", "rain"]
        parts.set(ModelFileSection.vocabularyHashes, .uint64, ModelFileParts.bytes(of: terms.map(FeatureHash.of)))
        parts.set(ModelFileSection.vocabularyTerms, .utf8, Data(PackedStrings(terms).bytes))
        #expect(try refusal(parts)?.reason == "inconsistent model: vocabulary entries 0 and 2 hold the same feature")
    }

    @Test("IDF values must be finite and not negative", arguments: [Float.nan, .infinity, -1])
    func badInverseDocumentFrequency(value: Float) throws {
        var parts = try ModelFileParts.vocabularyModel()
        let features = try #require(parts.header["features"] as? Int)
        var idf = [Float](repeating: 1.5, count: features)
        idf[features - 1] = value
        parts.changeFeaturizer { $0["weighting"] = "tfidf" }
        parts.set(ModelFileSection.inverseDocumentFrequency, .float32, ModelFileParts.bytes(of: idf))
        #expect(try refusal(parts)?.reason
                == "inconsistent model: the idf value of feature \(features - 1) is \(value), not a finite number of at least 0")
        idf[features - 1] = 0
        parts.set(ModelFileSection.inverseDocumentFrequency, .float32, ModelFileParts.bytes(of: idf))
        _ = try TextClassifier(modelFileData: try parts.encoded())
    }

    @Test("IDF values come with TF-IDF weighting only, one per feature")
    func inverseDocumentFrequencies() throws {
        var parts = try ModelFileParts.vocabularyModel()
        parts.set(ModelFileSection.inverseDocumentFrequency, .float32, ModelFileParts.bytes(of: [Float](repeating: 1, count: 3)))
        #expect(try refusal(parts)?.reason == "inconsistent model: idf values in a model weighted by counts, not tfidf")
        parts.changeFeaturizer { $0["weighting"] = "tfidf" }
        #expect(try refusal(parts)?.reason.hasPrefix("inconsistent model: 3 idf values for ") == true)
        parts.remove(ModelFileSection.inverseDocumentFrequency)
        #expect(try refusal(parts)?.reason == "the model has no 'features.idf' section")
    }

    @Test("A small file that claims a huge weight matrix loads without allocating it")
    func hugeSparseMatrix() throws {
        var parts = try ModelFileParts.hashedModel()
        // 2^28 rows of 4,000 classes: 4 TB of weights, from a file of about 40 KB that stores one row.
        let labels = (0..<4_000).map { "c\($0)" }
        parts.header["labels"] = labels
        parts.header["classes"] = labels.count
        parts.header["features"] = 1 << 28
        parts.changeFeaturizer { $0["indexing"] = ["hashed": ["bits": 28]] }
        var rows: [Int32] = []
        try Featurizer(configuration: .init(indexing: .hashed(bits: 28))).matrix(for: ["rain"], threads: 1)
            .forEachRow(in: 0..<1) { _, indices, _ in rows = indices.sorted() }
        #expect(!rows.isEmpty)
        var weights = [Float](repeating: 0, count: rows.count * labels.count)
        for position in rows.indices { weights[position * labels.count + 17] = 30 }
        parts.set(ModelFileSection.weightRows, .uint64, ModelFileParts.bytes(of: rows.map { UInt64($0) }))
        parts.set(ModelFileSection.weights, .float32, ModelFileParts.bytes(of: weights))
        parts.set(ModelFileSection.bias, .float32, ModelFileParts.bytes(of: [Float](repeating: 0, count: labels.count)))
        let data = try parts.encoded()
        #expect(data.count < 100_000)
        let classifier = try TextClassifier(modelFileData: data)
        guard case .linear(let model) = classifier.model else { Issue.record("not a linear model"); return }
        #expect(model.storedRows == rows)
        #expect(model.weights.count == rows.count * labels.count)
        #expect(classifier.predictedLabel(for: "rain") == "c17")
        // A feature without a stored row scores nothing: every class stays at its bias.
        let other = try #require(classifier.predictedLabelHypotheses(for: "snow", maximumCount: 2).values.first)
        #expect(abs(other - 1.0 / 4_000) < 1e-9)
        // Written again, it keeps the stored rows as they were.
        #expect(try ModelFileParts(classifier.modelFileData()).sections.filter { $0.name.hasPrefix("linear.") }.map(\.bytes)
                == parts.sections.filter { $0.name.hasPrefix("linear.") }.sorted { $0.name < $1.name }.map(\.bytes))
    }

    @Test("Stored weight rows must increase and lie below the feature count")
    func storedRows() throws {
        var parts = try ModelFileParts.hashedModel()
        parts.set(ModelFileSection.weightRows, .uint64, ModelFileParts.bytes(of: [UInt64]([900, 7])))
        #expect(try refusal(parts)?.reason == "inconsistent model: the stored weight rows must increase and lie below 1024")
        parts.set(ModelFileSection.weightRows, .uint64, ModelFileParts.bytes(of: [UInt64]([7, 1 << 40])))
        #expect(try refusal(parts)?.reason == "inconsistent model: the stored weight rows must increase and lie below 1024")
    }

    @Test("Embedding sizes whose products overflow are refused, not trapped on")
    func embeddingOverflow() throws {
        var parts = try ModelFileParts.embeddingModel()
        parts.header["dimension"] = Int.max / 2
        #expect(try refusal(parts)?.reason.hasPrefix("inconsistent model: embedding arrays do not match") == true)
    }

    @Test("A linear model's sections in an embedding model, and the other way round, are refused")
    func sectionsOfTheOtherKind() throws {
        var parts = try ModelFileParts.embeddingModel()
        parts.set(ModelFileSection.bias, .float32, ModelFileParts.bytes(of: [Float](repeating: 0, count: 3)))
        #expect(try refusal(parts)?.reason == "inconsistent model: section 'linear.bias' in an embedding model")
        parts = try ModelFileParts.hashedModel()
        parts.set(ModelFileSection.embeddingBias, .float32, ModelFileParts.bytes(of: [Float](repeating: 0, count: 2)))
        #expect(try refusal(parts)?.reason == "inconsistent model: section 'embedding.bias' in a linear model")
    }

    @Test("Metrics whose confusion matrix does not fit the labels are refused: mlkit info reads every cell")
    func metrics() throws {
        var parts = try ModelFileParts.vocabularyModel()
        let metrics: [String: Any] = ["labels": ["a", "b", "c"], "confusion": [[1, 0], [0, 1]], "topKAccuracy": [1, 1, 1, 1, 1]]
        parts.header["validationMetrics"] = metrics
        #expect(try refusal(parts)?.reason.hasPrefix("the model's header is invalid: field .validationMetrics.confusion: "
                                                       + "the confusion matrix must have 3 rows of 3 counts") == true)
        var overflowing = metrics
        overflowing["labels"] = ["a", "b"]
        overflowing["confusion"] = [[Int.max, 1], [0, 0]]
        parts.header["trainingMetrics"] = overflowing
        parts.header["validationMetrics"] = nil
        #expect(try refusal(parts)?.reason.hasSuffix("the counts add up to more than \(Int.max)") == true)
        overflowing["confusion"] = [[1, -1], [0, 0]]
        parts.header["trainingMetrics"] = overflowing
        #expect(try refusal(parts)?.reason.hasSuffix("a count is negative") == true)
        overflowing["confusion"] = [[1, 0], [0, 0]]
        overflowing["topKAccuracy"] = [1]
        parts.header["trainingMetrics"] = overflowing
        #expect(try refusal(parts)?.reason.hasSuffix("expected 5 accuracies (k = 1…5), found 1") == true)
    }

    @Test("A featurizer setting out of range is a damaged file that names the field, not a usage error")
    func featurizerSettings() throws {
        var parts = try ModelFileParts.hashedModel()
        parts.changeFeaturizer { $0["indexing"] = ["hashed": ["bits": 62]] }
        #expect(try refusal(parts)?.reason == "the model's header is invalid: field featurizer.indexing.bits: must be 8 to 28, not 62")
        parts = try ModelFileParts.vocabularyModel()
        parts.changeFeaturizer { $0["maxWordNGram"] = 0 }
        #expect(try refusal(parts)?.reason == "the model's header is invalid: field featurizer.maxWordNGram: must be 1 to 5, not 0")
    }

    @Test("A section listed twice, or two sections sharing bytes, are refused")
    func sectionTable() throws {
        let parts = try ModelFileParts.hashedModel()
        var data = try parts.encoded()
        // Entry 1 (linear.rows) takes entry 0's name, then entry 0's offset and length.
        let entry0 = ModelContainer.prefixSize, entry1 = entry0 + ModelContainer.sectionEntrySize
        let names = parts.sections.map(\.name)
        #expect(names.first == ModelFileSection.bias)
        var twice = data
        twice.replaceSubrange(entry1..<(entry1 + 40), with: data[entry0..<(entry0 + 40)])
        #expect(throws: MLKitError(.malformedData, "section 'linear.bias' appears twice in the section table", at: .init(file: "m.mlkit"))) {
            try TextClassifier(modelFileData: DamagedModelFileTests.resealed(twice), source: "m.mlkit")
        }
        data.replaceSubrange((entry1 + 48)..<(entry1 + 64), with: data[(entry0 + 48)..<(entry0 + 64)])
        #expect(throws: MLKitError(.malformedData, "sections 'linear.bias' and 'linear.rows' overlap", at: .init(file: "m.mlkit"))) {
            try TextClassifier(modelFileData: DamagedModelFileTests.resealed(data), source: "m.mlkit")
        }
    }
}
