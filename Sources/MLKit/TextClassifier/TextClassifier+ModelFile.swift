public import Foundation

/// The JSON header of a model file (`docs/model-format.md` lists every field).
struct ModelFileHeader: Codable {
    /// The kind of weights: `linear` or `embedding`.
    var kind: String
    var labels: [String]
    var featurizer: FeaturizerConfiguration
    /// Rows and columns of the weight matrix.
    var features: Int
    var classes: Int
    /// The embedding dimension (embedding models only).
    var dimension: Int?
    var probability: LinearModel.ProbabilityMapping
    var metadata: ModelMetadata
    var created: Date
    var mlkitVersion: String
    var training: TrainingSummary?
    var trainingMetrics: ClassificationMetrics?
    var validationMetrics: ClassificationMetrics?
}

/// The sections a version 1 model file may hold.
enum ModelFileSection {
    static let vocabularyHashes = "vocabulary.hashes"
    static let vocabularyTerms = "vocabulary.terms"
    static let inverseDocumentFrequency = "features.idf"
    static let weightRows = "linear.rows"
    static let weights = "linear.weights"
    static let bias = "linear.bias"
    static let embeddingFeatures = "embedding.features"
    static let embeddingInput = "embedding.input"
    static let embeddingOutput = "embedding.output"
    static let embeddingBias = "embedding.bias"
    /// The sections of a linear model's weights.
    static let linear = [weightRows, weights, bias]
    /// The sections of an embedding model's weights.
    static let embedding = [embeddingFeatures, embeddingInput, embeddingOutput, embeddingBias]
    static let all: Set<String> = Set([vocabularyHashes, vocabularyTerms, inverseDocumentFrequency] + linear + embedding)
    /// The sections of every kind of model: a file is read with these, and then its kind's own
    /// are checked, so that a file of the other kind gets an error about its kind.
    static let known = all.union(WordTaggerFile.sections)
}

extension ModelFileHeader {
    /// The largest feature count: feature indices are 32-bit in vectors and weights.
    static let maximumFeatures = Int(Int32.max)

    /// Checks what the header says on its own, before any section is read.
    /// - Throws: ``MLKitError`` with code `malformedData`, naming what does not fit.
    func validate() throws {
        func inconsistent(_ reason: String) -> MLKitError { TextClassifier.inconsistent(reason) }
        guard kind == "linear" || kind == "embedding" else { throw inconsistent("unknown kind '\(kind)'") }
        guard classes == labels.count, classes > 0 else { throw inconsistent("\(labels.count) labels for \(classes) classes") }
        guard Set(labels).count == labels.count else { throw inconsistent("a label appears twice") }
        guard (0...Self.maximumFeatures).contains(features) else {
            throw inconsistent("\(features) features (at most \(Self.maximumFeatures))")
        }
        do {
            try featurizer.validate()
        } catch let error as MLKitError where error.code == .invalidParameter {
            // A setting that training would refuse is a damaged file here, not a usage error.
            let field = error.location?.field.map { "featurizer.\($0)" } ?? "featurizer"
            throw MLKitError(.malformedData, "the model's header is invalid: field \(field): \(error.reason)")
        }
        if kind == "linear" {
            switch probability {
            case .softmax(let temperature):
                guard temperature.isFinite, temperature > 0 else { throw inconsistent("softmax temperature \(temperature)") }
            case .platt(let a, let b):
                guard a.count == classes, b.count == classes else {
                    throw inconsistent("\(a.count) and \(b.count) Platt coefficients for \(classes) classes")
                }
                guard (a + b).allSatisfy(\.isFinite) else { throw inconsistent("a Platt coefficient is not a finite number") }
            }
        }
    }
}

extension TextClassifier {
    /// Loads a classifier from a model file.
    ///
    /// Every format version mlkit ever wrote is readable. The file is memory-mapped and checked
    /// against its CRC-32; the weights are used in place in the mapped file, which the classifier
    /// keeps mapped, and the smaller sections are copied. The file must not be truncated or
    /// rewritten in place while the classifier lives: replace it by renaming, as mlkit writes
    /// files (`docs/reliability.md`).
    /// - Parameter url: The model file.
    /// - Throws: ``MLKitError`` naming the file: `fileNotFound`; `malformedData` for a file that
    ///   is not a model or is truncated, corrupt or inconsistent; `unsupportedVersion` for a
    ///   newer format.
    public init(contentsOf url: URL) throws {
        try self.init(modelFileData: Self.mappedModelFile(at: url), source: url.path)
    }

