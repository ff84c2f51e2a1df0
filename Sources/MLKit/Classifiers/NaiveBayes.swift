import Foundation

/// Multinomial naive Bayes (McCallum & Nigam 1998), with scikit-learn's `MultinomialNB` formulas.
///
/// With `N_cf` the (class-weighted) total value of feature `f` in class `c`, `N_c = Σ_f N_cf`,
/// `n` the number of feature columns (the featurizer's dimension, `2^bits` when hashing) and
/// additive smoothing `α`:
///
///     W[f, c] = log((N_cf + α) / (N_c + α·n))        (feature_log_prob_)
///     b[c]    = log(m_c / Σ_c' m_c')                  (class_log_prior_)
///
/// where `m_c` is the class-weighted number of examples of class `c`. The scores `x·W + b` are
/// the joint log-likelihoods `log P(c) + Σ_f x_f log P(f | c)`, so probabilities are
/// `softmax(scores)` (temperature 1), or the temperature fitted on a validation set.
struct MultinomialNaiveBayes: Sendable {
    /// The additive smoothing `α` (Laplace smoothing at 1); must be positive.
    var smoothing: Double = 1
    /// Worker threads (0: all cores); the result does not depend on it.
    var threads = 0

    /// Counts the features of each class and returns the model.
    /// - Parameters:
    ///   - problem: Non-negative feature values (counts, or TF-IDF as scikit-learn allows).
    ///   - validation: When given, the softmax temperature is fitted to it
    ///     (``ProbabilityCalibration/fitTemperature(scores:labels:classes:)``).
    /// - Throws: ``MLKitError`` with code `invalidParameter` for a non-positive `smoothing` or a
    ///   negative feature value.
    func train(_ problem: TrainingProblem, validation: TrainingProblem? = nil) throws -> LinearModel {
        try train(NaiveBayesCounts(problem), validation: validation)
    }

    /// Returns the model of counts already taken, which several smoothings can share.
    /// - Throws: As ``train(_:validation:)``.
    func train(_ counts: NaiveBayesCounts, validation: TrainingProblem? = nil) throws -> LinearModel {
        try NaiveBayesCounts.checkSmoothing(smoothing)
        let columns = Double(counts.compaction.fullColumns), classes = counts.classTotals.count
        let smoothing = self.smoothing, logSmoothing = log(smoothing)
        let denominators = (0..<classes).map { log(counts.classTotals[$0] + smoothing * columns) }
        // Most (feature, class) counts are zero: their logarithm is log α, computed once.
        let weights = counts.weights(threads: threads) { classCounts, _, row in
            for lane in 0..<classes {
                let count = classCounts[lane]
                row[lane] = Float((count == 0 ? logSmoothing : log(count + smoothing)) - denominators[lane])
            }
        }
        let unused = (0..<classes).map { Float(logSmoothing - denominators[$0]) }
        let model = LinearModel(features: counts.compaction.fullColumns, classes: classes,
                                weights: counts.compaction.expand(weights, classes: classes, fill: unused),
                                bias: counts.classLogPriors, probability: .softmax(temperature: 1))
        return ProbabilityCalibration.withFittedTemperature(model, validation: validation, threads: threads)
    }
}

/// Complement naive Bayes (Rennie, Shih, Teevan & Karger, "Tackling the poor assumptions of
/// naive Bayes text classifiers", ICML 2003), with scikit-learn's `ComplementNB` formulas.
///
/// Each class is described by the feature distribution of all *other* classes. With `N_cf`,
/// `n` and `α` as in ``MultinomialNaiveBayes`` and `T_f = Σ_c N_cf`:
///
///     θ̃[f, c] = (T_f − N_cf + α) / Σ_f' (T_f' − N_cf' + α)
///     W[f, c]  = −log θ̃[f, c]                         (normalizesWeights == false, the default)
///     W[f, c]  = log θ̃[f, c] / Σ_f' log θ̃[f', c]      (normalizesWeights == true, Rennie's step 8)
///
/// and the class is `argmax_c x·W[:, c]`: a document is assigned to the class whose complement
/// explains it worst. As in scikit-learn's `_joint_log_likelihood`, there is no class prior when
/// there are two or more classes (`b = 0`); with a single class the prior is `log 1 = 0` too.
///
/// Probabilities: the scores are not log-likelihoods, so no temperature is right a priori. The
/// default is `softmax(scores)`, temperature 1, as scikit-learn's `predict_proba`. It ranks
/// classes correctly but is underconfident with many classes: each complement mixes the other
/// `K − 1` classes, so score differences shrink as `K` grows (on the 39-class fortunes set the
/// best temperature is about 0.1; with 3 classes about 0.5). Sharpening by the theoretical
/// `1/(K − 1)` overshoots for large `K` (worse than uniform on fortunes), so it is not the
/// default. Pass a validation set to fit the temperature
/// (``ProbabilityCalibration/fitTemperature(scores:labels:classes:)``).
struct ComplementNaiveBayes: Sendable {
    /// The additive smoothing `α`; must be positive.
    var smoothing: Double = 1
    /// Divide each class's log weights by their sum (scikit-learn's `norm=True`).
    var normalizesWeights = false
    /// Worker threads (0: all cores); the result does not depend on it.
    var threads = 0

