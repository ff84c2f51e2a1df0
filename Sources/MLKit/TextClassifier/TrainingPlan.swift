import Foundation

/// Trains a classifier from labelled texts and ``TextClassifierParameters``: it turns the
/// parameters into candidates, trains and scores them on the validation data, chooses one,
/// refits it on all the data, and returns the result (``run()``).
///
/// The plan owns the state that passes from one candidate to another: the featurized problems
/// that candidates on the same features share, and the warm starts (``WarmStarts``) that later
/// candidates and the refit start from. What an algorithm does with them is its trainer's
/// business (``CandidateTrainer``).
struct TrainingPlan {
    typealias Algorithm = TextClassifierParameters.Algorithm

    let data: TextDataset
    let parameters: TextClassifierParameters
    /// The labels, sorted; a label's index is its class.
    let labels: [String]
    let classIndex: [String: Int32]
    let threads: Int
    /// What trained candidates leave to start from, for this plan's run.
    let warmStarts = WarmStarts()

    /// A plan for `data`, which must hold at least one example and two labels.
    /// - Throws: ``MLKitError``: `invalidDataset` for data that cannot be trained on, and
    ///   `invalidParameter` for class weights naming a label the data does not have. The other
    ///   parameters are checked by ``TextClassifierParameters/validate()``.
    init(data: TextDataset, parameters: TextClassifierParameters) throws {
        self.data = try data.validatedForTraining()
        self.parameters = parameters
        labels = data.labels
        classIndex = Dictionary(uniqueKeysWithValues: labels.enumerated().map { ($1, Int32($0)) })
        threads = parameters.threads == 0 ? Parallel.defaultThreadCount : parameters.threads
        if case .explicit(let weights) = parameters.classWeights {
            for label in weights.keys.sorted() where classIndex[label] == nil {
                throw MLKitError.invalidParameter("classWeights", "no label \"\(label)\" in the training data")
            }
        }
    }

    /// Trains: splits off the validation data, evaluates the candidates on it and chooses one
    /// (``choose(_:planned:)``), then refits that one on all the data, keeping the probability
    /// calibration fitted on held-out data when there was enough of it to trust.
    func run() throws -> TrainedClassifier {
        let clock = ContinuousClock()
        let start = clock.now
        let (train, validation) = try split()
        let candidates = candidates(hasValidation: validation != nil)
        var chosen: CandidateResult?
        var tried: [TrainingSummary.Candidate]?
        var counted = CountedFeatures()
        let reason: String
        if let validation, candidates.count > 1 || parameters.algorithm == .automatic {
            let automatic = parameters.algorithm == .automatic
            let (results, evaluated) = try evaluate(candidates, train: train, validation: validation,
                                                    budget: parameters.timeBudget) { results in
                automatic ? prunedVariant(of: Self.choose(results, planned: candidates.count).candidate) : nil
            }
            counted = evaluated
            let best = Self.choose(results, planned: candidates.count)
            chosen = best
            reason = Self.reason(results, planned: candidates.count, chosen: best)
            tried = results.map { $0.summary(chosen: $0.order == best.order) }
        } else if let validation {
            let (results, evaluated) = try evaluate(candidates, train: train, validation: validation, budget: .infinity)
            counted = evaluated
            chosen = results[0]
            reason = "the algorithm asked for; validation accuracy \(String(format: "%.4f", results[0].metrics.accuracy))"
        } else {
            reason = "the algorithm asked for, with its default settings (no validation data)"
        }
        let candidate = chosen?.candidate ?? candidates[0]
        warmStarts.keep(only: chosen?.candidate)
        let everything = validation.map { train + $0 } ?? train
        let calibration = validation.flatMap { isEnoughForCalibration($0) ? chosen?.calibration : nil }
        let final = try fit(candidate, on: everything, calibration: calibration, counted: consume counted)
        let summary = TrainingSummary(algorithm: candidate.algorithm, settings: candidate.settings, reason: reason,
                                      examples: everything.count, seconds: (clock.now - start).seconds, date: Date(),
                                      candidates: tried)
        final.model.adviseLargePages()
        return TrainedClassifier(labels: labels, featurizer: final.featurizer, model: final.model, summary: summary,
                                 trainingMetrics: final.metrics, validationMetrics: chosen?.metrics)
    }

