/// How a text becomes a feature vector. The model file stores it, so training and prediction
/// always agree.
public struct FeaturizerConfiguration: Sendable, Hashable, Codable {
    /// How features map to indices.
    public enum Indexing: Sendable, Hashable, Codable {
        /// Feature hashing into `2^bits` buckets with the seed-free FNV-1a hash.
        case hashed(bits: Int)
        /// A vocabulary learned from the training texts, pruned as ``VocabularyPruning`` says.
        case vocabulary(VocabularyPruning)
    }

    /// How a vocabulary is pruned when it is learned.
    public struct VocabularyPruning: Sendable, Hashable, Codable {
        /// Keep features that occur at least this many times in the training texts.
        public var minCount: Int
        /// Keep at most this many features, the most frequent first (`nil`: no limit).
        public var maxSize: Int?
        /// Drop features that occur in more than this fraction of documents (`nil`: keep all).
        public var maxDocumentFrequency: Double?

        /// Creates pruning settings.
        /// - Parameters:
        ///   - minCount: The minimum count (default 1).
        ///   - maxSize: The largest vocabulary (default: no limit).
        ///   - maxDocumentFrequency: The largest document frequency, as a fraction (default: none).
        public init(minCount: Int = 1, maxSize: Int? = nil, maxDocumentFrequency: Double? = nil) {
            self.minCount = minCount
            self.maxSize = maxSize
            self.maxDocumentFrequency = maxDocumentFrequency
        }
    }

    /// How feature counts become values.
    public enum Weighting: String, Sendable, Hashable, Codable, CaseIterable {
        /// Raw counts.
        case counts
        /// 1 for a feature present, whatever its count.
        case binary
        /// Counts times the smoothed inverse document frequency `ln((1 + n) / (1 + df)) + 1`.
        case tfidf
    }

    /// The tokenizer, with its normalization settings.
    public var tokenizer: Tokenizer
    /// Word n-grams from 1 to this length (1: words only).
    public var maxWordNGram: Int
    /// Character n-gram lengths over each word, padded as `<word>` (`nil`: none).
    public var characterNGrams: ClosedRange<Int>?
    /// Add bigrams of adjacent characters in scripts without spaces (`北京` from `北`, `京`).
    public var scriptBigrams: Bool
    /// Also count each part of a word or number with joiners inside as a word of its own:
    /// `open-source` gives `open` and `source` besides itself, `don't` gives `don` and `t`.
    /// Models written before this setting existed read it as `false`.
    public var wordParts: Bool
    /// Also count each run of punctuation marks and symbols between words as a token, which
    /// takes part in word n-grams: `wow!!! :)` gives `wow`, `!!!`, `:)`, `wow !!!` and `!!! :)`.
    /// A full stop or a comma alone (`.`, `,`, `。`, `、`) is not counted.
    /// Models written before this setting existed (format versions 1 and 2) read it as `false`.
    public var punctuation: Bool
    /// How features map to indices.
    public var indexing: Indexing
    /// How counts become values.
    public var weighting: Weighting
    /// Use `1 + ln(count)` instead of the count (with `counts` and `tfidf`).
    public var sublinearTF: Bool
    /// Scale each vector to unit Euclidean length.
    public var l2Normalize: Bool

    /// Creates a configuration. The defaults suit sentiment and topic classification:
    /// lowercased words and bigrams, hashed into 2^20 buckets, counts, no normalization.
    /// - Parameters:
    ///   - tokenizer: The tokenizer (default: words, lowercased).
    ///   - maxWordNGram: The longest word n-gram (default 1).
    ///   - characterNGrams: Character n-gram lengths (default: none).
    ///   - scriptBigrams: Bigrams over scripts without spaces (default `true`).
    ///   - wordParts: The parts of joined words as words too (default `false`).
    ///   - punctuation: Runs of punctuation and symbols as tokens too (default `false`).
    ///   - indexing: Hashing or a vocabulary (default: hashing into 2^20 buckets).
    ///   - weighting: Counts, binary or TF-IDF (default: counts).
    ///   - sublinearTF: `1 + ln(count)` (default `false`).
    ///   - l2Normalize: Unit-length vectors (default `false`).
    public init(tokenizer: Tokenizer = Tokenizer(), maxWordNGram: Int = 1, characterNGrams: ClosedRange<Int>? = nil,
                scriptBigrams: Bool = true, wordParts: Bool = false, punctuation: Bool = false,
                indexing: Indexing = .hashed(bits: 20),
                weighting: Weighting = .counts, sublinearTF: Bool = false, l2Normalize: Bool = false) {
        self.tokenizer = tokenizer
        self.maxWordNGram = maxWordNGram
        self.characterNGrams = characterNGrams
        self.scriptBigrams = scriptBigrams
        self.wordParts = wordParts
        self.punctuation = punctuation
        self.indexing = indexing
        self.weighting = weighting
        self.sublinearTF = sublinearTF
        self.l2Normalize = l2Normalize
    }

    private enum CodingKeys: String, CodingKey {
        case tokenizer, maxWordNGram, characterNGrams, scriptBigrams, wordParts, punctuation, indexing, weighting,
             sublinearTF, l2Normalize
    }

    /// Decodes a configuration; `wordParts` and `punctuation` are `false` when absent, as in files
    /// written before they existed.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        tokenizer = try container.decode(Tokenizer.self, forKey: .tokenizer)
        maxWordNGram = try container.decode(Int.self, forKey: .maxWordNGram)
        characterNGrams = try container.decodeIfPresent(ClosedRange<Int>.self, forKey: .characterNGrams)
        scriptBigrams = try container.decode(Bool.self, forKey: .scriptBigrams)
        wordParts = try container.decodeIfPresent(Bool.self, forKey: .wordParts) ?? false
        punctuation = try container.decodeIfPresent(Bool.self, forKey: .punctuation) ?? false
        indexing = try container.decode(Indexing.self, forKey: .indexing)
        weighting = try container.decode(Weighting.self, forKey: .weighting)
        sublinearTF = try container.decode(Bool.self, forKey: .sublinearTF)
        l2Normalize = try container.decode(Bool.self, forKey: .l2Normalize)
    }

    /// Checks the settings.
    /// - Throws: ``MLKitError`` with code `invalidParameter`, naming the setting at fault.
    public func validate() throws {
        let fail = MLKitError.invalidParameter
        guard tokenizer.unit == .word else { throw fail("tokenizer.unit", "features need the word unit, not '\(tokenizer.unit.rawValue)'") }
        try tokenizer.validate()
        guard (1...5).contains(maxWordNGram) else { throw fail("maxWordNGram", "must be 1 to 5, not \(maxWordNGram)") }
        if let range = characterNGrams, range.lowerBound < 1 || range.upperBound > 8 {
            throw fail("characterNGrams", "lengths must lie in 1...8, not \(range.lowerBound)...\(range.upperBound)")
        }
        switch indexing {
        case .hashed(let bits):
            guard (8...28).contains(bits) else { throw fail("indexing.bits", "must be 8 to 28, not \(bits)") }
        case .vocabulary(let pruning):
            guard pruning.minCount >= 1 else { throw fail("indexing.minCount", "must be at least 1") }
            if let size = pruning.maxSize, size < 1 { throw fail("indexing.maxSize", "must be at least 1") }
            if let df = pruning.maxDocumentFrequency, !(df > 0 && df <= 1) {
                throw fail("indexing.maxDocumentFrequency", "must lie in (0, 1], not \(df)")
            }
        }
    }
}
