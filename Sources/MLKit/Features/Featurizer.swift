import Foundation

/// Turns text into feature vectors: tokenize, normalize, hash or look up, count, weight.
///
/// A featurizer is immutable and `Sendable`. With hashed indexing and plain counts it needs no
/// training data; a vocabulary or TF-IDF weights are learned by ``init(fitting:configuration:)``.
///
/// ```swift
/// let featurizer = try Featurizer(configuration: .init(maxWordNGram: 2))
/// let vector = featurizer.vector(for: "I love rainbows")
/// ```
public struct Featurizer: Sendable {
    /// The configuration, as stored in a model file.
    public let configuration: FeaturizerConfiguration
    /// The learned vocabulary, with vocabulary indexing.
    let vocabulary: Vocabulary?
    /// The inverse document frequency of each index, with TF-IDF weighting.
    let inverseDocumentFrequency: [Float]?

    /// The number of feature indices: `2^bits` when hashing, the vocabulary size otherwise.
    public var dimension: Int {
        switch configuration.indexing {
        case .hashed(let bits): return 1 << bits
        case .vocabulary: return vocabulary?.count ?? 0
        }
    }

    /// The vocabulary's keys by index, or `nil` when features are hashed.
    public var vocabularyTerms: [String]? { vocabulary?.terms }

    /// Creates a featurizer that needs no training data: hashed indexing, without TF-IDF.
    /// - Parameter configuration: The settings.
    /// - Throws: ``MLKitError`` with code `invalidParameter` if a setting is invalid or the
    ///   settings need fitting (a vocabulary or TF-IDF).
    public init(configuration: FeaturizerConfiguration) throws {
        try configuration.validate()
        guard case .hashed = configuration.indexing, configuration.weighting != .tfidf else {
            throw MLKitError(.invalidParameter, "a vocabulary or TF-IDF weights must be learned: use Featurizer(fitting:configuration:)")
        }
        self.init(configuration: configuration, vocabulary: nil, inverseDocumentFrequency: nil)
    }

    /// Learns a vocabulary and document frequencies from training texts, as the configuration asks.
    /// - Parameters:
    ///   - texts: The training texts.
    ///   - configuration: The settings.
    /// - Throws: ``MLKitError`` with code `invalidParameter` if a setting is invalid, or
    ///   `invalidDataset` if pruning leaves no features.
    public init(fitting texts: [String], configuration: FeaturizerConfiguration) throws {
        try configuration.validate()
        var vocabulary: Vocabulary?
        if case .vocabulary(let pruning) = configuration.indexing {
            vocabulary = try Self.learnVocabulary(texts, configuration: configuration, pruning: pruning)
        }
        var featurizer = Featurizer(configuration: configuration, vocabulary: vocabulary, inverseDocumentFrequency: nil)
        if configuration.weighting == .tfidf {
            featurizer = Featurizer(configuration: configuration, vocabulary: vocabulary,
                                    inverseDocumentFrequency: featurizer.learnInverseDocumentFrequency(texts))
        }
        self = featurizer
    }

    /// Creates a featurizer from parts read back from a model file.
    init(configuration: FeaturizerConfiguration, vocabulary: Vocabulary?, inverseDocumentFrequency: [Float]?) {
        self.configuration = configuration
        self.vocabulary = vocabulary
        self.inverseDocumentFrequency = inverseDocumentFrequency
    }

    /// The feature vector of `text`.
    /// - Parameter text: The text.
    /// - Returns: Sorted indices with their weighted values.
    public func vector(for text: String) -> SparseVector {
        var buffer = FeatureBuffer()
        Tokenizer.withUTF8(text) { features(of: $0, into: &buffer) }
        return SparseVector(indices: buffer.indices, values: buffer.values)
    }

    /// Word counts of `text`: each word token adds 1 to its normalized form's entry.
    ///
    /// This is exactly the input of Core ML's `SentimentPolarity` model, for callers that bring
    /// word counts to a classifier.
    /// - Parameter text: The text.
    /// - Returns: Each distinct normalized word with its count.
    public func wordCounts(for text: String) -> [String: Double] {
        var counts: [String: Double] = [:]
        for token in configuration.tokenizer.tokens(for: text) { counts[token, default: 0] += 1 }
        return counts
    }