    // MARK: Data

    /// The training and validation examples.
    func split() throws -> (train: [LabeledText], validation: [LabeledText]?) {
        switch parameters.validation {
        case .none:
            return (data.examples, nil)
        case .dataset(let validation):
            return (data.examples, validation.examples)
        case .split(let fraction):
            let split = try data.split(validationFraction: fraction, seed: parameters.seed)
            guard !split.validation.examples.isEmpty else { return (data.examples, nil) }
            return (split.training.examples, split.validation.examples)
        }
    }

    /// The examples whose label the training data has.
    private func knownExamples(_ examples: [LabeledText]) -> [LabeledText] {
        examples.filter { classIndex[$0.label] != nil }
    }

    /// A problem for known examples whose features are already the rows of `matrix`.
    private func problem(_ known: [LabeledText], matrix: SparseMatrix) -> TrainingProblem {
        let classes = known.map { classIndex[$0.label]! }
        return TrainingProblem(matrix: matrix, labels: classes, classCount: labels.count,
                               classWeights: classWeights(for: classes))
    }

    private func classWeights(for classes: [Int32]) -> [Float]? {
        switch parameters.classWeights {
        case .uniform: return nil
        case .balanced: return TrainingProblem.balancedClassWeights(labels: classes, classCount: labels.count)
        case .explicit(let weights): return labels.map { Float(weights[$0] ?? 1) }
        }
    }

    // MARK: Candidates

    /// The tokenizer for the parameters' language: dictionary words for Chinese, Japanese and
    /// Thai when ICU is available.
    var tokenizer: Tokenizer {
        let code = parameters.language?.lowercased().split(separator: "-").first.map(String.init)
        if let code, ["zh", "ja", "th", "lo", "km", "my"].contains(code), Tokenizer.isICUAvailable {
            return Tokenizer(segmentation: .icu, locale: parameters.language)
        }
        return Tokenizer()
    }

    /// The features an algorithm trains on by default (its trainer's
    /// ``CandidateTrainer/features(_:)``). The sparse classifiers count the parts of joined words
    /// as words too (`open` and `source` in `open-source`): on the benchmark sets that adds
    /// 0.5–0.7 points of accuracy where joined words are common (`docs/features.md`). They count
    /// runs of punctuation as tokens too: in 5-fold cross-validation of the SVM on the training
    /// sets that adds 0.6–5.5 points of accuracy on five of the six benchmark sets where `auto`
    /// keeps the SVM, and changes wordnet-hypernyms by −0.07 points, within its standard error
    /// (`docs/features.md`). The vocabulary keeps the features seen at least
    /// ``TextClassifierParameters/minimumFeatureCount`` times, every feature by default.
    func features(for algorithm: Algorithm) -> FeaturizerConfiguration {
        let vocabulary = FeaturizerConfiguration.Indexing.vocabulary(.init(minCount: parameters.minimumFeatureCount ?? 1))
        return algorithm.trainer.features(FeatureChoices(tokenizer: tokenizer, maxWordNGram: parameters.maxWordNGram ?? 2,
                                                         vocabulary: vocabulary))
    }

    /// What `automatic` tries, in its order of preference: each algorithm with its strengths.
    ///
    /// Maximum entropy and the embedding classifier are not among them: on every dataset
    /// measured (docs/benchmarks.md) each scored below the SVM on validation, maximum entropy
    /// taking 4–30 times as long and the embedding classifier (with its own featurization) about
    /// as long as the other candidates together, so they would only make the default slower.
    /// `--algorithm maxent` and `--algorithm embedding` train them. For the same reason the SVM
    /// tries C = 1 and 0.5 but not 0.25, which scored below C = 0.5 on validation on all six
    /// datasets measured. C = 1 comes first, the preferred of the two when one held-out split
    /// cannot tell them apart: in 5-fold cross-validation on the training sets of the six SVM
    /// benchmark sets it was never worse than C = 0.5, and better by 2.7–6.5 standard errors on
    /// four.
    static let candidateGrid: [(algorithm: Algorithm, strengths: [Double])] = [
        (.linearSVM, [1, 0.5]), (.complementNaiveBayes, [0.1, 0.5]), (.naiveBayes, [0.1]),
    ]

