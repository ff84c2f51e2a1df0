/// How well a word tagger labels a set of sentences: token accuracy, per-label precision,
/// recall and F1, the confusion matrix, and the precision, recall and F1 of whole entities or
/// words.
///
/// **Entities** are runs of tokens, found in the true and in the predicted labels alike, and an
/// entity counts as found only when the prediction has the same run with the same type:
/// - with BIO labels (`B-PER`, `I-PER`, `O`; also `E-` and `S-`), as CoNLL's `conlleval` reads
///   them: `B-X` and `S-X` start an entity of type X, `I-X` and `E-X` continue one of type X
///   (or start one after anything else), `E-X` and `S-X` end it;
/// - otherwise, each run of consecutive tokens with the same label is one entity of that type,
///   as the chapter's COMPANY, PRODUCT, NONE labels are read.
/// `O` and `NONE` are outside every entity. A tagger whose labels have neither, nor any BIO
/// prefix (part-of-speech tags), has no entities.
///
/// **Words**: a tagger whose labels are B, M, E and S segments text into words (B begins a
/// word, M continues it, E ends it, S is a word of one token). Its words are its entities, of
/// the type `word`, and a word is found when the prediction has the same span: the word F1 of
/// the SIGHAN bakeoffs. A new word starts at a B or S token, or after an E or S token.
public struct TaggingMetrics: Sendable, Hashable, Codable {
    /// Precision, recall, F1 and support of one label, over tokens.
    public typealias LabelMetrics = ClassificationMetrics.ClassMetrics

    /// The counts of one type of entity (or of words).
    public struct EntityCounts: Sendable, Hashable, Codable {
        /// The entity type: the label without its BIO prefix, or `word`.
        public let type: String
        /// The entities in the true labels.
        public let actual: Int
        /// The entities in the predicted labels.
        public let predicted: Int
        /// The predicted entities that match a true one exactly.
        public let correct: Int

        /// Of the predicted entities, the fraction that are right (0 when there are none).
        public var precision: Double { predicted == 0 ? 0 : Double(correct) / Double(predicted) }
        /// Of the true entities, the fraction found (0 when there are none).
        public var recall: Double { actual == 0 ? 0 : Double(correct) / Double(actual) }
        /// The harmonic mean of precision and recall.
        public var f1: Double { precision + recall == 0 ? 0 : 2 * precision * recall / (precision + recall) }
    }

    /// The labels, in the order of the confusion matrix's rows and columns.
    public let labels: [String]
    /// `confusion[actual][predicted]`: how many tokens with label `actual` were predicted as
    /// `predicted`.
    public let confusion: [[Int]]
    /// The counts of each entity type, by type; empty when the labels have no entities.
    public let entities: [EntityCounts]
    /// Whether the entities are the words of a B/M/E/S segmenter.
    public let segmentsWords: Bool
    /// The number of sentences.
    public let sentenceCount: Int

    /// The number of tokens.
    public var tokenCount: Int { confusion.reduce(0) { $0 + $1.reduce(0, +) } }

    /// The fraction of tokens labelled correctly.
    public var tokenAccuracy: Double {
        tokenCount == 0 ? 0 : Double(labels.indices.reduce(0) { $0 + confusion[$1][$1] }) / Double(tokenCount)
    }

    /// Precision, recall, F1 and support of each label, over tokens, in label order.
    public var perLabel: [LabelMetrics] { ClassificationMetrics.perClass(labels: labels, confusion: confusion) }

    /// All entity types together (micro-averaged): the counts summed over types.
    public var allEntities: EntityCounts {
        EntityCounts(type: segmentsWords ? "word" : "all", actual: entities.reduce(0) { $0 + $1.actual },
                     predicted: entities.reduce(0) { $0 + $1.predicted }, correct: entities.reduce(0) { $0 + $1.correct })
    }

    /// Whether the labels describe entities or words at all.
    public var hasEntities: Bool { !entities.isEmpty }

