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

    /// Counts the features of each class and returns the model.
    /// - Parameters:
    ///   - problem: Non-negative feature values (counts, or TF-IDF as scikit-learn allows).
    ///   - validation: When given, the softmax temperature is fitted to it
    ///     (``ProbabilityCalibration/fitTemperature(scores:labels:classes:)``).
    /// - Throws: ``MLKitError`` with code `invalidParameter` for a non-positive `smoothing` or a
    ///   negative feature value.
    func train(_ problem: TrainingProblem, validation: TrainingProblem? = nil) throws -> LinearModel {
        try NaiveBayesCounts.checkSmoothing(smoothing)
        let counts = try NaiveBayesCounts(problem)
        let columns = Double(counts.compaction.fullColumns)
        let classes = problem.classCount
        let denominators = (0..<classes).map { log(counts.classTotals[$0] + smoothing * columns) }
        let logSmoothing = log(smoothing)
        var weights = [Float](repeating: 0, count: counts.features * classes)
        // Most (feature, class) counts are zero: their logarithm is log α, computed once.
        for feature in 0..<counts.features {
            for lane in 0..<classes {
                let count = counts.featureCounts[feature * classes + lane]
                let numerator = count == 0 ? logSmoothing : log(count + smoothing)
                weights[feature * classes + lane] = Float(numerator - denominators[lane])
            }
        }
        let unused = (0..<classes).map { Float(log(smoothing) - denominators[$0]) }
        let model = LinearModel(features: counts.compaction.fullColumns, classes: classes,
                                weights: counts.compaction.expand(weights, classes: classes, fill: unused),
                                bias: counts.classLogPriors, probability: .softmax(temperature: 1))
        return ProbabilityCalibration.withFittedTemperature(model, validation: validation)
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

    /// Counts the features of each class and returns the model.
    /// - Parameters:
    ///   - problem: Non-negative feature values.
    ///   - validation: When given, the softmax temperature is fitted to it.
    /// - Throws: ``MLKitError`` with code `invalidParameter` for a non-positive `smoothing` or a
    ///   negative feature value.
    func train(_ problem: TrainingProblem, validation: TrainingProblem? = nil) throws -> LinearModel {
        try NaiveBayesCounts.checkSmoothing(smoothing)
        let counts = try NaiveBayesCounts(problem)
        let classes = problem.classCount
        let complementTotals = complementTotals(counts)
        var weights = [Float](repeating: 0, count: counts.features * classes)
        let logTotals = complementTotals.map { log($0) }
        var logSums = [Double](repeating: 0, count: classes)
        for feature in 0..<counts.features {
            let total = counts.featureTotals[feature]
            // A class without this feature has the whole total as complement count: one logarithm.
            let logAbsent = log(total + smoothing)
            for lane in 0..<classes {
                let count = counts.featureCounts[feature * classes + lane]
                let logged = (count == 0 ? logAbsent : log(total - count + smoothing)) - logTotals[lane]
                weights[feature * classes + lane] = Float(logged)
                logSums[lane] += logged
            }
        }
        let unusedLogged = complementTotals.map { log(smoothing / $0) }
        let unusedColumns = Double(counts.compaction.fullColumns - counts.features)
        for lane in 0..<classes { logSums[lane] += unusedColumns * unusedLogged[lane] }
        let factors = (0..<classes).map { normalizesWeights ? 1 / logSums[$0] : -1 }
        for feature in 0..<counts.features {
            for lane in 0..<classes {
                weights[feature * classes + lane] = Float(Double(weights[feature * classes + lane]) * factors[lane])
            }
        }
        let unused = (0..<classes).map { Float(unusedLogged[$0] * factors[$0]) }
        let model = LinearModel(features: counts.compaction.fullColumns, classes: classes,
                                weights: counts.compaction.expand(weights, classes: classes, fill: unused),
                                bias: Array(repeating: 0, count: classes), probability: .softmax(temperature: 1))
        return ProbabilityCalibration.withFittedTemperature(model, validation: validation)
    }

    /// `Σ_f (T_f − N_cf + α)` over all `n` columns, per class: `T − N_c + n·α`.
    private func complementTotals(_ counts: NaiveBayesCounts) -> [Double] {
        let grandTotal = counts.classTotals.reduce(0, +)
        let columns = Double(counts.compaction.fullColumns)
        return counts.classTotals.map { grandTotal - $0 + smoothing * columns }
    }
}

/// The sufficient statistics of naive Bayes over the used (compact) columns.
struct NaiveBayesCounts {
    /// The used columns of the training matrix.
    let compaction: ColumnCompaction
    /// `N_cf`, feature-major over the compact columns (`features × classes`).
    let featureCounts: [Double]
    /// `N_c = Σ_f N_cf`.
    let classTotals: [Double]
    /// `T_f = Σ_c N_cf`.
    let featureTotals: [Double]
    /// `log(m_c / Σ m)` with `m_c` the class-weighted example count; a class without examples
    /// gets −10³⁰ instead of −∞, so that scores stay finite.
    let classLogPriors: [Float]

    /// The number of compact columns.
    var features: Int { featureTotals.count }

    /// Accumulates `N_cf += w_{y_i} · x_if` over the training rows.
    /// - Throws: ``MLKitError`` with code `invalidParameter` for a negative value.
    init(_ problem: TrainingProblem) throws {
        compaction = ColumnCompaction(matrix: problem.matrix)
        let classes = problem.classCount
        var counts = [Double](repeating: 0, count: compaction.compactColumns * classes)
        var exampleWeights = [Double](repeating: 0, count: classes)
        var negative = false
        let compaction = self.compaction
        problem.matrix.forEachRow(in: 0..<problem.matrix.rows) { row, indices, values in
            let label = Int(problem.labels[row])
            let weight = Double(problem.classWeights[label])
            exampleWeights[label] += weight
            for position in indices.indices {
                negative = negative || values[position] < 0
                let column = Int(compaction.compactIndex(of: indices[position])!)
                counts[column * classes + label] += weight * Double(values[position])
            }
        }
        guard !negative else {
            throw MLKitError(.invalidParameter, "naive Bayes needs non-negative feature values (counts or TF-IDF)")
        }
        var classTotals = [Double](repeating: 0, count: classes)
        var featureTotals = [Double](repeating: 0, count: compaction.compactColumns)
        for feature in featureTotals.indices {
            for lane in 0..<classes {
                classTotals[lane] += counts[feature * classes + lane]
                featureTotals[feature] += counts[feature * classes + lane]
            }
        }
        let weightSum = exampleWeights.reduce(0, +)
        featureCounts = counts
        self.classTotals = classTotals
        self.featureTotals = featureTotals
        classLogPriors = exampleWeights.map { $0 > 0 ? Float(log($0 / weightSum)) : -1e30 }
    }

    /// Checks that `α > 0`.
    static func checkSmoothing(_ smoothing: Double) throws {
        guard smoothing > 0, smoothing.isFinite else {
            throw MLKitError(.invalidParameter, "the smoothing must be positive, not \(smoothing)",
                             at: .init(field: "smoothing"))
        }
    }
}