    /// The candidates to try: one for an explicit algorithm, ``candidateGrid`` for `automatic`
    /// (with the parameters' strength instead of the grid's, when they give one), and the SVM
    /// alone for `automatic` without validation data to choose with.
    func candidates(hasValidation: Bool) -> [Candidate] {
        let strength = parameters.regularization
        let iterations = parameters.maxIterations
        let single: Algorithm? = parameters.algorithm != .automatic ? parameters.algorithm
            : hasValidation ? nil : .linearSVM
        if let single {
            return [Candidate(algorithm: single, features: features(for: single),
                              strength: strength ?? single.trainer.defaultStrength, iterations: iterations)]
        }
        return Self.candidateGrid.flatMap { algorithm, strengths in
            (strength.map { [$0] } ?? strengths).map {
                Candidate(algorithm: algorithm, features: features(for: algorithm), strength: $0, iterations: iterations)
            }
        }
    }

    // MARK: Training

    /// Trains each candidate on `train` and scores it on `validation`. The texts are tokenized
    /// once per tokenizer and n-gram setting: each weighting (counts, TF-IDF) is computed from the
    /// same count matrices, which gives the same values as featurizing again, and a vocabulary
    /// pruned by count takes the first columns of the full one's. Stops starting new candidates
    /// when the budget is spent.
    ///
    /// - Parameter followUp: Given the results so far, one more candidate to try after the
    ///   others, if any (``prunedVariant(of:)`` of the chosen one, for `automatic`).
    /// - Returns: The candidates' results, and what they counted, which spares the refit on
    ///   `train` followed by `validation` counting and featurizing again.
    func evaluate(_ candidates: [Candidate], train: [LabeledText], validation: [LabeledText], budget: Double,
                  followUp: ([CandidateResult]) -> Candidate? = { _ in nil })
        throws -> (results: [CandidateResult], counted: CountedFeatures) {
        let clock = ContinuousClock()
        let start = clock.now
        let known = (train: knownExamples(train), validation: knownExamples(validation))
        let texts = (train: known.train.map(\.text), validation: known.validation.map(\.text))
        var results: [CandidateResult] = []
        // By unpruned counting configuration: the counts of the training texts, and those of
        // the training and validation texts together.
        var trainCounts: [FeaturizerConfiguration: Featurizer.FeatureStatistics] = [:]
        var allCounts: [FeaturizerConfiguration: Featurizer.FeatureStatistics] = [:]
        var counted: [FeaturizerConfiguration: (featurizer: Featurizer, train: SparseMatrix, validation: SparseMatrix,
                                                 seconds: Double)] = [:]
        // By features: the input that every candidate on them trains on.
        var prepared: [FeaturizerConfiguration: (input: TrainingInput, seconds: Double)] = [:]

        /// The count matrices of the texts for a counting configuration.
        func count(_ counting: FeaturizerConfiguration) throws {
            let featureStart = clock.now
            let key = counting.unpruned
            if case .vocabulary = counting.indexing, trainCounts[key] == nil {
                let counts = Featurizer.countFeatures(texts.train, configuration: key, threads: threads)
                let validationCounts = Featurizer.countFeatures(texts.validation, configuration: key, threads: threads)
                allCounts[key] = counts.appending(validationCounts, after: texts.train.count)
                trainCounts[key] = counts
            }
            if counting != key, let full = counted[key], let statistics = trainCounts[key],
               let narrow = try full.featurizer.narrowed(to: counting, texts: texts.train, counted: statistics,
                                                          threads: threads) {
                counted[counting] = (narrow, full.train.keepingColumns(below: narrow.dimension),
                                     full.validation.keepingColumns(below: narrow.dimension),
                                     (clock.now - featureStart).seconds)
                return
            }
            let featurizer = try Featurizer(fitting: texts.train, configuration: counting, recoveringTerms: false,
                                            threads: threads, counted: trainCounts[key])
            counted[counting] = (featurizer, featurizer.matrix(for: texts.train, threads: threads),
                                 featurizer.matrix(for: texts.validation, threads: threads),
                                 (clock.now - featureStart).seconds)
        }

        func run(_ candidate: Candidate, fraction: Double) throws {
            let features = candidate.features
            if prepared[features] == nil {
                let featureStart = clock.now
                if counted[features.counting] == nil {
                    report("featurizing \(train.count) examples", fraction)
                    try count(features.counting)
                }
                let base = counted[features.counting]!
                let weighted = base.featurizer.reweighted(as: features, trainingCounts: base.train)
                let input = TrainingInput(problem: problem(known.train, matrix: weighted.weighting(base.train)),
                                          validation: problem(known.validation, matrix: weighted.weighting(base.validation)),
                                          vocabulary: base.featurizer.vocabulary, isRefit: false, seed: parameters.seed,
                                          threads: threads, warmStarts: warmStarts)
                prepared[features] = (input, base.seconds + (clock.now - featureStart).seconds)
            }
            let (input, featureSeconds) = prepared[features]!
            report("training \(candidate.label)", fraction)
            let candidateStart = clock.now
            let model = try candidate.algorithm.trainer.train(candidate, on: input)
            let validationProblem = input.validation!
            let ranked = rankings(of: model, on: validationProblem.matrix)
            let actual = validationProblem.labels.map(Int.init)
            results.append(CandidateResult(candidate: candidate,
                                           metrics: ClassificationMetrics(labels: labels, actual: actual, ranked: ranked),
                                           correct: zip(ranked, actual).map { $0.first == $1 },
                                           seconds: featureSeconds + (clock.now - candidateStart).seconds,
                                           calibration: model.calibration, order: results.count))
        }

        let spent = { !results.isEmpty && (clock.now - start).seconds > budget }
        for (order, candidate) in candidates.enumerated() {
            if spent() { break }
            try run(candidate, fraction: Double(order) / Double(candidates.count + 1))
        }
        if !spent(), let extra = followUp(results) {
            try run(extra, fraction: Double(candidates.count) / Double(candidates.count + 1))
        }
        var reusable = CountedFeatures(statistics: allCounts)
        for (configuration, entry) in counted where configuration == configuration.unpruned {
            reusable.matrices[configuration] = (entry.featurizer, entry.train, entry.validation.rows)
        }
        return (results, reusable)
    }