    /// Counts the features of each class and returns the model.
    /// - Parameters:
    ///   - problem: Non-negative feature values.
    ///   - validation: When given, the softmax temperature is fitted to it.
    /// - Throws: ``MLKitError`` with code `invalidParameter` for a non-positive `smoothing` or a
    ///   negative feature value.
    func train(_ problem: TrainingProblem, validation: TrainingProblem? = nil) throws -> LinearModel {
        try train(NaiveBayesCounts(problem), validation: validation)
    }

    /// Returns the model of counts already taken, which several smoothings can share.
    /// - Throws: As ``train(_:validation:)``.
    func train(_ counts: NaiveBayesCounts, validation: TrainingProblem? = nil) throws -> LinearModel {
        try NaiveBayesCounts.checkSmoothing(smoothing)
        let classes = counts.classTotals.count
        let columns = Double(counts.compaction.fullColumns)
        let smoothing = self.smoothing, sign: Float = normalizesWeights ? 1 : -1
        let complementTotals = counts.classTotals.map { counts.grandTotal - $0 + smoothing * columns }
        let logTotals = complementTotals.map { log($0) }
        var weights = counts.weights(threads: threads) { classCounts, total, row in
            // A class without this feature has the whole total as complement count: one logarithm.
            let logAbsent = log(total + smoothing)
            for lane in 0..<classes {
                let count = classCounts[lane]
                row[lane] = sign * Float((count == 0 ? logAbsent : log(total - count + smoothing)) - logTotals[lane])
            }
        }
        var unused = logTotals.map { sign * Float(log(smoothing) - $0) }
        if normalizesWeights {
            normalize(&weights, unused: &unused, classes: classes, unusedColumns: counts.compaction.fullColumns - counts.features)
        }
        let model = LinearModel(features: counts.compaction.fullColumns, classes: classes,
                                weights: counts.compaction.expand(weights, classes: classes, fill: unused),
                                bias: Array(repeating: 0, count: classes), probability: .softmax(temperature: 1))
        return ProbabilityCalibration.withFittedTemperature(model, validation: validation, threads: threads)
    }

    /// Divides each class's `log θ̃` by its sum over all columns, the unused ones included.
    private func normalize(_ weights: inout [Float], unused: inout [Float], classes: Int, unusedColumns: Int) {
        var sums = unused.map { Double($0) * Double(unusedColumns) }
        for feature in 0..<(weights.count / max(classes, 1)) {
            for lane in 0..<classes { sums[lane] += Double(weights[feature * classes + lane]) }
        }
        let factors = sums.map { Float(1 / $0) }
        for index in weights.indices { weights[index] *= factors[index % classes] }
        for lane in 0..<classes { unused[lane] *= factors[lane] }
    }
}

/// The sufficient statistics of naive Bayes: the class-weighted counts `N_cf` of the used
/// (compact) columns, read column by column.
struct NaiveBayesCounts: Sendable {
    /// The used columns of the training matrix.
    let compaction: ColumnCompaction
    /// The compacted matrix, column-major.
    let columns: SparseColumns
    /// The class of each row and its weight `w_{yᵢ}`.
    let labels: [Int32]
    let rowWeights: [Double]
    /// `N_c = Σ_f N_cf`, and `Σ_c N_c`.
    let classTotals: [Double]
    let grandTotal: Double
    /// `log(m_c / Σ m)` with `m_c` the class-weighted example count; a class without examples
    /// gets −10³⁰ instead of −∞, so that scores stay finite.
    let classLogPriors: [Float]

    /// The number of compact columns.
    var features: Int { columns.columns }

