import MLKit

/// A text classifier's stages from its dictionary of words to its probabilities, evaluated
/// without building any intermediate value, when they have the common shape: a
/// `dictVectorizer` with string keys on the model's only input, a `featureVectorizer` of that
/// one array, any `scaler`s without shifts and `normalizer`s, then the `glmClassifier`. Such is
/// the reference `SentimentPolarity` model, and every model that mlkit exports with a
/// vocabulary.
///
/// A prediction then costs a lookup per word (``KeyTable``), a sort of the words found, and a
/// pass over their weights: it allocates nothing but a buffer for the tokens' bytes. The stages add and multiply
/// in the same order as the general evaluation (`Plan`), so both give the same bits.
struct SparseTextPath: Sendable {
    enum Step: Sendable {
        /// Multiply by the scaler's one value, or by each index's.
        case scale([Double])
        case normalize(NormalizerStage.Norm)
    }

    let positions: KeyTable
    let steps: [Step]
    let classifier: GLMClassifierStage

    /// The path of the plan's classifier at step `classifierStep`, or `nil` when its stages have
    /// another shape.
    init?(plan: Plan, classifierStep: Int) {
        guard plan.inputs.count == 1, case .glmClassifier(let classifier) = plan.steps[classifierStep].operation else { return nil }
        var producers: [Int: Int] = [:]
        for (index, step) in plan.steps.enumerated() { for slot in step.outputs { producers[slot] = index } }
        var slot = plan.steps[classifierStep].inputs[0]
        var steps: [Step] = []
        while true {
            guard let producer = producers[slot] else { return nil }
            let step = plan.steps[producer]
            switch step.operation {
            case .normalizer(let stage):
                steps.insert(.normalize(stage.norm), at: 0)
            case .scaler(let stage) where stage.keepsZeros:
                steps.insert(.scale(stage.scale), at: 0)
            case .featureVectorizer(let stage) where stage.dimensions.count == 1:
                break
            case .dictVectorizer(let stage):
                guard case .strings(let positions) = stage.vocabulary, step.inputs[0] == plan.inputs[0].slot,
                      stage.dimension == classifier.linear.columns, stage.dimension < Int(Int32.max) else { return nil }
                self.positions = positions
                self.steps = steps
                self.classifier = classifier
                return
            default:
                return nil
            }
            slot = step.inputs[0]
        }
    }

    /// Calls `body` with the probabilities of the word counts of `text`, tokenized by
    /// `tokenizer`.
    func withProbabilities<R>(text: String, tokenizer: Tokenizer, _ body: (UnsafeBufferPointer<Double>) -> R) -> R {
        // A text has at most one token per byte.
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: text.utf8.count + 1) { found in
            var count = 0
            tokenizer.forEachNormalizedToken(in: text) { token in
                if let position = positions.position(of: token) {
                    found[count] = position
                    count += 1
                }
            }
            var words = UnsafeMutableBufferPointer(rebasing: found[0..<count])
            words.sort()
            return withUnsafeTemporaryAllocation(of: Double.self, capacity: max(count, 1)) { values in
                // Each word adds 1 to its position's count.
                var distinct = 0
                for word in words {
                    if distinct > 0 && found[distinct - 1] == word {
                        values[distinct - 1] += 1
                    } else {
                        found[distinct] = word
                        values[distinct] = 1
                        distinct += 1
                    }
                }
                return evaluate(UnsafeBufferPointer(rebasing: found[0..<distinct]),
                                UnsafeMutableBufferPointer(rebasing: values[0..<distinct]), body)
            }
        }
    }

    /// Calls `body` with the probabilities of a dictionary of counts, as the model's input.
    func withProbabilities<R>(counts: [String: Double], _ body: (UnsafeBufferPointer<Double>) -> R) -> R {
        var entries: [(position: Int32, value: Double)] = []
        entries.reserveCapacity(counts.count)
        for (key, value) in counts {
            if let position = positions.position(of: key) { entries.append((position, value)) }
        }
        entries.sort { $0.position < $1.position }
        return withUnsafeTemporaryAllocation(of: Int32.self, capacity: max(entries.count, 1)) { indices in
            withUnsafeTemporaryAllocation(of: Double.self, capacity: max(entries.count, 1)) { values in
                for (index, entry) in entries.enumerated() {
                    indices[index] = entry.position
                    values[index] = entry.value
                }
                return evaluate(UnsafeBufferPointer(rebasing: indices[0..<entries.count]),
                                UnsafeMutableBufferPointer(rebasing: values[0..<entries.count]), body)
            }
        }
    }

    /// The scalers and normalizers on the sparse values, then the classifier's scores and
    /// probabilities.
    private func evaluate<R>(_ indices: UnsafeBufferPointer<Int32>, _ values: UnsafeMutableBufferPointer<Double>,
                             _ body: (UnsafeBufferPointer<Double>) -> R) -> R {
        for step in steps {
            switch step {
            case .scale(let scale):
                guard !scale.isEmpty else { continue }
                if scale.count == 1 {
                    for position in values.indices { values[position] *= scale[0] }
                } else {
                    for position in values.indices { values[position] *= scale[Int(indices[position])] }
                }
            case .normalize(let norm):
                var total = 0.0
                switch norm {
                case .maximum: for value in values { total = max(total, abs(value)) }
                case .l1: for value in values { total += abs(value) }
                case .l2:
                    for value in values { total += value * value }
                    total = total.squareRoot()
                }
                if total > 0 { for position in values.indices { values[position] /= total } }
            }
        }
        let linear = classifier.linear
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: linear.rows) { scores in
            for row in 0..<linear.rows { scores[row] = linear.offsets[row] }
            linear.weights.withUnsafeBufferPointer { weights in
                for position in 0..<indices.count {
                    let value = values[position]
                    guard value != 0 else { continue }
                    let base = Int(indices[position]) * linear.rows
                    for row in 0..<linear.rows { scores[row] += weights[base + row] * value }
                }
            }
            return withUnsafeTemporaryAllocation(of: Double.self, capacity: classifier.labels.count) { probabilities in
                classifier.probabilities(fromScores: UnsafeBufferPointer(scores), into: probabilities)
                return body(UnsafeBufferPointer(probabilities))
            }
        }
    }
}
