import Foundation

/// Turns ``TextClassifierParameters`` into candidates, trains them, and compares them.
struct TrainingPlan {
    typealias Algorithm = TextClassifierParameters.Algorithm

    let data: TextDataset
    let parameters: TextClassifierParameters
    /// The labels, sorted; a label's index is its class.
    let labels: [String]
    let classIndex: [String: Int32]
    let threads: Int

    init(data: TextDataset, parameters: TextClassifierParameters) throws {
        self.data = data
        self.parameters = parameters
        labels = data.labels
        classIndex = Dictionary(uniqueKeysWithValues: labels.enumerated().map { ($1, Int32($0)) })
        threads = parameters.threads == 0 ? Parallel.defaultThreadCount : parameters.threads
        try validate()
    }

    private func validate() throws {
        let fail = MLKitError.invalidParameter
        if case .split(let fraction) = parameters.validation, !(fraction > 0 && fraction < 1) {
            throw fail("validation", "the validation fraction must lie strictly between 0 and 1, not \(fraction)")
        }
        if let ngrams = parameters.maxWordNGram, !(1...5).contains(ngrams) {
            throw fail("maxWordNGram", "must be 1 to 5, not \(ngrams)")
        }
        if let count = parameters.minimumFeatureCount {
            guard count >= 1 else { throw fail("minimumFeatureCount", "must be at least 1, not \(count)") }
            guard parameters.algorithm != .embedding else {
                throw fail("minimumFeatureCount", "applies to a vocabulary; the embedding classifier hashes its features")
            }
        }
        if let strength = parameters.regularization, !(strength > 0) {
            throw fail("regularization", "must be positive, not \(strength)")
        }
        if let iterations = parameters.maxIterations, iterations < 1 {
            throw fail("maxIterations", "must be at least 1, not \(iterations)")
        }
        if parameters.threads < 0 { throw fail("threads", "must be 0 (all cores) or more, not \(parameters.threads)") }
        if case .explicit(let weights) = parameters.classWeights {
            for (label, weight) in weights {
                guard classIndex[label] != nil else { throw fail("classWeights", "no label \"\(label)\" in the training data") }
                guard weight > 0 else { throw fail("classWeights", "the weight of \"\(label)\" must be positive") }
            }
        }
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

    /// The features an algorithm trains on by default. The sparse classifiers count the parts
    /// of joined words as words too (`open` and `source` in `open-source`): on the benchmark sets
    /// that adds 0.5–0.7 points of accuracy where joined words are common (`docs/features.md`).
    /// They count runs of punctuation as tokens too: in 5-fold cross-validation of the SVM on the
    /// training sets that adds 0.6–5.5 points of accuracy on five of the six benchmark sets where
    /// `auto` keeps the SVM, and changes wordnet-hypernyms by −0.07 points, within its standard
    /// error (`docs/features.md`). The vocabulary keeps the features seen at least
    /// ``TextClassifierParameters/minimumFeatureCount`` times, every feature by default.
    func features(for algorithm: Algorithm) -> FeaturizerConfiguration {
        let ngrams = parameters.maxWordNGram ?? 2
        let vocabulary = FeaturizerConfiguration.Indexing.vocabulary(.init(minCount: parameters.minimumFeatureCount ?? 1))
        switch algorithm {
        case .naiveBayes, .complementNaiveBayes:
            return FeaturizerConfiguration(tokenizer: tokenizer, maxWordNGram: ngrams, wordParts: true,
                                           punctuation: true, indexing: vocabulary)
        case .maxEnt, .linearSVM, .automatic:
            return FeaturizerConfiguration(tokenizer: tokenizer, maxWordNGram: ngrams, wordParts: true,
                                           punctuation: true, indexing: vocabulary,
                                           weighting: .tfidf, sublinearTF: true, l2Normalize: true)
        case .embedding:
            return FeaturizerConfiguration(tokenizer: tokenizer, maxWordNGram: ngrams, indexing: .hashed(bits: 20))
        }
    }

    /// The default strength of each algorithm.
    static func defaultStrength(_ algorithm: Algorithm) -> Double {
        switch algorithm {
        case .naiveBayes: return 0.1
        case .complementNaiveBayes: return 0.3
        case .maxEnt: return 10
        case .linearSVM, .automatic: return 0.5
        case .embedding: return 1
        }
    }

    /// The candidates to try: one for an explicit algorithm, a small grid for `automatic`.
    func candidates(hasValidation: Bool) -> [Candidate] {
        let strength = parameters.regularization
        let iterations = parameters.maxIterations
        guard parameters.algorithm == .automatic else {
            let algorithm = parameters.algorithm
            return [Candidate(algorithm: algorithm, features: features(for: algorithm),
                              strength: strength ?? Self.defaultStrength(algorithm), iterations: iterations)]
        }
        guard hasValidation else {
            return [Candidate(algorithm: .linearSVM, features: features(for: .linearSVM),
                              strength: strength ?? Self.defaultStrength(.linearSVM), iterations: iterations)]
        }
        // Maximum entropy and the embedding classifier are not among them: on every dataset
        // measured (docs/benchmarks.md) each scored below the SVM on validation, maximum entropy
        // taking 4–30 times as long and the embedding classifier (with its own featurization)
        // about as long as the other candidates together, so they would only make the default
        // slower. `--algorithm maxent` and `--algorithm embedding` train them. For the same
        // reason the SVM tries C = 1 and 0.5 but no longer 0.25, which scored below C = 0.5 on
        // validation on all six datasets measured. C = 1 comes
        // first, the preferred of the two when one held-out split cannot tell them apart: in
        // 5-fold cross-validation on the training sets of the six SVM benchmark sets it was
        // never worse than C = 0.5, and better by 2.7–6.5 standard errors on four.
        var grid: [(Algorithm, [Double])] = [
            (.linearSVM, [1, 0.5]), (.complementNaiveBayes, [0.1, 0.5]), (.naiveBayes, [0.1]),
        ]
        if let strength { grid = grid.map { ($0.0, [strength]) } }
        return grid.flatMap { algorithm, strengths in
            strengths.map { Candidate(algorithm: algorithm, features: features(for: algorithm), strength: $0,
                                      iterations: iterations) }
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
        var prepared: [FeaturizerConfiguration: (train: TrainingProblem, validation: TrainingProblem, seconds: Double)] = [:]
        // Naive Bayes candidates on the same features share their class counts.
        var naiveBayesCounts: [FeaturizerConfiguration: NaiveBayesCounts] = [:]

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
                prepared[features] = (problem(known.train, matrix: weighted.weighting(base.train)),
                                      problem(known.validation, matrix: weighted.weighting(base.validation)),
                                      base.seconds + (clock.now - featureStart).seconds)
            }
            let (trainProblem, validationProblem, featureSeconds) = prepared[features]!
            report("training \(candidate.label)", fraction)
            let candidateStart = clock.now
            var counts: NaiveBayesCounts?
            if candidate.algorithm == .naiveBayes || candidate.algorithm == .complementNaiveBayes {
                counts = try naiveBayesCounts[features] ?? NaiveBayesCounts(trainProblem)
                naiveBayesCounts[features] = counts
            }
            var start: [Float]?
            if candidate.algorithm == .linearSVM, let source = Self.startingPoint(for: candidate, among: results),
               let dual = source.dual {
                start = Self.dualStart(dual, from: source.candidate, to: candidate)
            }
            let (model, dual) = try trainModel(candidate, trainProblem, validation: validationProblem,
                                               naiveBayesCounts: counts, start: start)
            let ranked = rankings(of: model, on: validationProblem.matrix)
            let actual = validationProblem.labels.map(Int.init)
            var primal: (LinearModel, Vocabulary)?
            if candidate.algorithm == .maxEnt, case .linear(let linear) = model,
               let vocabulary = counted[features.counting]?.featurizer.vocabulary {
                primal = (linear, vocabulary)
            }
            results.append(CandidateResult(candidate: candidate,
                                           metrics: ClassificationMetrics(labels: labels, actual: actual, ranked: ranked),
                                           correct: zip(ranked, actual).map { $0.first == $1 },
                                           seconds: featureSeconds + (clock.now - candidateStart).seconds,
                                           calibration: model.calibration, dual: dual, primal: primal,
                                           order: results.count))
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

    /// Fits the featurizer and the model of `candidate` on `examples`.
    /// - Returns: The featurizer, the model, and the metrics of the model on `examples`.
    /// - Parameter counted: What ``evaluate(_:train:validation:budget:followUp:)`` counted, when
    ///   `examples` are its training examples followed by its validation examples; consumed, so
    ///   that its matrices are freed once they have served.
    /// - Parameter start: For an SVM, the dual variables of the same candidate on the first rows
    ///   of `examples` (the training split, which comes first), to start from.
    /// - Parameter primal: For maximum entropy, the same candidate trained on the training split
    ///   and the vocabulary of its columns, to start from: each feature of the refit's vocabulary
    ///   starts from its weights there, a feature only the held-out texts have from 0. On
    ///   debian-sections the refit then took 17 s instead of 34 s, with the same test accuracy.
    func fit(_ candidate: Candidate, on examples: [LabeledText], calibration: LinearModel.ProbabilityMapping?,
             counted: consuming CountedFeatures = CountedFeatures(), start: [Float]? = nil,
             primal: consuming (model: LinearModel, vocabulary: Vocabulary)? = nil)
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
        // The start holds the only reference to the model, which the solver frees once started.
        let warmStart = primal.take().flatMap { source in
            featurizer.vocabulary.map { vocabulary in
                LogisticRegression.WarmStart(source.model, sourceColumns: vocabulary.columns(in: source.vocabulary))
            }
        }
        var (model, _) = try trainModel(candidate, problem, validation: nil, calibration: calibration, start: start,
                                        warmStart: warmStart)
        if let calibration, case .linear(let linear) = model { model = .linear(linear.with(probability: calibration)) }
        // The training metrics, from the features at hand: the same values as featurizing the
        // texts again.
        let metrics = ClassificationMetrics(labels: labels, actual: problem.labels.map(Int.init),
                                            ranked: rankings(of: model, on: problem.matrix))
        return (featurizer, model, metrics)
    }

    /// Trains one model.
    /// - Parameter calibration: The probability mapping the model will get, if it is already
    ///   known, so that the trainer need not fit one.
    /// - Parameter naiveBayesCounts: The class counts of `problem`, when a naive Bayes candidate
    ///   before this one has taken them.
    /// - Parameter start: For an SVM, dual variables to start from (``LinearSVM/start``).
    /// - Parameter warmStart: For maximum entropy, weights to start from.
    /// - Returns: The model, and for an SVM its dual variables.
    func trainModel(_ candidate: Candidate, _ problem: TrainingProblem, validation: TrainingProblem?,
                    calibration: LinearModel.ProbabilityMapping? = nil, naiveBayesCounts: NaiveBayesCounts? = nil,
                    start: [Float]? = nil, warmStart: LogisticRegression.WarmStart? = nil)
        throws -> (model: ClassifierModel, dual: [Float]?) {
        if candidate.algorithm == .embedding {
            var options = EmbeddingTrainingOptions(learningRate: Float(candidate.strength), seed: parameters.seed,
                                                   threads: threads)
            if let iterations = candidate.iterations { options.epochs = iterations }
            return (.embedding(try EmbeddingTrainer.train(problem, options: options)), nil)
        }
        let (model, dual) = try trainLinearModel(candidate, problem, validation: validation, calibration: calibration,
                                                 naiveBayesCounts: naiveBayesCounts, start: start, warmStart: warmStart)
        return (.linear(model), dual)
    }

    /// Trains one linear model; returns it, and for an SVM its dual variables.
    func trainLinearModel(_ candidate: Candidate, _ problem: TrainingProblem, validation: TrainingProblem?,
                          calibration: LinearModel.ProbabilityMapping? = nil,
                          naiveBayesCounts: NaiveBayesCounts? = nil,
                          start: [Float]? = nil, warmStart: LogisticRegression.WarmStart? = nil)
        throws -> (model: LinearModel, dual: [Float]?) {
        switch candidate.algorithm {
        case .naiveBayes:
            return (try MultinomialNaiveBayes(smoothing: candidate.strength)
                .train(naiveBayesCounts ?? NaiveBayesCounts(problem), validation: validation), nil)
        case .complementNaiveBayes:
            return (try ComplementNaiveBayes(smoothing: candidate.strength)
                .train(naiveBayesCounts ?? NaiveBayesCounts(problem), validation: validation), nil)
        case .maxEnt, .automatic:
            var trainer = LogisticRegression(c: candidate.strength, threads: threads)
            if let iterations = candidate.iterations { trainer.maxIterations = iterations }
            return (try trainer.fit(problem, start: warmStart).model, nil)
        case .linearSVM:
            var trainer = LinearSVM(c: candidate.strength, seed: parameters.seed, threads: threads)
            if let iterations = candidate.iterations { trainer.maxIterations = iterations }
            trainer.probability = calibration
            trainer.start = start
            let fit = try trainer.fit(problem, validation: validation)
            return (fit.model, fit.dual)
        case .embedding:
            preconditionFailure("embeddings are trained by trainModel")
        }
    }

    /// The result, among those of SVMs trained on the same rows, whose dual variables
    /// `candidate` starts from: the same SVM with the full vocabulary when `candidate` prunes it
    /// (same rows, fewer columns), else the last SVM trained (same rows and columns, another
    /// `C`); `nil` for the first.
    static func startingPoint(for candidate: Candidate, among results: [CandidateResult]) -> CandidateResult? {
        let full = Candidate(algorithm: candidate.algorithm, features: candidate.features.unpruned,
                             strength: candidate.strength, iterations: candidate.iterations)
        return results.first { $0.candidate == full && $0.dual != nil } ?? results.last { $0.dual != nil }
    }

    /// The dual variables of `source` as a start for `target`, scaled by the ratio of their
    /// `C`: at the optimum `αᵢ = 2Cᵢ max(0, 1 − yᵢ f(xᵢ))`, so where the margins change little
    /// the dual variables grow with `C`. (Unscaled, training fortunes-topic took 1.07× as
    /// long, `docs/benchmarks.md`.)
    static func dualStart(_ dual: [Float], from source: Candidate, to target: Candidate) -> [Float] {
        let scale = Float(target.strength / source.strength)
        return scale == 1 ? dual : dual.map { $0 * scale }
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

    /// Why the chosen candidate won, listing every candidate's validation accuracy (with its
    /// gap below the best and that gap's standard error) and macro-F1.
    func explain(_ results: [CandidateResult], planned: Int, chosen: CandidateResult) -> String {
        let best = Self.best(of: results, planned: planned)
        let lines = results.sorted { CandidateResult.isWorse($1, than: $0) }.map { result in
            let (gap, standardError) = Self.gap(from: best, to: result)
            let comparison = result.order < planned && result.order != best.order
                ? String(format: " (%.4f below the best, standard error %.4f)", gap, standardError) : ""
            return String(format: "%@: accuracy %.4f%@, macro-F1 %.4f, %.2f s", result.candidate.label,
                          result.metrics.accuracy, comparison, result.metrics.macroF1, result.seconds)
        }
        let rule = String(format: "the first in order of preference within one standard error of the best validation accuracy "
                          + "(the error of each gap, paired example by example), of %d candidates on %d held-out examples",
                          min(planned, results.count), chosen.metrics.count)
        let vocabulary: String
        if results.count > planned {
            let verdict = chosen.order >= planned ? "kept: it scored better" : "not kept: it did not score better"
            vocabulary = ", then the same with the features seen at least \(Self.prunedVocabulary.minCount) times only, "
                + verdict + " on validation"
        } else {
            vocabulary = ""
        }
        return rule + vocabulary + ":\n" + lines.joined(separator: "\n")
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
                               probability: probability)
        }
        return LinearModel(features: features, classes: classes, weights: weights, bias: bias, probability: probability)
    }
}