    /// Compacts the training matrix and computes the class totals.
    /// - Throws: ``MLKitError`` with code `invalidParameter` for a negative value.
    init(_ problem: TrainingProblem) throws {
        guard !problem.matrix.values.contains(where: { $0 < 0 }) else {
            throw MLKitError(.invalidParameter, "naive Bayes needs non-negative feature values (counts or TF-IDF)")
        }
        compaction = ColumnCompaction(matrix: problem.matrix)
        columns = SparseColumns(transposing: compaction.compact(problem.matrix))
        labels = problem.labels
        let rowWeights = problem.labels.map { Double(problem.classWeights[Int($0)]) }
        self.rowWeights = rowWeights
        var classTotals = [Double](repeating: 0, count: problem.classCount)
        var exampleWeights = [Double](repeating: 0, count: problem.classCount)
        problem.matrix.forEachRow(in: 0..<problem.matrix.rows) { row, _, values in
            let label = Int(problem.labels[row])
            var length = 0.0
            for value in values { length += Double(value) }
            classTotals[label] += rowWeights[row] * length
            exampleWeights[label] += rowWeights[row]
        }
        self.classTotals = classTotals
        grandTotal = classTotals.reduce(0, +)
        let weightSum = exampleWeights.reduce(0, +)
        classLogPriors = exampleWeights.map { $0 > 0 ? Float(log($0 / weightSum)) : -1e30 }
    }

    /// Feature-major weights over the compact columns: `row(counts, total, weights)` receives
    /// each feature's class counts `N_{·f}` (in document order, so the sums never depend on the
    /// thread count) and their total `T_f`, and writes the feature's `classes` weights.
    func weights(threads: Int, _ row: @escaping @Sendable (_ counts: UnsafePointer<Double>, _ total: Double,
                                                          _ weights: UnsafeMutablePointer<Float>) -> Void) -> [Float] {
        let classes = classTotals.count, counts = self
        var weights = [Float](repeating: 0, count: features * classes)
        weights.withUnsafeMutableBufferPointer { buffer in
            let output = SharedPointer(buffer.baseAddress!)
            _ = Parallel.map(features, threads: threads == 0 ? Parallel.defaultThreadCount : threads) { range in
                var classCounts = [Double](repeating: 0, count: classes)
                classCounts.withUnsafeMutableBufferPointer { scratch in
                    for feature in range {
                        let total = counts.classCounts(of: feature, into: scratch.baseAddress!)
                        row(scratch.baseAddress!, total, output.base + feature * classes)
                    }
                }
            }
        }
        return weights
    }

    /// Writes `N_cf` of every class into `counts` and returns `T_f = Σ_c N_cf`.
    private func classCounts(of feature: Int, into counts: UnsafeMutablePointer<Double>) -> Double {
        counts.update(repeating: 0, count: classTotals.count)
        var total = 0.0
        for entry in columns.columnStarts[feature]..<columns.columnStarts[feature + 1] {
            let row = Int(columns.rows[entry])
            let amount = rowWeights[row] * Double(columns.values[entry])
            counts[Int(labels[row])] += amount
            total += amount
        }
        return total
    }
    /// Checks that `α > 0`.
    static func checkSmoothing(_ smoothing: Double) throws {
        guard smoothing > 0, smoothing.isFinite else {
            throw MLKitError(.invalidParameter, "the smoothing must be positive, not \(smoothing)",
                             at: .init(field: "smoothing"))
        }
    }
}

extension MultinomialNaiveBayes: CandidateTrainer {
    static let defaultStrength = 0.1
    static let strengthName = "alpha"

    /// Counts of words and bigrams, of the parts of joined words and of runs of punctuation
    /// (``TrainingPlan/features(for:)`` says why).
    static func features(_ choices: FeatureChoices) -> FeaturizerConfiguration {
        FeaturizerConfiguration(tokenizer: choices.tokenizer, maxWordNGram: choices.maxWordNGram, wordParts: true,
                                punctuation: true, indexing: choices.vocabulary)
    }

    /// Trains on the input's class counts, which every naive Bayes candidate on these features
    /// shares, with the softmax temperature fitted on the validation examples.
    static func train(_ candidate: Candidate, on input: TrainingInput) throws -> ClassifierModel {
        let counts = try input.shared { try NaiveBayesCounts(input.problem) }
        return .linear(try MultinomialNaiveBayes(smoothing: candidate.strength, threads: input.threads)
            .train(counts, validation: input.validation))
    }
}

extension ComplementNaiveBayes: CandidateTrainer {
    static let defaultStrength = 0.3
    static let strengthName = "alpha"

    /// The features of ``MultinomialNaiveBayes``.
    static func features(_ choices: FeatureChoices) -> FeaturizerConfiguration {
        MultinomialNaiveBayes.features(choices)
    }

    /// Trains as ``MultinomialNaiveBayes`` does, on the same shared class counts.
    static func train(_ candidate: Candidate, on input: TrainingInput) throws -> ClassifierModel {
        let counts = try input.shared { try NaiveBayesCounts(input.problem) }
        return .linear(try ComplementNaiveBayes(smoothing: candidate.strength, threads: input.threads)
            .train(counts, validation: input.validation))
    }
}
