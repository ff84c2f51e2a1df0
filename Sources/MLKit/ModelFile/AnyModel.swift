public import Foundation

/// The model in a model file, whichever its kind: for tools that handle every kind, such as
/// `mlkit info`, `mlkit encrypt` and the collection server, which checks every upload with it.
public enum AnyModel: Sendable {
    /// A text classifier.
    case textClassifier(TextClassifier)
    /// A word tagger.
    case wordTagger(WordTagger)

    /// Loads the model of a model file, of either kind.
    /// - Parameter url: The model file.
    /// - Throws: ``MLKitError`` naming the file, as ``TextClassifier/init(contentsOf:)`` does.
    public init(contentsOf url: URL) throws {
        try self.init(modelFileData: TextClassifier.mappedModelFile(at: url), source: url.path)
    }

    /// Loads the model of a model file's bytes, of either kind.
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - source: A name for error messages.
    /// - Throws: ``MLKitError`` naming the file, as ``TextClassifier/init(modelFileData:source:)`` does.
    public init(modelFileData data: Data, source: String? = nil) throws {
        let container = try ModelContainer.decode(data, file: source, knownSections: ModelFileSection.known)
        let kind: String
        do {
            kind = try ModelHeaderCoding.kind(of: container.header)
        } catch let error as MLKitError {
            throw error.inFile(source)
        }
        if kind == WordTaggerFile.kind {
            self = .wordTagger(try WordTagger(container: container, source: source))
        } else {
            self = .textClassifier(try TextClassifier(container: container, source: source))
        }
    }

    /// What kind of model it is: `text classifier` or `word tagger`.
    public var kindName: String {
        switch self {
        case .textClassifier: return "text classifier"
        case .wordTagger: return "word tagger"
        }
    }

    /// The model file format version it was read from (`nil` if trained here).
    public var formatVersion: Int? {
        switch self {
        case .textClassifier(let classifier): return classifier.formatVersion
        case .wordTagger(let tagger): return tagger.formatVersion
        }
    }

    /// The author, licence, version and description.
    public var metadata: ModelMetadata {
        switch self {
        case .textClassifier(let classifier): return classifier.metadata
        case .wordTagger(let tagger): return tagger.metadata
        }
    }

    /// The labels, sorted.
    public var labels: [String] {
        switch self {
        case .textClassifier(let classifier): return classifier.labels
        case .wordTagger(let tagger): return tagger.labels
        }
    }

    /// The training algorithm's name (`svm`, `crf`, ...), when the file records it.
    public var algorithm: String? {
        switch self {
        case .textClassifier(let classifier): return classifier.trainingSummary?.algorithm.rawValue
        case .wordTagger(let tagger): return tagger.trainingSummary?.algorithm.rawValue
        }
    }
}