    /// Whether held-out examples are enough to trust a calibration fitted on them: at least five
    /// of every label. With fewer, the refit model calibrates on its own training data.
    func isEnoughForCalibration(_ validation: [LabeledText]) -> Bool {
        var counts: [String: Int] = [:]
        for example in validation { counts[example.label, default: 0] += 1 }
        return labels.allSatisfy { counts[$0, default: 0] >= 5 }
    }

    /// Reports progress to the caller's handler, if any.
    func report(_ step: String, _ fraction: Double) {
        parameters.progress?(step, min(1, max(0, fraction)))
    }

    /// Fits the featurizer and the model of `candidate` on `examples`: the refit, which starts
    /// from what the candidate left in the plan's ``warmStarts`` when it was evaluated on the
    /// first of `examples` (the training split, which comes first).
    /// - Returns: The featurizer, the model, and the metrics of the model on `examples`.
    /// - Parameter counted: What ``evaluate(_:train:validation:budget:followUp:)`` counted, when
    ///   `examples` are its training examples followed by its validation examples; consumed, so
    ///   that its matrices are freed once they have served.
    func fit(_ candidate: Candidate, on examples: [LabeledText], calibration: LinearModel.ProbabilityMapping?,
             counted: consuming CountedFeatures = CountedFeatures())
        throws -> (featurizer: Featurizer, model: ClassifierModel, metrics: ClassificationMetrics) {
        report("refitting \(candidate.label) on \(examples.count) examples", 0.95)
        // As in `evaluate`: tokenize once into counts, then weight them; the counts come from the
        // evaluation's where it has them.
        let known = knownExamples(examples)
        let texts = known.map(\.text)
        let unpruned = candidate.features.counting.unpruned
        let statistics = counted.statistics.removeValue(forKey: unpruned)
        var reusable = counted.matrices.removeValue(forKey: unpruned)
        counted = CountedFeatures()
        let counting = try Featurizer(fitting: texts, configuration: candidate.features.counting,
                                      recoveringTerms: true, threads: threads, counted: statistics)
        var reused: SparseMatrix?
        // Taken out of `reusable`, so that the matrix is renamed in place rather than copied.
        if let (source, train, validationRows) = reusable.take(), train.rows + validationRows == texts.count {
            reused = counting.matrix(for: texts, reusing: train, countedBy: source, threads: threads)
        }
        let countMatrix = reused ?? counting.matrix(for: texts, threads: threads)
        let featurizer = counting.reweighted(as: candidate.features, trainingCounts: countMatrix)
        let problem = problem(known, matrix: featurizer.weighting(countMatrix))
        defer { report("done", 1) }
        let input = TrainingInput(problem: problem, validation: nil, vocabulary: featurizer.vocabulary,
                                  calibration: calibration, isRefit: true, seed: parameters.seed, threads: threads,
                                  warmStarts: warmStarts)
        var model = try candidate.algorithm.trainer.train(candidate, on: input)
        if let calibration, case .linear(let linear) = model { model = .linear(linear.with(probability: calibration)) }
        // The training metrics, from the features at hand: the same values as featurizing the
        // texts again.
        let metrics = ClassificationMetrics(labels: labels, actual: problem.labels.map(Int.init),
                                            ranked: rankings(of: model, on: problem.matrix))
        return (featurizer, model, metrics)
    }

