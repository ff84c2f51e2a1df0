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

    private enum CodingKeys: String, CodingKey {
        case labels, confusion, topKAccuracy, logLoss
    }

    /// Decodes metrics, as a model file's header stores them, and checks that they fit
    /// together: a square confusion matrix with one row and column per label, counts that are
    /// not negative and whose total fits in an `Int`, and five top-k accuracies.
    /// - Throws: `DecodingError.dataCorrupted` naming the field that does not fit.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        labels = try container.decode([String].self, forKey: .labels)
        confusion = try container.decode([[Int]].self, forKey: .confusion)
        topKAccuracy = try container.decode([Double].self, forKey: .topKAccuracy)
        logLoss = try container.decodeIfPresent(Double.self, forKey: .logLoss)
        func corrupted(_ key: CodingKeys, _ reason: String) -> DecodingError {
            .dataCorruptedError(forKey: key, in: container, debugDescription: reason)
        }
        guard confusion.count == labels.count, confusion.allSatisfy({ $0.count == labels.count }) else {
            throw corrupted(.confusion, "the confusion matrix must have \(labels.count) rows of \(labels.count) counts, one per label")
        }
        var total = 0
        for count in confusion.joined() {
            guard count >= 0 else { throw corrupted(.confusion, "a count is negative") }
            let (sum, overflow) = total.addingReportingOverflow(count)
            guard !overflow else { throw corrupted(.confusion, "the counts add up to more than \(Int.max)") }
            total = sum
        }
        guard topKAccuracy.count == 5 else {
            throw corrupted(.topKAccuracy, "expected 5 accuracies (k = 1…5), found \(topKAccuracy.count)")
        }
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

    /// The metrics of several disjoint sets of examples taken together, as if measured on all
    /// of them at once: the confusion matrices and top-k hits are summed, and the log-loss is
    /// the mean over every example (`nil` if any part has none).
    ///
    /// The labels are the first part's, then each label a later part adds, in order; parts
    /// measured with the same model on slices of one dataset give the labels that measuring the
    /// whole dataset gives. Counts are exact; the log-loss may differ from one measured at once
    /// in its last digits, since its sum is added in another order.
    /// - Parameter parts: Metrics of sets of examples, none counted in two parts.
    public init(combining parts: [ClassificationMetrics]) {
        var labels: [String] = []
        var index: [String: Int] = [:]
        for label in parts.lazy.flatMap(\.labels) where index[label] == nil {
            index[label] = labels.count
            labels.append(label)
        }
        var confusion = Array(repeating: Array(repeating: 0, count: labels.count), count: labels.count)
        var hits = [Double](repeating: 0, count: 5)
        var total = 0, lossSum: Double? = 0
        for part in parts {
            let count = part.count
            let place = part.labels.map { index[$0]! }
            for (row, counts) in part.confusion.enumerated() {
                for (column, value) in counts.enumerated() { confusion[place[row]][place[column]] += value }
            }
            for k in 0..<min(5, part.topKAccuracy.count) {
                hits[k] += (part.topKAccuracy[k] * Double(count)).rounded()
            }
            if count > 0 { lossSum = part.logLoss.flatMap { loss in lossSum.map { $0 + loss * Double(count) } } }
            total += count
        }
        self.labels = labels
        self.confusion = confusion
        self.topKAccuracy = hits.map { total == 0 ? 0 : $0 / Double(total) }
        self.logLoss = total == 0 ? nil : lossSum.map { $0 / Double(total) }
    }
}
