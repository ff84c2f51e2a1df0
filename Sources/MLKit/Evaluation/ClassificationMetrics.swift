/// How well a classifier labels a set of examples: accuracy, per-class precision, recall and
/// F1, their macro and weighted means, top-k accuracy, the confusion matrix, and the log-loss of
/// its probabilities.
///
/// The names follow Create ML's `MLClassifierMetrics` where it has one (`classificationError`,
/// `precisionRecall`, `confusion`).
public struct ClassificationMetrics: Sendable, Hashable, Codable {
    /// Precision, recall, F1 and support of one class.
    public struct ClassMetrics: Sendable, Hashable, Codable {
        /// The class label.
        public let label: String
        /// Of the examples predicted as this class, the fraction that are (0 when none are).
        public let precision: Double
        /// Of the examples of this class, the fraction predicted as it (0 when there are none).
        public let recall: Double
        /// The harmonic mean of precision and recall (0 when both are 0).
        public let f1: Double
        /// The number of examples of this class.
        public let support: Int
    }

    /// The labels, in the order of the confusion matrix's rows and columns.
    public let labels: [String]
    /// `confusion[actual][predicted]`: how many examples of class `actual` were predicted as
    /// `predicted`.
    public let confusion: [[Int]]
    /// The fraction of examples whose true label is among the k most likely, for k = 1…5
    /// (index 0 is k = 1).
    public let topKAccuracy: [Double]
    /// The log-loss: the mean of `−log p`, where `p` is the probability the classifier gave each
    /// example's true label (0 for a label it does not know), floored at 10⁻¹⁵, as scikit-learn's
    /// `log_loss` computes it. It measures the probabilities themselves, where accuracy measures
    /// only their order. `nil` when the metrics come from rankings alone, as a model's training
    /// and validation metrics do.
    public let logLoss: Double?

    /// The number of examples.
    public var count: Int { confusion.reduce(0) { $0 + $1.reduce(0, +) } }

    /// The fraction labelled correctly.
    public var accuracy: Double {
        count == 0 ? 0 : Double(labels.indices.reduce(0) { $0 + confusion[$1][$1] }) / Double(count)
    }

    /// The fraction labelled wrongly: `1 − accuracy`, as Create ML reports it.
    public var classificationError: Double { count == 0 ? 0 : 1 - accuracy }

    /// Precision, recall, F1 and support of each class, in label order.
    public var perClass: [ClassMetrics] { Self.perClass(labels: labels, confusion: confusion) }

    /// Precision, recall, F1 and support of each class of a confusion matrix
    /// (`confusion[actual][predicted]`), in label order.
    static func perClass(labels: [String], confusion: [[Int]]) -> [ClassMetrics] {
        labels.indices.map { index in
            let truePositives = Double(confusion[index][index])
            let predicted = Double(labels.indices.reduce(0) { $0 + confusion[$1][index] })
            let support = confusion[index].reduce(0, +)
            let precision = predicted == 0 ? 0 : truePositives / predicted
            let recall = support == 0 ? 0 : truePositives / Double(support)
            let f1 = precision + recall == 0 ? 0 : 2 * precision * recall / (precision + recall)
            return ClassMetrics(label: labels[index], precision: precision, recall: recall, f1: f1, support: support)
        }
    }

    /// The unweighted mean of the per-class F1 scores, over classes with examples or predictions.
    public var macroF1: Double {
        let present = perClass.enumerated().filter { index, metrics in
            metrics.support > 0 || labels.indices.contains { confusion[$0][index] > 0 }
        }.map(\.element)
        return present.isEmpty ? 0 : present.reduce(0) { $0 + $1.f1 } / Double(present.count)
    }

    /// The mean of the per-class F1 scores, weighted by support.
    public var weightedF1: Double {
        let total = count
        return total == 0 ? 0 : perClass.reduce(0) { $0 + $1.f1 * Double($1.support) } / Double(total)
    }

    /// Computes metrics from true labels and ranked predictions.
    /// - Parameters:
    ///   - labels: All class labels.
    ///   - actual: The true class index of each example.
    ///   - ranked: For each example, class indices from most to least likely (at least one).
    ///   - logLoss: The log-loss (``logLoss``), when the probabilities are known.
    /// - Precondition: `actual` and `ranked` have one entry per example, indices within `labels`.
    public init(labels: [String], actual: [Int], ranked: [[Int]], logLoss: Double? = nil) {
        precondition(actual.count == ranked.count, "one ranking per example")
        var confusion = Array(repeating: Array(repeating: 0, count: labels.count), count: labels.count)
        var hits = [Int](repeating: 0, count: 5)
        for (truth, ranking) in zip(actual, ranked) {
            guard let first = ranking.first else { continue }
            confusion[truth][first] += 1
            if let rank = ranking.prefix(5).firstIndex(of: truth) {
                for k in rank..<5 { hits[k] += 1 }
            }
        }
        self.labels = labels
        self.confusion = confusion
        self.topKAccuracy = hits.map { actual.isEmpty ? 0 : Double($0) / Double(actual.count) }
        self.logLoss = logLoss
    }
}
