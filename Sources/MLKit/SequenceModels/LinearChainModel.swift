/// The weights of a first-order linear-chain model, which a CRF and a structured perceptron
/// both learn: a weight for each (attribute, label) pair, one for each pair of consecutive
/// labels, and one for each label at the start and at the end of a sentence.
///
/// The score of labels `y` for a sentence is
/// `start[y₀] + Σₜ Σ_{a ∈ attributes(t)} w(a, yₜ) + Σₜ transitions[yₜ₋₁ × L + yₜ] + end[yₙ₋₁]`.
/// The pair weights are stored attribute by attribute (``StateFeatures``), float32, so that a
/// token's label scores are a few short runs of adds.
struct LinearChainModel: Sendable {
    /// The number of labels, L.
    let labelCount: Int
    /// Which labels each attribute has a weight for.
    let features: StateFeatures
    /// The weight of each pair of ``features``.
    let pairWeights: [Float]
    /// `transitions[from × L + to]`.
    let transitions: [Float]
    /// The weight of each label on a sentence's first token, and on its last.
    let start: [Float]
    let end: [Float]

    /// Adds each label's score from a token's attributes to `scores` (L floats).
    /// - Parameter attributes: The token's attribute indices; indices outside the model
    ///   (negative) are skipped.
    @inline(__always)
    static func addStateScores(of attributes: UnsafeBufferPointer<Int32>, rowStarts: UnsafePointer<Int32>,
                               pairLabels: UnsafePointer<Int32>, pairWeights: UnsafePointer<Float>,
                               into scores: UnsafeMutablePointer<Float>) {
        for attribute in attributes where attribute >= 0 {
            let a = Int(attribute)
            for pair in Int(rowStarts[a])..<Int(rowStarts[a + 1]) {
                scores[Int(pairLabels[pair])] += pairWeights[pair]
            }
        }
    }

    /// Calls `body` with raw views of the weights, for the loops that score many tokens.
    @inline(__always)
    func withViews<R>(_ body: (Views) -> R) -> R {
        features.rowStarts.withUnsafeBufferPointer { rowStarts in
            features.pairLabels.withUnsafeBufferPointer { pairLabels in
                pairWeights.withUnsafeBufferPointer { pairWeights in
                    transitions.withUnsafeBufferPointer { transitions in
                        start.withUnsafeBufferPointer { start in
                            end.withUnsafeBufferPointer { end in
                                body(Views(labelCount: labelCount, rowStarts: rowStarts.baseAddress!,
                                           pairLabels: pairLabels.baseAddress ?? UnsafePointer(bitPattern: 4)!,
                                           pairWeights: pairWeights.baseAddress ?? UnsafePointer(bitPattern: 4)!,
                                           transitions: transitions.baseAddress!, start: start.baseAddress!,
                                           end: end.baseAddress!))
                            }
                        }
                    }
                }
            }
        }
    }

    /// The weights as pointers, valid inside ``withViews(_:)`` (or while whoever made them
    /// keeps the memory alive). Workers may share them to read the weights, never to write.
    struct Views: @unchecked Sendable {
        let labelCount: Int
        let rowStarts: UnsafePointer<Int32>
        let pairLabels: UnsafePointer<Int32>
        let pairWeights: UnsafePointer<Float>
        let transitions: UnsafePointer<Float>
        let start: UnsafePointer<Float>
        let end: UnsafePointer<Float>

        /// Fills `scores` (`tokens × L`, row-major) with each token's label scores.
        /// - Parameter attributesOf: The attribute indices of token `t`.
        @inline(__always)
        func stateScores(tokens: Int, into scores: UnsafeMutablePointer<Float>,
                         attributesOf: (Int) -> UnsafeBufferPointer<Int32>) {
            scores.initialize(repeating: 0, count: tokens * labelCount)
            for t in 0..<tokens {
                LinearChainModel.addStateScores(of: attributesOf(t), rowStarts: rowStarts, pairLabels: pairLabels,
                                                pairWeights: pairWeights, into: scores + t * labelCount)
            }
        }
    }
}