    /// The bytes of a model file, memory-mapped. Shared with the modules that read encrypted
    /// model files, so that every loader reports a missing file the same way.
    /// - Throws: ``MLKitError`` naming the file: `fileNotFound` or `io`.
    package static func mappedModelFile(at url: URL) throws -> Data {
        let path = url.path
        guard FileManager.default.fileExists(atPath: path) else {
            throw MLKitError(.fileNotFound, "no such model file", at: .init(file: path))
        }
        do {
            return try Data(contentsOf: url, options: .alwaysMapped)
        } catch {
            throw MLKitError(.io, "cannot read the model file: \(error.localizedDescription)", at: .init(file: path))
        }
    }

    /// Loads a classifier from the bytes of a model file.
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - source: A name for error messages.
    /// - Throws: As ``init(contentsOf:)``.
    public init(modelFileData data: Data, source: String? = nil) throws {
        try self.init(container: try ModelContainer.decode(data, file: source, knownSections: ModelFileSection.known),
                      source: source)
    }

    /// Loads a classifier from a checked container.
    init(container: ModelContainer, source: String?) throws {
        self = try container.model(named: source, Self.decode)
    }

    /// Writes the classifier to a model file, atomically: a crash never leaves a half-written
    /// file.
    /// - Parameters:
    ///   - url: Where to write.
    ///   - metadata: Metadata to store instead of the classifier's own.
    /// - Throws: ``MLKitError`` with code `io`, naming the file.
    public func write(to url: URL, metadata: ModelMetadata? = nil) throws {
        // Streamed from the model's arrays: a large model is not copied into one block first.
        let (header, sections) = modelFileContents(metadata: metadata)
        try ModelContainer.writeAtomically(header: header, sections: sections, version: ModelContainer.currentVersion, to: url)
    }

    /// The bytes of the model file.
    /// - Parameter metadata: Metadata to store instead of the classifier's own.
    /// - Returns: A complete model file in the current format version.
    public func modelFileData(metadata: ModelMetadata? = nil) -> Data {
        let (header, sections) = modelFileContents(metadata: metadata)
        return ModelContainer.encode(header: header, sections: sections)
    }

    /// The JSON header and the sections of the model file.
    private func modelFileContents(metadata: ModelMetadata?) -> (header: Data, sections: [ModelContainer.OutputSection]) {
        var header = ModelFileHeader(
            kind: "linear", labels: labels, featurizer: featurizer.configuration, features: featurizer.dimension,
            classes: labels.count, dimension: nil, probability: .softmax(temperature: 1),
            metadata: metadata ?? self.metadata, created: Date(), mlkitVersion: MLKitVersion.current,
            training: trainingSummary, trainingMetrics: trainingMetrics, validationMetrics: validationMetrics)
        var sections: [ModelContainer.OutputSection] = []
        if let vocabulary = featurizer.vocabulary {
            sections.append(ModelContainer.section(ModelFileSection.vocabularyHashes, uint64s: vocabulary.hashes))
            guard let terms = vocabulary.terms else { preconditionFailure("a classifier's vocabulary always has its terms") }
            sections.append(ModelContainer.section(ModelFileSection.vocabularyTerms, strings: terms))
        }
        if let idf = featurizer.inverseDocumentFrequency {
            sections.append(ModelContainer.section(ModelFileSection.inverseDocumentFrequency, floats: idf))
        }
        switch model {
        case .linear(let linear):
            header.probability = linear.probability
            sections += Self.weightSections(of: linear)
            sections.append(ModelContainer.section(ModelFileSection.bias, floats: linear.bias))
        case .embedding(let embedding):
            header.kind = "embedding"
            header.dimension = embedding.dimension
            sections.append(ModelContainer.section(ModelFileSection.embeddingFeatures,
                                                   uint64s: embedding.featureIDs.map { UInt64($0) }))
            sections.append(ModelContainer.section(ModelFileSection.embeddingInput, floats: embedding.embeddings))
            sections.append(ModelContainer.section(ModelFileSection.embeddingOutput, floats: embedding.output))
            sections.append(ModelContainer.section(ModelFileSection.embeddingBias, floats: embedding.bias))
        }
        return (ModelHeaderCoding.encode(header), sections)
    }