    /// The five most likely classes of each row, by probability.
    func rankings(of model: ClassifierModel, on matrix: SparseMatrix) -> [[Int]] {
        model.rankings(for: matrix, maximumCount: 5, classes: labels.count, threads: threads)
    }

    /// The vocabulary that `automatic` also tries for the candidate it chose: the features seen
    /// at least twice in the training texts (scikit-learn's `min_df=2` counts the texts that
    /// have a feature instead; fastText's `-minCount` counts as this does). It can win: a model a
    /// third the size, as accurate on debian-sections. But it can lose too: on short texts
    /// (vader-sentiment-3) the features seen once carry signal. So validation decides.
    static let prunedVocabulary = FeaturizerConfiguration.VocabularyPruning(minCount: 2)

    /// The same candidate with the ``prunedVocabulary``, for a candidate whose vocabulary keeps
    /// every feature by default; `nil` otherwise, and when the parameters set
    /// ``TextClassifierParameters/minimumFeatureCount``.
    func prunedVariant(of candidate: Candidate) -> Candidate? {
        guard parameters.minimumFeatureCount == nil, case .vocabulary(let pruning) = candidate.features.indexing,
              pruning == .init() else { return nil }
        var features = candidate.features
        features.indexing = .vocabulary(Self.prunedVocabulary)
        return Candidate(algorithm: candidate.algorithm, features: features, strength: candidate.strength,
                         iterations: candidate.iterations)
    }

    /// The candidate to keep. Among the first `planned` results, the plan's own candidates, the
    /// one-standard-error rule (Breiman et al., 1984; Hastie, Tibshirani & Friedman, 2009,
    /// §7.10), with the error of the comparison itself: of the candidates whose validation
    /// accuracy is within one ``gap(from:to:)`` standard error of the best's, the earliest in the
    /// plan's order of preference. The candidates are scored on the same held-out examples, so the
    /// noise in the difference of two accuracies comes from the examples where the two disagree:
    /// the standard error is that of the difference, example by example (paired, as McNemar's
    /// test pairs them), not `√(p(1−p)/n)` of one accuracy, which counts the examples both get
    /// right or wrong as noise too. A result after them, the chosen candidate's
    /// ``prunedVariant(of:)``, replaces it only if it scored better on validation (accuracy, then
    /// macro-F1): the full vocabulary stays the default.
    static func choose(_ results: [CandidateResult], planned: Int) -> CandidateResult {
        let own = results.prefix(planned)
        let best = best(of: results, planned: planned)
        let chosen = own.filter { result in
            let (gap, standardError) = Self.gap(from: best, to: result)
            return gap <= standardError
        }.min { $0.order < $1.order } ?? best
        guard let variant = results.dropFirst(planned).first, CandidateResult.isWorse(chosen, than: variant)
        else { return chosen }
        return variant
    }

