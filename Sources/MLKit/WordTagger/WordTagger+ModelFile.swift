public import Foundation

/// What a word tagger's model file holds beside the container: its kind, its header and its
/// sections (`docs/model-format.md`).
enum WordTaggerFile {
    /// The header's `kind`.
    static let kind = "tagger"
    static let attributes = "tagger.attributes"
    static let rows = "tagger.rows"
    static let labels = "tagger.labels"
    static let weights = "tagger.weights"
    static let transitions = "tagger.transitions"
    static let start = "tagger.start"
    static let end = "tagger.end"
    static let sections: Set<String> = [attributes, rows, labels, weights, transitions, start, end]

    /// The JSON header of a tagger's file.
    struct Header: Codable {
        var kind: String
        var labels: [String]
        /// The number of attributes, A.
        var attributes: Int
        /// The number of (attribute, label) pairs with a weight, P.
        var pairs: Int
        var features: Features
        /// The tokenizer of ``WordTagger/tags(for:tokenizer:)``.
        var tokenizer: Tokenizer
        var metadata: ModelMetadata
        var created: Date
        var mlkitVersion: String
        var training: WordTaggerTrainingSummary?
        var trainingMetrics: TaggingMetrics?
        var validationMetrics: TaggingMetrics?
    }

    /// How tokens become attributes.
    struct Features: Codable, Equatable {
        /// The version of ``TokenFeatures``' templates.
        var templates: Int
    }
}

extension WordTagger {
    /// Loads a tagger from a model file.
    ///
    /// The file is memory-mapped, checked against its CRC-32, and its sections are copied into
    /// the tagger.
    /// - Parameter url: The model file.
    /// - Throws: ``MLKitError`` naming the file: `fileNotFound`; `malformedData` for a file that
    ///   is not a model or is truncated, corrupt or inconsistent; `wrongType` (field `kind`) for
    ///   a text classifier's file; `unsupportedVersion` for a newer format.
    public init(contentsOf url: URL) throws {
        try self.init(modelFileData: TextClassifier.mappedModelFile(at: url), source: url.path)
    }

    /// Loads a tagger from the bytes of a model file.
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - source: A name for error messages.
    /// - Throws: As ``init(contentsOf:)``.
    public init(modelFileData data: Data, source: String? = nil) throws {
        try self.init(container: try ModelContainer.decode(data, file: source, knownSections: ModelFileSection.known),
                      source: source)
    }

    /// Loads a tagger from a checked container.
    init(container: ModelContainer, source: String?) throws {
        self = try container.model(named: source, Self.decode)
    }

    /// Writes the tagger to a model file, atomically: a crash never leaves a half-written file.
    /// - Parameters:
    ///   - url: Where to write.
    ///   - metadata: Metadata to store instead of the tagger's own.
    /// - Throws: ``MLKitError`` with code `io`, naming the file.
    public func write(to url: URL, metadata: ModelMetadata? = nil) throws {
        let (header, sections) = modelFileContents(metadata: metadata)
        try ModelContainer.writeAtomically(header: header, sections: sections, version: ModelContainer.taggerVersion, to: url)
    }

    /// The bytes of the model file.
    /// - Parameter metadata: Metadata to store instead of the tagger's own.
    /// - Returns: A complete model file (format version 4).
    public func modelFileData(metadata: ModelMetadata? = nil) -> Data {
        let (header, sections) = modelFileContents(metadata: metadata)
        return ModelContainer.encode(header: header, sections: sections, version: ModelContainer.taggerVersion)
    }

    private func modelFileContents(metadata: ModelMetadata?) -> (header: Data, sections: [ModelContainer.OutputSection]) {
        let model = storage.model
        let header = WordTaggerFile.Header(
            kind: WordTaggerFile.kind, labels: labels, attributes: storage.attributes.count,
            pairs: model.features.pairCount, features: .init(templates: TokenFeatures.templates), tokenizer: tokenizer,
            metadata: metadata ?? self.metadata, created: Date(), mlkitVersion: MLKitVersion.current,
            training: trainingSummary, trainingMetrics: trainingMetrics, validationMetrics: validationMetrics)
        let sections = [
            ModelContainer.section(WordTaggerFile.attributes, uint64s: storage.attributes.hashes),
            ModelContainer.section(WordTaggerFile.rows, int32s: model.features.rowStarts),
            ModelContainer.section(WordTaggerFile.labels, int32s: model.features.pairLabels),
            ModelContainer.section(WordTaggerFile.weights, floats: model.pairWeights),
            ModelContainer.section(WordTaggerFile.transitions, floats: model.transitions),
            ModelContainer.section(WordTaggerFile.start, floats: model.start),
            ModelContainer.section(WordTaggerFile.end, floats: model.end),
        ]
        return (ModelHeaderCoding.encode(header), sections)
    }