    /// The weight matrix's sections: only its rows that are not all zero, listed in a rows
    /// section before them, when some are all zero; else the whole matrix. The rows are written
    /// from the model's own array; a model that holds only stored rows writes those.
    private static func weightSections(of model: LinearModel) -> [ModelContainer.OutputSection] {
        let classes = model.classes
        let weights = model.weights
        if let stored = model.storedRows {
            return [ModelContainer.section(ModelFileSection.weightRows, uint64s: stored.map { UInt64($0) }),
                    ModelContainer.section(ModelFileSection.weights, floats: weights)]
        }
        let rows = weights.withUnsafeBufferPointer { weights in
            (0..<model.features).filter { row in weights[(row * classes)..<((row + 1) * classes)].contains { $0 != 0 } }
        }
        guard rows.count < model.features else { return [ModelContainer.section(ModelFileSection.weights, floats: weights)] }
        return [ModelContainer.section(ModelFileSection.weightRows, uint64s: rows.map { UInt64($0) }),
                ModelContainer.section(ModelFileSection.weights, rows: rows, of: weights, width: classes)]
    }

    private static func decode(_ container: ModelContainer) throws -> TextClassifier {
        let kind = try ModelHeaderCoding.kind(of: container.header)
        if kind == WordTaggerFile.kind {
            throw MLKitError(.wrongType, "this is a word tagger's model file, not a text classifier's; "
                             + "tag with it (`mlkit tag`, WordTagger(contentsOf:))", at: .init(field: "kind"))
        }
        try container.checkSections(ModelFileSection.all)
        let header = try ModelHeaderCoding.decode(ModelFileHeader.self, from: container.header)
        try header.validate()
        let featurizer = try decodeFeaturizer(container, header)
        let model = header.kind == "embedding" ? try decodeEmbedding(container, header) : try decodeLinear(container, header)
        return TextClassifier(labels: header.labels, featurizer: featurizer, model: model,
                              metadata: header.metadata, trainingSummary: header.training,
                              trainingMetrics: header.trainingMetrics, validationMetrics: header.validationMetrics,
                              formatVersion: Int(container.version))
    }

    /// The featurizer: its configuration from the header, with the vocabulary and the IDF
    /// sections when, and only when, the configuration uses them.
    private static func decodeFeaturizer(_ container: ModelContainer, _ header: ModelFileHeader) throws -> Featurizer {
        var vocabulary: Vocabulary?
        let hasVocabulary = container.has(ModelFileSection.vocabularyHashes) || container.has(ModelFileSection.vocabularyTerms)
        switch header.featurizer.indexing {
        case .vocabulary:
            let hashes = try container.uint64s(ModelFileSection.vocabularyHashes)
            let terms = try container.strings(ModelFileSection.vocabularyTerms)
            guard hashes.count == terms.count else { throw inconsistent("\(hashes.count) vocabulary hashes for \(terms.count) terms") }
            let read = Vocabulary(terms: terms, hashes: hashes)
            if let (first, second) = read.repeatedKey {
                throw inconsistent("vocabulary entries \(first) and \(second) hold the same feature")
            }
            vocabulary = read
        case .hashed:
            // A hashed featurizer's indices go up to 2^bits, whatever a vocabulary holds.
            guard !hasVocabulary else { throw inconsistent("a vocabulary in a model whose features are hashed") }
        }
        var idf: [Float]?
        if header.featurizer.weighting == .tfidf {
            let values = try container.floats(ModelFileSection.inverseDocumentFrequency)
            guard values.count == header.features else { throw inconsistent("\(values.count) idf values for \(header.features) features") }
            if let bad = values.firstIndex(where: { !($0.isFinite && $0 >= 0) }) {
                throw inconsistent("the idf value of feature \(bad) is \(values[bad]), not a finite number of at least 0")
            }
            idf = values
        } else if container.has(ModelFileSection.inverseDocumentFrequency) {
            throw inconsistent("idf values in a model weighted by \(header.featurizer.weighting.rawValue), not tfidf")
        }
        let featurizer = Featurizer(configuration: header.featurizer, vocabulary: vocabulary, inverseDocumentFrequency: idf)
        guard featurizer.dimension == header.features else {
            throw inconsistent("the featurizer has \(featurizer.dimension) features, the weights \(header.features)")
        }
        return featurizer
    }

    private static func decodeLinear(_ container: ModelContainer, _ header: ModelFileHeader) throws -> ClassifierModel {
        for name in ModelFileSection.embedding where container.has(name) {
            throw inconsistent("section '\(name)' in a linear model")
        }
        let bias = try container.floats(ModelFileSection.bias)
        guard bias.count == header.classes else { throw inconsistent("\(bias.count) biases for \(header.classes) classes") }
        return .linear(try linearModel(container, header, bias: bias))
    }

