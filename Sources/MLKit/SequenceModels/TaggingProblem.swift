/// Sentences turned into numbers for training a linear-chain model: each token's attribute
/// indices and its gold label.
struct TaggingProblem: Sendable {
    /// The number of labels.
    let labelCount: Int
    /// The number of distinct attributes; every index in ``attributes`` is below it.
    var attributeCount: Int
    /// Sentence `s` holds tokens `sentenceStarts[s] ..< sentenceStarts[s + 1]`.
    let sentenceStarts: [Int]
    /// Token `t`'s attributes are `attributes[tokenStarts[t] ..< tokenStarts[t + 1]]`.
    let tokenStarts: [Int]
    /// The attribute indices of every token, one token after another.
    private(set) var attributes: [Int32]
    /// The gold label of each token.
    let gold: [Int32]

    var sentenceCount: Int { sentenceStarts.count - 1 }
    var tokenCount: Int { gold.count }
    /// The length of the longest sentence.
    var longestSentence: Int {
        (0..<sentenceCount).reduce(0) { max($0, sentenceStarts[$1 + 1] - sentenceStarts[$1]) }
    }

    /// The attributes in order of decreasing frequency in this problem (ties in index order),
    /// and each attribute's place in that order.
    func frequencyOrder() -> (order: [Int32], newIndex: [Int32]) {
        var counts = [Int32](repeating: 0, count: attributeCount)
        for attribute in attributes { counts[Int(attribute)] += 1 }
        let order = (0..<Int32(attributeCount)).sorted { left, right in
            let (a, b) = (counts[Int(left)], counts[Int(right)])
            return a != b ? a > b : left < right
        }
        var newIndex = [Int32](repeating: 0, count: attributeCount)
        for (position, attribute) in order.enumerated() { newIndex[Int(attribute)] = Int32(position) }
        return (order, newIndex)
    }

    /// Replaces every attribute index `a` with `newIndex[a]`.
    mutating func renumber(_ newIndex: [Int32]) {
        newIndex.withUnsafeBufferPointer { newIndex in
            attributes.withUnsafeMutableBufferPointer { attributes in
                for position in attributes.indices { attributes[position] = newIndex[Int(attributes[position])] }
            }
        }
    }

    /// The sentences `indices`, in that order, as a problem of their own.
    func subset(_ indices: [Int]) -> TaggingProblem {
        var sentenceStarts = [0]
        var tokenStarts = [0]
        var attributes: [Int32] = []
        var gold: [Int32] = []
        sentenceStarts.reserveCapacity(indices.count + 1)
        for sentence in indices {
            for token in self.sentenceStarts[sentence]..<self.sentenceStarts[sentence + 1] {
                attributes.append(contentsOf: self.attributes[self.tokenStarts[token]..<self.tokenStarts[token + 1]])
                tokenStarts.append(attributes.count)
                gold.append(self.gold[token])
            }
            sentenceStarts.append(gold.count)
        }
        return TaggingProblem(labelCount: labelCount, attributeCount: attributeCount, sentenceStarts: sentenceStarts,
                              tokenStarts: tokenStarts, attributes: attributes, gold: gold)
    }
}

/// Which labels each attribute has a weight for: the (attribute, label) pairs seen in the
/// training data, as CRFsuite keeps them. An attribute's pairs are stored together, so that
/// scoring a token reads one short run of labels and weights per attribute.
struct StateFeatures: Sendable, Equatable {
    /// Attribute `a`'s pairs are `rowStarts[a] ..< rowStarts[a + 1]`.
    let rowStarts: [Int32]
    /// The label of each pair, increasing within an attribute's run.
    let pairLabels: [Int32]

    var attributeCount: Int { rowStarts.count - 1 }
    var pairCount: Int { pairLabels.count }

    init(rowStarts: [Int32], pairLabels: [Int32]) {
        self.rowStarts = rowStarts
        self.pairLabels = pairLabels
    }

    /// The pairs of the gold labels of `problem`: every attribute with every label it occurs
    /// with.
    init(_ problem: TaggingProblem) {
        let words = (problem.labelCount + 63) / 64
        var seen = [UInt64](repeating: 0, count: problem.attributeCount * words)
        for token in 0..<problem.tokenCount {
            let label = Int(problem.gold[token])
            let bit = UInt64(1) << UInt64(label & 63)
            for position in problem.tokenStarts[token]..<problem.tokenStarts[token + 1] {
                seen[Int(problem.attributes[position]) * words + label >> 6] |= bit
            }
        }
        var rowStarts = [Int32](repeating: 0, count: problem.attributeCount + 1)
        var pairLabels: [Int32] = []
        for attribute in 0..<problem.attributeCount {
            for word in 0..<words {
                var bits = seen[attribute * words + word]
                while bits != 0 {
                    pairLabels.append(Int32(word * 64 + bits.trailingZeroBitCount))
                    bits &= bits - 1
                }
            }
            rowStarts[attribute + 1] = Int32(pairLabels.count)
        }
        self.rowStarts = rowStarts
        self.pairLabels = pairLabels
    }

    /// The index of the pair (`attribute`, `label`), or `nil` when the attribute has no weight
    /// for that label.
    @inline(__always)
    func pair(_ attribute: Int, _ label: Int32) -> Int? {
        for pair in Int(rowStarts[attribute])..<Int(rowStarts[attribute + 1]) where pairLabels[pair] == label { return pair }
        return nil
    }
}
