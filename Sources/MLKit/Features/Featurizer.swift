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

    /// The vocabulary's keys by index, decoded from their packed bytes on each call, or `nil`
    /// when features are hashed.
    public var vocabularyTerms: [String]? { vocabulary?.terms?.strings }

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
        try self.init(fitting: texts, configuration: configuration, recoveringTerms: true, threads: 0)
    }

    /// Learns a vocabulary and document frequencies, on `threads` threads (0: all cores).
    /// - Parameter recoveringTerms: Whether to find the key string of each vocabulary entry.
    ///   Only a featurizer that goes into a model file needs them; without them
    ///   ``vocabularyTerms`` is `nil` and fitting takes about half the time.
    /// - Parameter counted: The features of `texts`, when ``countFeatures(_:configuration:threads:)``
    ///   has already counted them with this configuration.
    init(fitting texts: [String], configuration: FeaturizerConfiguration, recoveringTerms: Bool, threads: Int,
         counted: FeatureStatistics? = nil) throws {
        try configuration.validate()
        var vocabulary: Vocabulary?
        if case .vocabulary(let pruning) = configuration.indexing {
            let statistics = counted ?? Self.countFeatures(texts, configuration: configuration, threads: threads)
            vocabulary = try Self.learnVocabulary(texts, counted: statistics, configuration: configuration,
                                                  pruning: pruning, recoveringTerms: recoveringTerms, threads: threads)
        }
        var featurizer = Featurizer(configuration: configuration, vocabulary: vocabulary, inverseDocumentFrequency: nil)
        if configuration.weighting == .tfidf {
            featurizer = Featurizer(configuration: configuration, vocabulary: vocabulary,
                                    inverseDocumentFrequency: featurizer.learnInverseDocumentFrequency(texts, threads: threads))
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
        return buffer.vector
    }

    /// The feature vectors of many texts, computed on `threads` threads with one reused buffer
    /// per thread.
    /// - Parameters:
    ///   - texts: The texts.
    ///   - threads: The number of threads (0: all cores). The result does not depend on it.
    /// - Returns: One vector per text, in order.
    public func vectors(for texts: [String], threads: Int = 0) -> [SparseVector] {
        let featurizer = self
        let parts = Parallel.balancedMap(texts.count, threads: threads) { rows in
            var buffer = FeatureBuffer()
            return featurizer.withTables { tables in
                rows.map { row in
                    Tokenizer.withUTF8(texts[row]) {
                        featurizer.features(of: $0, into: &buffer, ascending: true, tables: tables, lookahead: NoLookahead())
                    }
                    return buffer.vector
                }
            }
        }
        return parts.flatMap { $0 }
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

    /// Computes the features of UTF-8 text into the first `buffer.count` entries of
    /// `buffer.indices` and `buffer.values`, reusing the buffer's storage: after warm-up, no
    /// allocation.
    /// - Parameters:
    /// - Parameter ascending: Whether the indices must be in ascending order, as in a
    ///   ``SparseVector`` or a matrix row. Scoring one text does not need the order, and then the
    ///   indices come in the order of their first occurrence, which is cheaper to get.
    func features(of bytes: UnsafeBufferPointer<UInt8>, into buffer: inout FeatureBuffer, ascending: Bool = true) {
        withTables { features(of: bytes, into: &buffer, ascending: ascending, tables: $0, lookahead: NoLookahead()) }
    }

    /// What featurizing reads besides the text, as pointers valid only inside
    /// ``withTables(_:)``: the vocabulary's table and the IDF.
    struct Tables {
        let lookup: Vocabulary.Lookup?
        let inverseDocumentFrequency: UnsafePointer<Float>?
    }

    /// Calls `body` with the featurizer's ``Tables``. A caller that featurizes many texts
    /// (batch prediction, ``vectors(for:threads:)``, ``matrix(for:threads:)``) fetches them once:
    /// fetching them per text retains and releases the vocabulary and the IDF array, objects that
    /// every thread shares, so that their reference counts' cache line moves from core to core
    /// with each text.
    @inline(__always)
    func withTables<R>(_ body: (Tables) -> R) -> R {
        withInverseDocumentFrequencies { idf in
            guard let vocabulary else { return body(Tables(lookup: nil, inverseDocumentFrequency: idf)) }
            return vocabulary.withLookup { body(Tables(lookup: $0, inverseDocumentFrequency: idf)) }
        }
    }

    /// ``features(of:into:ascending:)`` with the ``Tables`` already fetched, telling `lookahead`
    /// each index as soon as it is found.
    func features<Lookahead: FeatureLookahead>(of bytes: UnsafeBufferPointer<UInt8>, into buffer: inout FeatureBuffer,
                                               ascending: Bool, tables: Tables, lookahead: Lookahead) {
        // A document has at most one token per byte and a bounded number of features per token;
        // only NFKC expansion with character n-grams can exceed the estimate, and then the
        // document is simply hashed again into a larger buffer.
        var needed = featureEstimate(byteCount: bytes.count)
        // Scoring with a vocabulary counts while it looks up, so that a repeated feature's row
        // and IDF are fetched once (passes over the test sets: 0.93-0.98x of the time of looking
        // all up first, then counting).
        let countingLookup = ascending ? nil : tables.lookup
        var found = 0
        repeat {
            buffer.reserveRaw(needed)
            found = if let countingLookup {
                collectDistinctIndices(of: bytes, into: &buffer, lookup: countingLookup,
                                       inverseDocumentFrequency: tables.inverseDocumentFrequency, lookahead: lookahead)
            } else {
                collectIndices(of: bytes, into: &buffer, tables: tables, lookahead: lookahead)
            }
            needed = found
        } while found > buffer.raw.count
        if countingLookup == nil {
            if ascending { buffer.countRawIndices(found) } else { buffer.countRawIndicesInFirstOccurrence(found) }
        }
        applyWeighting(to: &buffer, inverseDocumentFrequency: tables.inverseDocumentFrequency)
    }

    /// For scoring with a vocabulary: hashes every feature of the text (``hashFeatures(of:into:lookup:)``),
    /// then looks each up and counts the repeats of the indices found in the same loop, writing
    /// the distinct ones into `buffer.indices` and `buffer.values` (their counts) in the order of
    /// first occurrence. A repeated feature's IDF weight is prefetched, and `lookahead` told of
    /// it, only once.
    /// - Returns: How many feature hashes the text has: more than `buffer.hashes.count` when the
    ///   buffer was too small, and the caller must grow it and call again.
    private func collectDistinctIndices<Lookahead: FeatureLookahead>(
        of bytes: UnsafeBufferPointer<UInt8>, into buffer: inout FeatureBuffer, lookup: Vocabulary.Lookup,
        inverseDocumentFrequency idf: UnsafePointer<Float>?, lookahead: Lookahead
    ) -> Int {
        let hashed = hashFeatures(of: bytes, into: &buffer, lookup: lookup)
        guard hashed <= buffer.hashes.count else { return hashed }
        // A reference of its own, so that the counting may change the buffer while reading it.
        let hashes = buffer.hashes
        hashes.withUnsafeBufferPointer { hashes in
            buffer.countFirstOccurrences(atMost: hashed) { counter in
                for position in 0..<hashed {
                    guard let found = lookup.index(ofHash: hashes[position]) else { continue }
                    if counter.count(Int32(truncatingIfNeeded: found)) {
                        // As in `collectIndices`: the IDF is read soon.
                        if let idf { prefetchForReading(idf + found) }
                        lookahead.found(found)
                    }
                }
            }
        }
        return hashed
    }

    /// Writes the hash of each feature of the text into `buffer.hashes` while there is room, and
    /// starts fetching the slot where each one's lookup begins: the lookups do not depend on one
    /// another, so their cache misses in a large table overlap with each other and with the
    /// tokenizing and hashing of the rest of the text (fetching the slots after all the hashes
    /// took 1.09–1.21× as long).
    /// - Returns: How many features the text has, which may be more than `buffer.hashes.count`.
    @inline(__always)
    private func hashFeatures(of bytes: UnsafeBufferPointer<UInt8>, into buffer: inout FeatureBuffer,
                              lookup: Vocabulary.Lookup) -> Int {
        var hashed = 0
        buffer.hashes.withUnsafeMutableBufferPointer { hashes in
            forEachFeatureHash(in: bytes, scratch: &buffer.scratch) { hash in
                if hashed < hashes.count { hashes[hashed] = hash }
                hashed += 1
                lookup.prefetch(hash: hash)
            }
        }
        return hashed
    }

    /// An upper bound on the features of a text of `byteCount` bytes, without NFKC expansion.
    private func featureEstimate(byteCount: Int) -> Int {
        var perByte = configuration.maxWordNGram + (configuration.scriptBigrams ? 1 : 0)
            + (configuration.wordParts ? 1 : 0)
        if let lengths = configuration.characterNGrams { perByte += 3 * lengths.count }
        return 16 + byteCount * perByte
    }

    /// Writes the index of each feature into `buffer.raw` while there is room, telling
    /// `lookahead` of each, and returns how many features there are.
    private func collectIndices<Lookahead: FeatureLookahead>(of bytes: UnsafeBufferPointer<UInt8>,
                                                             into buffer: inout FeatureBuffer, tables: Tables,
                                                             lookahead: Lookahead) -> Int {
        if let lookup = tables.lookup {
            let hashed = hashFeatures(of: bytes, into: &buffer, lookup: lookup)
            // More hashes than room: report that many, so the caller grows the buffer.
            guard hashed <= buffer.hashes.count else { return hashed }
            let idf = tables.inverseDocumentFrequency
            var found = 0
            buffer.raw.withUnsafeMutableBufferPointer { raw in
                buffer.hashes.withUnsafeBufferPointer { hashes in
                    for position in 0..<hashed {
                        guard let index = lookup.index(ofHash: hashes[position]) else { continue }
                        raw[found] = Int32(truncatingIfNeeded: index)
                        found += 1
                        // The weighting multiplies by this feature's IDF after the counting: its
                        // cache miss overlaps with the lookups and the counting instead.
                        if let idf { prefetchForReading(idf + index) }
                        lookahead.found(index)
                    }
                }
            }
            return found
        }
        var found = 0
        if case .hashed(let bits) = configuration.indexing {
            buffer.raw.withUnsafeMutableBufferPointer { raw in
                forEachFeatureHash(in: bytes, scratch: &buffer.scratch) { hash in
                    if found < raw.count { raw[found] = Int32(truncatingIfNeeded: FeatureHash.bucket(hash, bits: bits)) }
                    found += 1
                }
            }
        }
        return found
    }

    /// Calls `body` with the IDF of each feature, or `nil` without TF-IDF weighting.
    @inline(__always)
    private func withInverseDocumentFrequencies<R>(_ body: (UnsafePointer<Float>?) -> R) -> R {
        guard let inverseDocumentFrequency else { return body(nil) }
        return inverseDocumentFrequency.withUnsafeBufferPointer { body($0.baseAddress) }
    }

    /// The index of the feature with this key (see ``FeatureHash``), or `nil` if a vocabulary
    /// does not know it.
    func index(ofKey key: String) -> Int? {
        let hash = FeatureHash.of(key)
        if let vocabulary { return vocabulary.index(ofHash: hash) }
        if case .hashed(let bits) = configuration.indexing { return FeatureHash.bucket(hash, bits: bits) }
        return nil
    }

    /// Turns counts into values: sublinear TF, binary, IDF, then L2 normalization.
    func applyWeighting(to buffer: inout FeatureBuffer) {
        withInverseDocumentFrequencies { applyWeighting(to: &buffer, inverseDocumentFrequency: $0) }
    }

    /// ``applyWeighting(to:)`` with the IDF already fetched (``Tables``).
    private func applyWeighting(to buffer: inout FeatureBuffer, inverseDocumentFrequency idf: UnsafePointer<Float>?) {
        let count = buffer.count
        buffer.values.withUnsafeMutableBufferPointer { values in
            buffer.indices.withUnsafeBufferPointer { indices in
                applyWeighting(indices: UnsafeBufferPointer(rebasing: indices[0..<count]),
                               values: UnsafeMutableBufferPointer(rebasing: values[0..<count]), inverseDocumentFrequency: idf)
            }
        }
    }

    /// Turns the counts of one document into values, in place.
    func applyWeighting(indices: UnsafeBufferPointer<Int32>, values: UnsafeMutableBufferPointer<Float>) {
        withInverseDocumentFrequencies { applyWeighting(indices: indices, values: values, inverseDocumentFrequency: $0) }
    }

    /// ``applyWeighting(indices:values:)`` with the IDF already fetched.
    private func applyWeighting(indices: UnsafeBufferPointer<Int32>, values: UnsafeMutableBufferPointer<Float>,
                                inverseDocumentFrequency idf: UnsafePointer<Float>?) {
        let configuration = self.configuration
        var squares: Float = 0
        for position in 0..<values.count {
            var value = values[position]
            if configuration.weighting == .binary {
                value = 1
            } else if configuration.sublinearTF && value != 1 {
                value = 1 + log(value)  // 1 + log 1 = 1: most counts are 1, and skip the logarithm
            }
            if let idf { value *= idf[Int(indices[position])] }
            values[position] = value
            squares += value * value
        }
        if configuration.l2Normalize && squares > 0 {
            let scale = 1 / squares.squareRoot()
            for position in 0..<values.count { values[position] *= scale }
        }
    }
}

/// Told of each feature index of a text as featurizing finds it, before the text's features are
/// complete: a scorer starts fetching the weights it will read, so that their cache misses
/// overlap with the rest of the featurizing (``ClassifierModel/Scorer``). Featurizing reads no
/// model; what to fetch is the scorer's business.
protocol FeatureLookahead {
    /// Featurizing has found the feature `index` in the text (a repeated feature, perhaps more
    /// than once).
    func found(_ index: Int)
}

/// The lookahead of featurizing for anything but scoring: it ignores what is found.
struct NoLookahead: FeatureLookahead {
    @inline(__always)
    func found(_ index: Int) {}
}

/// Reusable storage for featurizing one text after another without allocating.
///
/// The arrays only grow; the features of the last text are the first ``count`` entries of
/// ``indices`` and ``values``.
struct FeatureBuffer {
    /// Feature indices as they are found, with repeats.
    var raw: [Int32] = []
    /// The hashes of the features as they are found, before a vocabulary looks them up; as
    /// long as ``raw``.
    var hashes: [UInt64] = []
    /// Working space for sorting ``raw``.
    var sortScratch: [Int32] = []
    /// An open-addressing table from an index to its position in ``indices``, -1 when empty,
    /// for counting without sorting.
    var positions: [Int32] = []
    /// Distinct indices of the last text: ascending, or in the order of their first occurrence
    /// (see ``Featurizer/features(of:into:ascending:)``).
    var indices: [Int32] = []
    /// Their values.
    var values: [Float] = []
    /// The number of features of the last text.
    var count = 0
    /// Hashing state.
    var scratch = FeatureScratch()

    /// Grows ``raw`` to hold at least `capacity` entries.
    mutating func reserveRaw(_ capacity: Int) {
        if raw.count < capacity {
            raw = [Int32](repeating: 0, count: max(capacity, 2 * raw.count))
            sortScratch = raw
            hashes = [UInt64](repeating: 0, count: raw.count)
        }
    }

    /// Sorts the first `rawCount` entries of ``raw`` and counts repeats into ``indices`` and
    /// ``values``.
    mutating func countRawIndices(_ rawCount: Int) {
        reserveDistinct(rawCount)
        var distinct = 0
        raw.withUnsafeMutableBufferPointer { raw in
            let found = UnsafeMutableBufferPointer(rebasing: raw[0..<rawCount])
            sortScratch.withUnsafeMutableBufferPointer { Sorting.sortKeys(found, scratch: $0) }
            indices.withUnsafeMutableBufferPointer { indices in
                values.withUnsafeMutableBufferPointer { values in
                    var position = 0
                    while position < rawCount {
                        let index = found[position]
                        var next = position + 1
                        while next < rawCount && found[next] == index { next += 1 }
                        indices[distinct] = index
                        values[distinct] = Float(next - position)
                        distinct += 1
                        position = next
                    }
                }
            }
        }
        count = distinct
    }

    /// Counts repeats of the first `rawCount` entries of ``raw`` into ``indices`` and
    /// ``values``, each index where it first occurs (``FirstOccurrenceCounter``). Scoring with
    /// hashed indexing takes this; with a vocabulary, ``Featurizer`` counts while it looks up.
    mutating func countRawIndicesInFirstOccurrence(_ rawCount: Int) {
        // A reference of its own, so that the counting may change the buffer while reading it.
        let raw = self.raw
        raw.withUnsafeBufferPointer { raw in
            countFirstOccurrences(atMost: rawCount) { counter in
                for entry in 0..<rawCount { _ = counter.count(raw[entry]) }
            }
        }
    }

    /// Counts the indices that `body` gives a ``FirstOccurrenceCounter`` into ``indices`` and
    /// ``values``, in the order of their first occurrence, and sets ``count``; the counter's
    /// table is empty again afterwards.
    /// - Parameter atMost: How many indices `body` may count, repeats included.
    @inline(__always)
    mutating func countFirstOccurrences(atMost limit: Int, _ body: (inout FirstOccurrenceCounter) -> Void) {
        let bits = reserveCounting(limit)
        var distinct = 0
        positions.withUnsafeMutableBufferPointer { positions in
            indices.withUnsafeMutableBufferPointer { indices in
                values.withUnsafeMutableBufferPointer { values in
                    var counter = FirstOccurrenceCounter(positions: positions, bits: bits, indices: indices, values: values)
                    body(&counter)
                    counter.clear()
                    distinct = counter.distinct
                }
            }
        }
        count = distinct
    }

    /// Grows ``indices`` and ``values`` to hold `count` distinct features, and ``positions`` to
    /// the table of a ``FirstOccurrenceCounter`` for them, at most half full: a power of two of
    /// slots, all empty.
    /// - Returns: The table's size, as the power of two: its first `1 << bits` slots.
    private mutating func reserveCounting(_ count: Int) -> Int {
        reserveDistinct(count)
        var bits = 4
        while 1 << bits < 2 * count { bits += 1 }
        if positions.count < 1 << bits { positions = [Int32](repeating: -1, count: 1 << bits) }
        return bits
    }

    /// Grows ``indices`` and ``values`` to hold at least `count` distinct features.
    private mutating func reserveDistinct(_ count: Int) {
        if indices.count < count {
            indices = [Int32](repeating: 0, count: max(count, 2 * indices.count))
            values = [Float](repeating: 0, count: indices.count)
        }
    }

    /// Sets the features to sorted, distinct indices with their counts.
    mutating func setCounts(_ pairs: [(key: Int32, value: Float)]) {
        indices = pairs.map(\.key)
        values = pairs.map(\.value)
        count = pairs.count
    }

    /// The features of the last text as a vector.
    var vector: SparseVector {
        SparseVector(uncheckedIndices: Array(indices[0..<count]), values: Array(values[0..<count]))
    }
}

/// Scratch space for character n-grams in ``Featurizer/forEachFeatureHash(in:scratch:_:)``.
struct FeatureScratch {
    /// A token padded as `<token>`, for character n-grams.
    var padded: [UInt8] = []
    /// Offsets of the scalars in `padded`, then its end.
    var scalarStarts: [Int] = []

    /// Sets ``padded`` to `<token>`, the normalized bytes that `write` appends between angle
    /// brackets, and ``scalarStarts`` to where each of its scalars starts.
    /// - Returns: The number of scalars.
    mutating func pad(_ write: (inout [UInt8]) -> Void) -> Int {
        padded.removeAll(keepingCapacity: true)
        padded.append(UInt8(ascii: "<"))
        write(&padded)
        padded.append(UInt8(ascii: ">"))
        scalarStarts.removeAll(keepingCapacity: true)
        for (offset, byte) in padded.enumerated() where byte & 0xC0 != 0x80 { scalarStarts.append(offset) }
        let count = scalarStarts.count
        scalarStarts.append(padded.count)
        return count
    }
}

extension Featurizer {
    /// Featurizes `texts` into the rows of a matrix, on `threads` threads (0: all cores).
    /// The result does not depend on the thread count.
    func matrix(for texts: [String], threads: Int = 0) -> SparseMatrix {
        let featurizer = self
        let parts = Parallel.balancedMap(texts.count, threads: threads) { rows in
            var matrix = SparseMatrix(columns: featurizer.dimension)
            var buffer = FeatureBuffer()
            featurizer.withTables { tables in
                for row in rows {
                    Tokenizer.withUTF8(texts[row]) {
                        featurizer.features(of: $0, into: &buffer, ascending: true, tables: tables, lookahead: NoLookahead())
                    }
                    matrix.appendRow(indices: buffer.indices[0..<buffer.count], values: buffer.values[0..<buffer.count])
                }
            }
            return matrix
        }
        var matrix = SparseMatrix(columns: dimension)
        for part in parts { matrix.appendRows(of: part) }
        return matrix
    }
}

/// Counts the repeats of feature indices into ``FeatureBuffer/indices`` and
/// ``FeatureBuffer/values``, each index where it first occurs, through an open-addressing table
/// (``FeatureBuffer/positions``, at most half full) from an index to its place among the
/// distinct ones: no sort, one probe per index.
struct FirstOccurrenceCounter {
    /// The table's slots, -1 when empty: its first `1 << bits` entries.
    let positions: UnsafeMutableBufferPointer<Int32>
    /// The table's size, as a power of two (see ``FeatureBuffer/countFirstOccurrences(atMost:_:)``).
    let bits: Int
    /// The distinct indices, as they first occur.
    let indices: UnsafeMutableBufferPointer<Int32>
    /// Their counts.
    let values: UnsafeMutableBufferPointer<Float>
    /// How many distinct indices so far.
    private(set) var distinct = 0

    /// Counts one occurrence of `index`.
    /// - Returns: Whether it is the first.
    @inline(__always)
    mutating func count(_ index: Int32) -> Bool {
        let mask = 1 << bits - 1
        var slot = FibonacciHashing.slot(of: index, bits: bits)
        while true {
            let place = Int(positions[slot])
            if place < 0 {
                positions[slot] = Int32(truncatingIfNeeded: distinct)
                indices[distinct] = index
                values[distinct] = 1
                distinct += 1
                return true
            }
            if indices[place] == index {
                values[place] += 1
                return false
            }
            slot = (slot + 1) & mask
        }
    }

    /// Empties the table again for the next text.
    func clear() {
        UnsafeMutableBufferPointer(rebasing: positions[0..<(1 << bits)]).update(repeating: -1)
    }
}