    /// Computes metrics from the true and predicted labels of each sentence.
    /// - Parameters:
    ///   - labels: Every label; indices below refer to it.
    ///   - actual: The true label index of each token, sentence by sentence.
    ///   - predicted: The predicted label index of each token, with the same shape.
    /// - Precondition: `actual` and `predicted` have the same shape, indices within `labels`.
    public init(labels: [String], actual: [[Int]], predicted: [[Int]]) {
        precondition(actual.count == predicted.count, "one prediction per sentence")
        var confusion = Array(repeating: Array(repeating: 0, count: labels.count), count: labels.count)
        let scheme = ChunkScheme(labels: labels)
        var counts: [String: (actual: Int, predicted: Int, correct: Int)] = [:]
        for (truth, guess) in zip(actual, predicted) {
            precondition(truth.count == guess.count, "one predicted label per token")
            for (a, p) in zip(truth, guess) { confusion[a][p] += 1 }
            guard let scheme else { continue }
            let trueChunks = scheme.chunks(truth), guessedChunks = Set(scheme.chunks(guess))
            for chunk in trueChunks {
                counts[chunk.type, default: (0, 0, 0)].actual += 1
                if guessedChunks.contains(chunk) { counts[chunk.type, default: (0, 0, 0)].correct += 1 }
            }
            for chunk in guessedChunks { counts[chunk.type, default: (0, 0, 0)].predicted += 1 }
        }
        self.labels = labels
        self.confusion = confusion
        self.segmentsWords = scheme?.segmentsWords ?? false
        self.entities = counts.keys.sorted().map { type in
            let count = counts[type]!
            return EntityCounts(type: type, actual: count.actual, predicted: count.predicted, correct: count.correct)
        }
        self.sentenceCount = actual.count
    }
}

/// How a label set marks entities or words.
struct ChunkScheme {
    /// An entity or word: its tokens and its type.
    struct Chunk: Hashable {
        let start: Int
        let end: Int
        let type: String
    }

    private enum Kind { case words, bio, runs }
    private let kind: Kind
    /// For each label index: its BIO prefix (`B`, `I`, `E`, `S`; `O` outside; `-` none) and type.
    private let prefixes: [Character]
    private let types: [String]

    var segmentsWords: Bool { kind == .words }

    /// The outside labels.
    static let outside: Set<String> = ["O", "NONE"]

    /// The scheme of `labels`, or `nil` when they mark no entities.
    init?(labels: [String]) {
        var prefixes: [Character] = [], types: [String] = []
        for label in labels {
            if Self.outside.contains(label) {
                prefixes.append("O"); types.append("")
            } else if label.count > 2, let first = label.first, "BIES".contains(first),
                      label[label.index(after: label.startIndex)] == "-" {
                prefixes.append(first); types.append(String(label.dropFirst(2)))
            } else {
                prefixes.append("-"); types.append(label)
            }
        }
        self.prefixes = prefixes
        self.types = types
        if !labels.isEmpty && Set(labels).isSubset(of: ["B", "M", "E", "S"]) && labels.contains("B") {
            kind = .words
        } else if prefixes.contains(where: { "BIES".contains($0) }) {
            kind = .bio
        } else if prefixes.contains("O") {
            kind = .runs
        } else {
            return nil
        }
    }

    /// The entities or words of one sentence's label indices.
    func chunks(_ sentence: [Int]) -> [Chunk] {
        var chunks: [Chunk] = []
        var open: (start: Int, type: String)?
        func close(at end: Int) {
            if let current = open { chunks.append(Chunk(start: current.start, end: end, type: current.type)) }
            open = nil
        }
        for (t, index) in sentence.enumerated() {
            switch kind {
            case .words:
                let label = types[index]
                let previous = t > 0 ? types[sentence[t - 1]] : "S"
                if label == "B" || label == "S" || previous == "E" || previous == "S" {
                    close(at: t)
                    open = (t, "word")
                }
            case .runs:
                let prefix = prefixes[index], type = types[index]
                if prefix == "O" {
                    close(at: t)
                } else if open?.type != type {
                    close(at: t)
                    open = (t, type)
                }
            case .bio:
                let prefix = prefixes[index], type = types[index]
                switch prefix {
                case "O":
                    close(at: t)
                case "B", "S":
                    close(at: t)
                    open = (t, type)
                default:  // I, E, or a label without a prefix
                    if open?.type != type {
                        close(at: t)
                        open = (t, type)
                    }
                }
                if prefix == "E" || prefix == "S" { close(at: t + 1) }
            }
        }
        close(at: sentence.count)
        return chunks
    }
}
