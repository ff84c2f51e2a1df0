public import Foundation

/// mlkit's version, recorded in every model file it writes.
public enum MLKitVersion {
    /// The version string.
    public static let current = "0.1.0"
}

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
    static let all: Set<String> = [vocabularyHashes, vocabularyTerms, inverseDocumentFrequency, weightRows, weights, bias,
                                   embeddingFeatures, embeddingInput, embeddingOutput, embeddingBias]
    /// The sections of every kind of model: a file is read with these, and then its kind's own
    /// are checked, so that a file of the other kind gets an error about its kind.
    static let known = all.union(WordTaggerFile.sections)
}

extension TextClassifier {
    /// Loads a classifier from a model file.
    ///
    /// Every format version mlkit ever wrote is readable. The file is memory-mapped, checked
    /// against its CRC-32, and its sections are copied into the classifier.
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
    /// from the model's own array.
    private static func weightSections(of model: LinearModel) -> [ModelContainer.OutputSection] {
        let classes = model.classes
        let weights = model.weights
        let rows = (0..<model.features).filter { row in
            weights[(row * classes)..<((row + 1) * classes)].contains { $0 != 0 }
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
        func inconsistent(_ reason: String) -> MLKitError { MLKitError(.malformedData, "inconsistent model: \(reason)") }
        guard header.kind == "linear" || header.kind == "embedding" else { throw inconsistent("unknown kind '\(header.kind)'") }
        guard header.classes == header.labels.count, header.classes > 0, header.features >= 0 else {
            throw inconsistent("\(header.labels.count) labels for \(header.classes) classes")
        }
        try header.featurizer.validate()
        var vocabulary: Vocabulary?
        if container.has(ModelFileSection.vocabularyHashes) {
            let hashes = try container.uint64s(ModelFileSection.vocabularyHashes)
            let terms = try container.strings(ModelFileSection.vocabularyTerms)
            guard hashes.count == terms.count else { throw inconsistent("\(hashes.count) vocabulary hashes for \(terms.count) terms") }
            vocabulary = Vocabulary(terms: terms, hashes: hashes)
        }
        let idf = container.has(ModelFileSection.inverseDocumentFrequency)
            ? try container.floats(ModelFileSection.inverseDocumentFrequency) : nil
        let featurizer = Featurizer(configuration: header.featurizer, vocabulary: vocabulary, inverseDocumentFrequency: idf)
        guard featurizer.dimension == header.features else {
            throw inconsistent("the featurizer has \(featurizer.dimension) features, the weights \(header.features)")
        }
        if let idf, idf.count != header.features { throw inconsistent("\(idf.count) idf values for \(header.features) features") }
        let model = header.kind == "embedding" ? try decodeEmbedding(container, header) : try decodeLinear(container, header)
        return TextClassifier(labels: header.labels, featurizer: featurizer, model: model,
                              metadata: header.metadata, trainingSummary: header.training,
                              trainingMetrics: header.trainingMetrics, validationMetrics: header.validationMetrics,
                              formatVersion: Int(container.version))
    }

    private static func decodeLinear(_ container: ModelContainer, _ header: ModelFileHeader) throws -> ClassifierModel {
        let weights = try expandedWeights(container, header)
        let bias = try container.floats(ModelFileSection.bias)
        guard bias.count == header.classes else {
            throw MLKitError(.malformedData, "inconsistent model: \(bias.count) biases for \(header.classes) classes")
        }
        return .linear(LinearModel(features: header.features, classes: header.classes, weights: weights, bias: bias,
                                   probability: header.probability))
    }

    private static func decodeEmbedding(_ container: ModelContainer, _ header: ModelFileHeader) throws -> ClassifierModel {
        func inconsistent(_ reason: String) -> MLKitError { MLKitError(.malformedData, "inconsistent model: \(reason)") }
        guard let dimension = header.dimension, dimension > 0 else { throw inconsistent("an embedding model without a dimension") }
        let features = try container.uint64s(ModelFileSection.embeddingFeatures)
        guard zip(features, features.dropFirst()).allSatisfy({ $0 < $1 }), features.allSatisfy({ $0 < UInt64(header.features) })
        else { throw inconsistent("embedding feature indices must increase and lie below \(header.features)") }
        let input = try container.floats(ModelFileSection.embeddingInput)
        let output = try container.floats(ModelFileSection.embeddingOutput)
        let bias = try container.floats(ModelFileSection.embeddingBias)
        guard input.count == features.count * dimension, output.count == dimension * header.classes,
              bias.count == header.classes else {
            throw inconsistent("embedding arrays do not match \(features.count) rows, dimension \(dimension), \(header.classes) classes")
        }
        return .embedding(EmbeddingModel(dimension: dimension, classes: header.classes, buckets: header.features,
                                         featureIDs: features.map { Int32($0) }, embeddings: input, output: output, bias: bias))
    }

    /// The full feature-major weight matrix, from all rows or from the stored non-zero rows.
    private static func expandedWeights(_ container: ModelContainer, _ header: ModelFileHeader) throws -> [Float] {
        let classes = header.classes
        let stored = try container.floats(ModelFileSection.weights)
        guard container.has(ModelFileSection.weightRows) else {
            guard stored.count == header.features * classes else {
                throw MLKitError(.malformedData, "inconsistent model: \(stored.count) weights for \(header.features) × \(classes)")
            }
            return stored
        }
        let rows = try container.uint64s(ModelFileSection.weightRows)
        guard stored.count == rows.count * classes else {
            throw MLKitError(.malformedData, "inconsistent model: \(stored.count) weights for \(rows.count) stored rows")
        }
        var weights = [Float](largePagesCount: header.features * classes) { $0.initialize(repeating: 0) }
        for (position, row) in rows.enumerated() {
            guard row < UInt64(header.features) else {
                throw MLKitError(.malformedData, "inconsistent model: weight row \(row) is past the last feature")
            }
            let target = Int(row) * classes
            weights.replaceSubrange(target..<(target + classes), with: stored[(position * classes)..<((position + 1) * classes)])
        }
        return weights
    }
}

/// How every model file's JSON header is written and read: sorted keys, ISO 8601 dates, and
/// non-finite floats as the strings `inf`, `-inf` and `nan`.
enum ModelHeaderCoding {
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return decoder
    }

    /// Encodes a header; the header types hold only strings, numbers and arrays, so this
    /// cannot fail.
    static func encode<Header: Encodable>(_ header: Header) -> Data {
        do { return try encoder.encode(header) } catch { preconditionFailure("a model header failed to encode: \(error)") }
    }

    /// Decodes a header.
    /// - Throws: ``MLKitError`` with code `malformedData`, naming the JSON path and the problem.
    static func decode<Header: Decodable>(_ type: Header.Type, from data: Data) throws -> Header {
        do {
            return try decoder.decode(type, from: data)
        } catch let error as DecodingError {
            throw MLKitError(.malformedData, "the model's header is invalid: \(error.summary)")
        }
    }

    /// The `kind` field of a header, which tells a classifier's file from a tagger's.
    static func kind(of header: Data) throws -> String {
        struct Kind: Decodable { let kind: String }
        return try decode(Kind.self, from: header).kind
    }
}

extension DecodingError {
    /// The field path and the problem, for error messages.
    var summary: String {
        func path(_ context: Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch self {
        case .keyNotFound(let key, let context): return "missing field \(path(context)).\(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "field \(path(context)): \(context.debugDescription)"
        @unknown default: return "\(self)"
        }
    }
}