    /// The best validation result among the first `planned`, the plan's own candidates: the one
    /// that ``choose(_:planned:)`` measures the others' gaps from.
    private static func best(of results: [CandidateResult], planned: Int) -> CandidateResult {
        results.prefix(planned).max { CandidateResult.isWorse($0, than: $1) }!
    }

    /// How far `result`'s validation accuracy lies below `best`'s, and the standard error of that
    /// difference over the held-out examples, paired: with `dᵢ` 1 where only `best` is right, −1
    /// where only `result` is, and 0 elsewhere, the mean of the `dᵢ` and `s/√n`, `s` their
    /// sample standard deviation.
    static func gap(from best: CandidateResult, to result: CandidateResult) -> (gap: Double, standardError: Double) {
        let count = min(best.correct.count, result.correct.count)
        guard count > 1 else { return (0, 0) }
        var (onlyBest, onlyResult) = (0, 0)
        for (a, b) in zip(best.correct, result.correct) where a != b {
            if a { onlyBest += 1 } else { onlyResult += 1 }
        }
        let n = Double(count)
        let mean = Double(onlyBest - onlyResult) / n
        // Σ dᵢ² is the number of disagreements.
        let variance = max(0, (Double(onlyBest + onlyResult) - n * mean * mean) / (n - 1))
        return (mean, (variance / n).squareRoot())
    }

    /// Why ``choose(_:planned:)`` kept `chosen`, in one sentence: which rule picked it among the
    /// first `planned` results, with its gap below the best and that gap's standard error when
    /// it is not the best, and whether the pruned vocabulary tried after them replaced it.
    static func reason(_ results: [CandidateResult], planned: Int, chosen: CandidateResult) -> String {
        let best = best(of: results, planned: planned)
        let picked = choose(Array(results.prefix(planned)), planned: planned)
        let scope = "of \(min(planned, results.count)) candidates on \(chosen.metrics.count) held-out examples"
        var rule = "the best validation accuracy " + scope
        let (gap, standardError) = Self.gap(from: best, to: picked)
        if picked.order != best.order && gap == 0 {
            // The same accuracy; the best scored a higher macro-F1.
            rule = "the first in order of preference with the best validation accuracy " + scope
        } else if picked.order != best.order {
            rule = "the first in order of preference within one standard error of the best validation accuracy " + scope
                + String(format: " (%.4f below it, standard error %.4f, paired example by example)", gap, standardError)
        }
        guard results.count > planned else { return rule }
        let pruned = "the features seen at least \(prunedVocabulary.minCount) times only"
        if chosen.order >= planned {
            return pruned + " scored better on validation than the full vocabulary, which was " + rule
        }
        return rule + "; the same with " + pruned + " did not score better"
    }
}

/// What the evaluation of candidates counted in the training texts followed by the validation
/// texts, which the refit on both together reuses.
struct CountedFeatures {
    /// The feature counts of the training texts followed by the validation texts, by unpruned
    /// counting configuration (``FeaturizerConfiguration/unpruned``).
    var statistics: [FeaturizerConfiguration: Featurizer.FeatureStatistics] = [:]
    /// By unpruned counting configuration: the counting featurizer fitted on the training texts,
    /// the count matrix of the training texts under it, and the number of validation texts.
    var matrices: [FeaturizerConfiguration: (featurizer: Featurizer, train: SparseMatrix, validationRows: Int)] = [:]
}

extension LinearModel {
    /// The same weights with another probability mapping.
    func with(probability: ProbabilityMapping) -> LinearModel {
        if let storedRows {
            return LinearModel(features: features, classes: classes, rows: storedRows, weights: weights, bias: bias,
                               probability: probability, indexed: rowPositions != nil)
        }
        return LinearModel(features: features, classes: classes, weights: weights, bias: bias, probability: probability)
    }
}