    /// Computes the features of UTF-8 text into `buffer.indices` and `buffer.values`,
    /// reusing the buffer's storage: after warm-up, no allocation.
    func features(of bytes: UnsafeBufferPointer<UInt8>, into buffer: inout FeatureBuffer) {
        buffer.raw.removeAll(keepingCapacity: true)
        switch configuration.indexing {
        case .hashed(let bits):
            forEachFeatureHash(in: bytes, scratch: &buffer.scratch) { hash in
                buffer.raw.append(Int32(truncatingIfNeeded: FeatureHash.bucket(hash, bits: bits)))
            }
        case .vocabulary:
            guard let vocabulary else { break }
            forEachFeatureHash(in: bytes, scratch: &buffer.scratch) { hash in
                if let index = vocabulary.index(ofHash: hash) { buffer.raw.append(Int32(truncatingIfNeeded: index)) }
            }
        }
        buffer.countRawIndices()
        applyWeighting(to: &buffer)
    }

    /// Turns counts into values: sublinear TF, binary, IDF, then L2 normalization.
    private func applyWeighting(to buffer: inout FeatureBuffer) {
        let configuration = self.configuration
        let idf = inverseDocumentFrequency
        buffer.values.withUnsafeMutableBufferPointer { values in
            buffer.indices.withUnsafeBufferPointer { indices in
                var squares: Float = 0
                for position in values.indices {
                    var value = values[position]
                    if configuration.weighting == .binary {
                        value = 1
                    } else if configuration.sublinearTF {
                        value = 1 + log(value)
                    }
                    if let idf { value *= idf[Int(indices[position])] }
                    values[position] = value
                    squares += value * value
                }
                if configuration.l2Normalize && squares > 0 {
                    let scale = 1 / squares.squareRoot()
                    for position in values.indices { values[position] *= scale }
                }
            }
        }
    }
}

/// Reusable storage for featurizing one text after another without allocating.
struct FeatureBuffer {
    /// Feature indices as they are found, with repeats.
    var raw: [Int32] = []
    /// Distinct sorted indices of the last text.
    var indices: [Int32] = []
    /// Their values.
    var values: [Float] = []
    /// Hashing state.
    var scratch = FeatureScratch()

    /// Sorts `raw` and counts repeats into `indices` and `values`.
    mutating func countRawIndices() {
        indices.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        raw.withUnsafeMutableBufferPointer { Sorting.sortInPlace($0) }
        var position = 0
        while position < raw.count {
            let index = raw[position]
            var next = position + 1
            while next < raw.count && raw[next] == index { next += 1 }
            indices.append(index)
            values.append(Float(next - position))
            position = next
        }
    }
}

/// Hashing state for ``Featurizer/forEachFeatureHash(in:scratch:_:)``.
struct FeatureScratch {
    /// `states[k]` hashes the (k+1)-gram ending at the current token.
    var states: [FeatureHash] = []
    /// `history[k]` is the hash of the (k+1)-gram ending at the previous token.
    var history: [UInt64] = []
    /// A token padded as `<token>`, for character n-grams.
    var padded: [UInt8] = []
    /// Offsets of the scalars in `padded`.
    var scalarStarts: [Int] = []
}

extension Featurizer {
    /// Featurizes `texts` into the rows of a matrix, on `threads` threads (0: all cores).
    /// The result does not depend on the thread count.
    func matrix(for texts: [String], threads: Int = 0) -> SparseMatrix {
        let featurizer = self
        let parts = Parallel.map(texts.count, threads: threads == 0 ? Parallel.defaultThreadCount : threads) { rows in
            var matrix = SparseMatrix(columns: featurizer.dimension)
            var buffer = FeatureBuffer()
            for row in rows {
                Tokenizer.withUTF8(texts[row]) { featurizer.features(of: $0, into: &buffer) }
                matrix.appendRow(indices: buffer.indices, values: buffer.values)
            }
            return matrix
        }
        var matrix = SparseMatrix(columns: dimension)
        for part in parts { matrix.appendRows(of: part) }
        return matrix
    }
}