    private static func decodeEmbedding(_ container: ModelContainer, _ header: ModelFileHeader) throws -> ClassifierModel {
        for name in ModelFileSection.linear where container.has(name) {
            throw inconsistent("section '\(name)' in an embedding model")
        }
        guard let dimension = header.dimension, dimension > 0 else { throw inconsistent("an embedding model without a dimension") }
        let features = try container.uint64s(ModelFileSection.embeddingFeatures)
        guard zip(features, features.dropFirst()).allSatisfy({ $0 < $1 }), features.allSatisfy({ $0 < UInt64(header.features) })
        else { throw inconsistent("embedding feature indices must increase and lie below \(header.features)") }
        let input = try container.flatFloats(ModelFileSection.embeddingInput)
        let output = try container.floats(ModelFileSection.embeddingOutput)
        let bias = try container.floats(ModelFileSection.embeddingBias)
        // Products that overflow cannot match the arrays, which the file holds.
        guard input.count == product(features.count, dimension), output.count == product(dimension, header.classes),
              bias.count == header.classes else {
            throw inconsistent("embedding arrays do not match \(features.count) rows, dimension \(dimension), \(header.classes) classes")
        }
        // header.features < 2^31 (``ModelFileHeader/validate()``), so every index fits in an Int32.
        return .embedding(EmbeddingModel(dimension: dimension, classes: header.classes, buckets: header.features,
                                         featureIDs: features.map { Int32($0) }, embeddings: input, output: output, bias: bias))
    }

    /// The linear model, from the whole weight matrix or from its stored non-zero rows, either
    /// used in place in the file's bytes (``ModelContainer/flatFloats(_:)``).
    ///
    /// Stored rows are never expanded into the whole matrix. A feature's row is found through a
    /// table of each feature's position among the stored rows (``LinearModel/rowPositions``,
    /// 4 bytes a feature) when it takes at most ``denseExpansionBudget(ofFileLength:)`` bytes,
    /// else by binary search among the stored rows. Either way no model is refused for its size,
    /// and the memory taken is bounded by what the file holds, or the budget.
    private static func linearModel(_ container: ModelContainer, _ header: ModelFileHeader, bias: [Float]) throws -> LinearModel {
        let classes = header.classes
        let count = product(header.features, classes)
        guard container.has(ModelFileSection.weightRows) else {
            let stored = try container.flatFloats(ModelFileSection.weights)
            guard stored.count == count else {
                throw inconsistent("\(stored.count) weights for \(header.features) × \(classes)")
            }
            return LinearModel(features: header.features, classes: classes, weights: stored, bias: bias, probability: header.probability)
        }
        let rows = try container.uint64s(ModelFileSection.weightRows)
        guard zip(rows, rows.dropFirst()).allSatisfy({ $0 < $1 }), rows.allSatisfy({ $0 < UInt64(header.features) }) else {
            throw inconsistent("the stored weight rows must increase and lie below \(header.features)")
        }
        let stored = try container.flatFloats(ModelFileSection.weights)
        guard stored.count == product(rows.count, classes) else {
            throw inconsistent("\(stored.count) weights for \(rows.count) stored rows")
        }
        let indexed = header.features <= denseExpansionBudget(ofFileLength: container.length) / MemoryLayout<Int32>.stride
        // header.features < 2^31 (``ModelFileHeader/validate()``), so every row fits in an Int32.
        return LinearModel(features: header.features, classes: classes, rows: rows.map { Int32($0) }, weights: stored,
                           bias: bias, probability: header.probability, indexed: indexed)
    }

    /// The most memory, in bytes, that the loader spends on the table of row positions of a
    /// weight matrix stored as its non-zero rows (``LinearModel/rowPositions``): 16 times the
    /// file, or 64 MiB for a file of up to 4 MiB. The table makes each feature's row a lookup
    /// away, which pays for prediction; beyond the budget rows are found by binary search
    /// instead, so a small file claiming billions of rows costs no more than the file.
    static func denseExpansionBudget(ofFileLength length: Int) -> Int {
        max(64 << 20, length.multipliedReportingOverflow(by: 16).overflow ? Int.max : length * 16)
    }

    /// `a × b`, or `Int.max` when the product overflows: no array of the file can have that
    /// many elements, so a comparison with a count then fails as it should.
    private static func product(_ a: Int, _ b: Int) -> Int {
        let (result, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? .max : result
    }

    fileprivate static func inconsistent(_ reason: String) -> MLKitError { MLKitError(.malformedData, "inconsistent model: \(reason)") }
}