    private static func decode(_ container: ModelContainer) throws -> WordTagger {
        let kind = try ModelHeaderCoding.kind(of: container.header)
        guard kind == WordTaggerFile.kind else {
            throw MLKitError(.wrongType, "this is a text classifier's model file, not a word tagger's; "
                             + "classify with it (`mlkit predict`, TextClassifier(contentsOf:))", at: .init(field: "kind"))
        }
        func inconsistent(_ reason: String) -> MLKitError { MLKitError(.malformedData, "inconsistent model: \(reason)") }
        guard container.version >= ModelContainer.taggerVersion else {
            throw inconsistent("a word tagger in a format version \(container.version) file (taggers start at version 4)")
        }
        try container.checkSections(WordTaggerFile.sections)
        let header = try ModelHeaderCoding.decode(WordTaggerFile.Header.self, from: container.header)
        guard header.features.templates == TokenFeatures.templates else {
            throw MLKitError(.unsupportedVersion, "the model's feature templates are version \(header.features.templates); "
                             + "this mlkit has version \(TokenFeatures.templates); upgrade mlkit")
        }
        try header.tokenizer.validate()
        let labelCount = header.labels.count
        guard labelCount > 0, Set(header.labels).count == labelCount else {
            throw inconsistent("\(labelCount) labels, which must be distinct and at least one")
        }
        let hashes = try container.uint64s(WordTaggerFile.attributes)
        let rows = try container.int32s(WordTaggerFile.rows)
        let pairLabels = try container.int32s(WordTaggerFile.labels)
        let weights = try container.floats(WordTaggerFile.weights)
        let transitions = try container.floats(WordTaggerFile.transitions)
        let start = try container.floats(WordTaggerFile.start), end = try container.floats(WordTaggerFile.end)
        guard hashes.count == header.attributes, rows.count == header.attributes + 1,
              pairLabels.count == header.pairs, weights.count == header.pairs else {
            throw inconsistent("\(hashes.count) attributes, \(rows.count) row starts, \(pairLabels.count) pair labels and "
                               + "\(weights.count) weights for \(header.attributes) attributes and \(header.pairs) pairs")
        }
        guard transitions.count == labelCount * labelCount, start.count == labelCount, end.count == labelCount else {
            throw inconsistent("\(transitions.count) transitions, \(start.count) start and \(end.count) end weights "
                               + "for \(labelCount) labels")
        }
        guard rows.first == 0, rows.last.map(Int.init) == header.pairs,
              zip(rows, rows.dropFirst()).allSatisfy({ $0 <= $1 }) else {
            throw inconsistent("the row starts must rise from 0 to \(header.pairs)")
        }
        for attribute in 0..<header.attributes {
            let run = pairLabels[Int(rows[attribute])..<Int(rows[attribute + 1])]
            guard run.allSatisfy({ $0 >= 0 && $0 < Int32(labelCount) }), zip(run, run.dropFirst()).allSatisfy({ $0 < $1 }) else {
                throw inconsistent("attribute \(attribute)'s labels must increase and lie below \(labelCount)")
            }
        }
        let model = LinearChainModel(labelCount: labelCount, features: StateFeatures(rowStarts: rows, pairLabels: pairLabels),
                                     pairWeights: weights, transitions: transitions, start: start, end: end)
        let attributes = Vocabulary(terms: nil, hashes: hashes)
        if let (first, second) = attributes.repeatedKey {
            throw inconsistent("attributes \(first) and \(second) have the same hash")
        }
        return WordTagger(labels: header.labels, attributes: attributes, model: model,
                          tokenizer: header.tokenizer, metadata: header.metadata, trainingSummary: header.training,
                          trainingMetrics: header.trainingMetrics, validationMetrics: header.validationMetrics,
                          formatVersion: Int(container.version))
    }
}
