import Foundation
import Testing
import TestSupport
@testable import MLKit

/// Paths of the reference material and the test fixtures.
enum Reference {
    static let repositoryRoot = ChildProcess.repositoryRoot
    static let models = repositoryRoot.appendingPathComponent("Tests/MLKitTests/Fixtures/models")

    /// The project's 40 headlines (`Tests/Fixtures/headlines.json`).
    static func headlines() throws -> TextDataset {
        try DatasetReader().read(contentsOf: ProjectFixtures.headlines)
    }

    /// The chapter's 30 headlines, for tests that carry `.needsSeedArtifacts("texts.json")`.
    static func chapterHeadlines() throws -> TextDataset {
        try DatasetReader().read(contentsOf: SeedArtifacts.url("texts.json"))
    }

    static let techHeadline = "Snap users drop for first time, but revenue climbs"
    static let politicsHeadline = "President Donald Trump is approving a new law"
}

@Suite("Training on headlines", .onOwnThreads)
struct HeadlineTrainingTests {
    @Test("Every algorithm, and auto, labels the chapter's two examples correctly", .needsSeedArtifacts("texts.json"),
          arguments: [TextClassifierParameters.Algorithm.automatic, .naiveBayes, .complementNaiveBayes, .maxEnt, .linearSVM, .embedding])
    func chapterExamples(algorithm: TextClassifierParameters.Algorithm) throws {
        let classifier = try TextClassifier(trainingData: try Reference.chapterHeadlines(),
                                            parameters: .init(algorithm: algorithm))
        #expect(classifier.labels == ["Tech", "US Politics"])
        #expect(classifier.predictedLabel(for: Reference.techHeadline) == "Tech")
        #expect(classifier.predictedLabel(for: Reference.politicsHeadline) == "US Politics")
        let hypotheses = classifier.predictedLabelHypotheses(for: Reference.techHeadline, maximumCount: 2)
        #expect(Set(hypotheses.keys) == ["Tech", "US Politics"])
        #expect(abs(hypotheses.values.reduce(0, +) - 1) < 1e-5)
        #expect(classifier.trainingMetrics?.accuracy == 1)
    }

    @Test("Every algorithm, and auto, labels two new headlines correctly",
          arguments: [TextClassifierParameters.Algorithm.automatic, .naiveBayes, .complementNaiveBayes, .maxEnt, .linearSVM, .embedding])
    func newHeadlines(algorithm: TextClassifierParameters.Algorithm) throws {
        let classifier = try TextClassifier(trainingData: try Reference.headlines(), parameters: .init(algorithm: algorithm))
        #expect(classifier.labels == ["Tech", "US Politics"])
        #expect(classifier.predictedLabel(for: "Phone maker's revenue climbs as users upgrade their devices") == "Tech")
        #expect(classifier.predictedLabel(for: "The Senate votes on the president's budget law") == "US Politics")
    }

    @Test("Training is deterministic for a seed: the same probabilities, bit for bit")
    func determinism() throws {
        let data = try Reference.headlines()
        let first = try TextClassifier(trainingData: data, parameters: .init(seed: 7, threads: 2))
        let second = try TextClassifier(trainingData: data, parameters: .init(seed: 7, threads: 2))
        for example in data.examples {
            #expect(first.predictedLabelHypotheses(for: example.text, maximumCount: 2)
                    == second.predictedLabelHypotheses(for: example.text, maximumCount: 2))
        }
        #expect(first.trainingSummary?.settings == second.trainingSummary?.settings)
    }

    @Test("Automatic selection explains its choice and records validation metrics")
    func explanation() throws {
        let classifier = try TextClassifier(trainingData: try Reference.headlines())
        let summary = try #require(classifier.trainingSummary)
        // 40 headlines: 10% held out, stratified, is 2 of each label.
        #expect(summary.reason.contains("of 5 candidates on 4 held-out examples"))
        #expect(!summary.reason.contains("\n"))
        // The grid's five candidates in their order of preference, then the chosen one's pruned
        // vocabulary; one of them chosen, the one trained.
        let candidates = try #require(summary.candidates)
        #expect(candidates.map(\.algorithm) == [.linearSVM, .linearSVM, .complementNaiveBayes, .complementNaiveBayes,
                                                 .naiveBayes, summary.algorithm])
        #expect(candidates.last?.settings["minCount"] == "2")
        let chosen = candidates.filter(\.chosen)
        #expect(chosen.count == 1)
        #expect(chosen.first?.algorithm == summary.algorithm)
        #expect(chosen.first?.settings == summary.settings)
        #expect(chosen.first?.accuracy == classifier.validationMetrics?.accuracy)
        #expect(summary.examples == 40)
        #expect(classifier.validationMetrics?.count == 4)
    }

    @Test("A single label or an empty dataset is refused with a clear error")
    func invalidData() {
        let single = TextDataset([LabeledText(text: "a", label: "x"), LabeledText(text: "b", label: "x")])
        #expect(throws: MLKitError.self) { try TextClassifier(trainingData: single) }
        do {
            _ = try TextClassifier(trainingData: single)
        } catch let error as MLKitError {
            #expect(error.code == .invalidDataset)
            #expect(error.description.contains("only one label (\"x\")"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
        #expect(throws: MLKitError.self) { try TextClassifier(trainingData: TextDataset([])) }
    }

    @Test("Bad parameters name the field at fault")
    func invalidParameters() throws {
        let data = try Reference.headlines()
        #expect(throws: MLKitError(.invalidParameter, "must be positive, not -1.0", at: .init(field: "regularization"))) {
            try TextClassifier(trainingData: data, parameters: .init(regularization: -1))
        }
        #expect(throws: MLKitError(.invalidParameter, "no label \"Sports\" in the training data", at: .init(field: "classWeights"))) {
            try TextClassifier(trainingData: data, parameters: .init(classWeights: .explicit(["Sports": 2])))
        }
    }
}

@Suite("A minimum feature count prunes the vocabulary", .onOwnThreads)
struct MinimumFeatureCountTests {
    @Test("Complement naive Bayes keeps exactly the features seen at least twice")
    func prunes() throws {
        let data = try Reference.headlines()
        let full = try TextClassifier(trainingData: data, parameters: .init(algorithm: .complementNaiveBayes, validation: .none))
        let pruned = try TextClassifier(trainingData: data,
                                        parameters: .init(algorithm: .complementNaiveBayes, validation: .none,
                                                          minimumFeatureCount: 2))
        #expect(pruned.featurizerConfiguration.indexing == .vocabulary(.init(minCount: 2)))
        #expect(full.featurizerConfiguration.indexing == .vocabulary(.init()))
        // The same vocabulary as fitting the featurizer with that pruning on the same texts.
        let reference = try Featurizer(fitting: data.examples.map(\.text), configuration: pruned.featurizerConfiguration)
        #expect(pruned.vocabularySize == reference.dimension)
        #expect(pruned.vocabularySize > 0 && pruned.vocabularySize < full.vocabularySize)
        #expect(pruned.predictedLabel(for: Reference.techHeadline) == "Tech")
    }

    @Test("Automatic selection trains every candidate on it, and tries no other pruning")
    func automatic() throws {
        let classifier = try TextClassifier(trainingData: try Reference.headlines(), parameters: .init(minimumFeatureCount: 2))
        let summary = try #require(classifier.trainingSummary)
        #expect(!summary.reason.contains("the features seen at least"))
        let candidates = try #require(summary.candidates)
        #expect(candidates.count == 5)
        #expect(candidates.allSatisfy { $0.settings["minCount"] == "2" })
        #expect(classifier.featurizerConfiguration.indexing == .vocabulary(.init(minCount: 2)))
    }

    @Test("A count below 1, or one for the embedding classifier, names the field")
    func invalid() throws {
        let data = try Reference.headlines()
        #expect(throws: MLKitError(.invalidParameter, "must be at least 1, not 0", at: .init(field: "minimumFeatureCount"))) {
            try TextClassifier(trainingData: data, parameters: .init(minimumFeatureCount: 0))
        }
        #expect(throws: MLKitError(.invalidParameter, "applies to a vocabulary; the embedding classifier hashes its features",
                                   at: .init(field: "minimumFeatureCount"))) {
            try TextClassifier(trainingData: data, parameters: .init(algorithm: .embedding, minimumFeatureCount: 2))
        }
    }
}

@Suite("Automatic selection: the one-standard-error rule, paired, then a pruned vocabulary", .onOwnThreads)
struct AutomaticSelectionTests {
    /// A result whose validation predictions are right on the `right` examples of 100 (wrapping
    /// around past the last), and wrong on the others.
    static func result(_ candidate: Candidate, right: Range<Int>, order: Int) -> CandidateResult {
        result(candidate, isRight: (0..<100).map { right.contains($0) || right.contains($0 + 100) }, order: order)
    }

    /// A result right on the examples of 100 where `isRight` holds; the examples alternate
    /// between two labels, the even ones labelled 0.
    static func result(_ candidate: Candidate, isRight: [Bool], order: Int) -> CandidateResult {
        let actual = (0..<100).map { $0 % 2 }
        let ranked = actual.enumerated().map { row, label in isRight[row] ? [label, 1 - label] : [1 - label, label] }
        return CandidateResult(candidate: candidate, metrics: ClassificationMetrics(labels: ["a", "b"], actual: actual, ranked: ranked),
                               correct: isRight, seconds: 0, calibration: nil, order: order)
    }

    /// A result right on the first `correct` examples of 100.
    static func result(_ candidate: Candidate, correct: Int, order: Int) -> CandidateResult {
        result(candidate, right: 0..<correct, order: order)
    }

    static var plan: TrainingPlan { try! TrainingPlan(data: TextDataset([LabeledText(text: "x", label: "a"), LabeledText(text: "y", label: "b")]),
                                        parameters: .init()) }

    @Test("The standard error of a gap counts only the examples where the two candidates disagree")
    func pairedGap() throws {
        let candidates = Self.plan.candidates(hasValidation: true)
        let best = Self.result(candidates[1], correct: 82, order: 1)
        // Right on a subset of the best's examples: 2 disagreements, d = (1, 1, 0, ...).
        let nested = Self.gap(best, Self.result(candidates[0], correct: 80, order: 0))
        #expect(abs(nested.gap - 0.02) < 1e-12)
        // s² = (2 − 100 · 0.02²) / 99, and the error s/√100.
        #expect(abs(nested.standardError - ((2 - 0.04) / 99 / 100).squareRoot()) < 1e-12)
        // The same accuracies, right on other examples: 38 disagreements, 20 one way and 18 the other.
        let apart = Self.gap(best, Self.result(candidates[0], right: 20..<100, order: 0))
        #expect(abs(apart.gap - 0.02) < 1e-12)
        #expect(abs(apart.standardError - ((38 - 0.04) / 99 / 100).squareRoot()) < 1e-12)
        #expect(Self.gap(best, best) == (0, 0))
    }

    static func gap(_ best: CandidateResult, _ result: CandidateResult) -> (gap: Double, standardError: Double) {
        TrainingPlan.gap(from: best, to: result)
    }

    @Test("A candidate 2 points behind is kept when the two disagree on many examples, not when on 2")
    func pairedRule() throws {
        let candidates = Self.plan.candidates(hasValidation: true)
        let (svm, other) = (candidates[0], candidates[1])
        // Disagreeing on 2 examples, both to the best's side: 0.02 against an error of 0.0141.
        let nested = [Self.result(svm, correct: 80, order: 0), Self.result(other, correct: 82, order: 1)]
        #expect(TrainingPlan.choose(nested, planned: 2).candidate == other)
        // Disagreeing on 38: 0.02 against an error of 0.062, so the first in order is kept. The
        // unpaired error of one accuracy, √(0.82 · 0.18 / 100) = 0.038, would keep it in both.
        let apart = [Self.result(svm, right: 20..<100, order: 0), Self.result(other, correct: 82, order: 1)]
        #expect(TrainingPlan.choose(apart, planned: 2).candidate == svm)
        #expect(TrainingPlan.reason(nested, planned: 2, chosen: nested[1])
                == "the best validation accuracy of 2 candidates on 100 held-out examples")
        #expect(TrainingPlan.reason(apart, planned: 2, chosen: apart[0])
                == "the first in order of preference within one standard error of the best validation accuracy of 2 "
                + "candidates on 100 held-out examples (0.0200 below it, standard error 0.0619, paired example by example)")
    }

    @Test("The chosen candidate's pruned variant is kept only when it scores better on validation")
    func prunedVariant() throws {
        let candidates = Self.plan.candidates(hasValidation: true)
        let svm = candidates[0]
        let variant = try #require(Self.plan.prunedVariant(of: svm))
        #expect(variant.features.indexing == .vocabulary(TrainingPlan.prunedVocabulary))
        #expect(variant.label.contains("minCount=2"))
        // The SVM at 0.80 is within one standard error (0.062) of the best, 0.82, and first.
        let planned = [Self.result(svm, right: 20..<100, order: 0), Self.result(candidates[1], correct: 82, order: 1)]
        #expect(TrainingPlan.choose(planned, planned: 2).candidate == svm)
        let better = planned + [Self.result(variant, right: 19..<100, order: 2)]
        #expect(TrainingPlan.choose(better, planned: 2).candidate == variant)
        #expect(TrainingPlan.reason(better, planned: 2, chosen: TrainingPlan.choose(better, planned: 2))
            .hasPrefix("the features seen at least 2 times only scored better on validation than the full vocabulary, "
                       + "which was the first in order of preference within one standard error"))
        // The same accuracy as the best, right on other examples: first in order, no gap to give.
        // The first candidate's 18 errors are all on one label's examples, which gives it a
        // lower macro-F1 than the second's, spread over both: the second is the best.
        let oneSided = (0..<100).map { $0 >= 36 || $0 % 2 == 0 }
        let tied = [Self.result(svm, isRight: oneSided, order: 0), Self.result(candidates[1], right: 18..<100, order: 1)]
        #expect(tied[0].metrics.accuracy == tied[1].metrics.accuracy && tied[0].metrics.macroF1 < tied[1].metrics.macroF1)
        #expect(TrainingPlan.choose(tied, planned: 2).candidate == svm)
        #expect(TrainingPlan.reason(tied, planned: 2, chosen: tied[0])
                == "the first in order of preference with the best validation accuracy of 2 candidates on 100 held-out "
                + "examples")
        let equal = planned + [Self.result(variant, right: 20..<100, order: 2)]
        #expect(TrainingPlan.choose(equal, planned: 2).candidate == svm)
        #expect(TrainingPlan.reason(equal, planned: 2, chosen: equal[0])
            .hasSuffix("; the same with the features seen at least 2 times only did not score better"))
        // The variant takes no part in the rule: at 0.84, right wherever the SVM is, it would be
        // the best, with the SVM 4 points behind and out of reach (error 0.020), and the rule
        // would keep the second candidate (2 points behind, error 0.059).
        let far = planned + [Self.result(variant, right: 20..<104, order: 2)]
        #expect(TrainingPlan.choose(far, planned: 2).candidate == variant)
        #expect(TrainingPlan.choose(far, planned: 3).candidate == candidates[1])
    }

    @Test("An SVM starts from the dual of its full-vocabulary self when pruned, else of the last SVM, scaled by C")
    func svmStartingPoints() throws {
        let candidates = Self.plan.candidates(hasValidation: true)
        let (one, half) = (candidates[0], candidates[1])
        #expect(one.algorithm == .linearSVM && one.strength == 1)
        #expect(half.algorithm == .linearSVM && half.strength == 0.5)
        let starts = WarmStarts()
        #expect(LinearSVM.startingPoint(for: one, among: starts) == nil)
        starts.record(LinearSVM.DualStart(values: [0.5]), for: one)
        #expect(LinearSVM.startingPoint(for: half, among: starts)?.candidate == one)
        starts.record(LinearSVM.DualStart(values: [0.25]), for: half)
        starts.record(LogisticRegression.ModelStart(model: LinearModel(features: 0, classes: 2, weights: [], bias: [0, 0],
                                                                       probability: .softmax(temperature: 1)),
                                                    vocabulary: Vocabulary(terms: [])),
                      for: candidates[2])
        // The pruned C = 1 starts from the full C = 1, not from the last SVM trained.
        let pruned = try #require(Self.plan.prunedVariant(of: one))
        #expect(LinearSVM.startingPoint(for: pruned, among: starts)?.candidate == one)
        // An SVM not yet trained starts from the last SVM, whatever was trained after it.
        let other = Candidate(algorithm: .linearSVM, features: one.features, strength: 2, iterations: nil)
        #expect(LinearSVM.startingPoint(for: other, among: starts)?.state.values == [0.25])
        #expect(LinearSVM.dualStart([0, 0.5, 2], from: one, to: half) == [0, 0.25, 1])
        #expect(LinearSVM.dualStart([0, 0.25, 1], from: one, to: pruned) == [0, 0.25, 1])
        // The plan keeps only the chosen candidate's start for the refit, which takes it out.
        starts.keep(only: half)
        #expect(starts.state(LinearSVM.DualStart.self, of: one) == nil)
        #expect(starts.take(LinearSVM.DualStart.self, of: half)?.values == [0.25])
        #expect(starts.take(LinearSVM.DualStart.self, of: half) == nil)
    }

    @Test("A hashed candidate, or one already pruned, has no pruned variant")
    func noVariant() throws {
        let hashed = Candidate(algorithm: .embedding, features: Self.plan.features(for: .embedding), strength: 1, iterations: nil)
        #expect(Self.plan.prunedVariant(of: hashed) == nil)
        let pruned = try #require(Self.plan.prunedVariant(of: Self.plan.candidates(hasValidation: true)[0]))
        #expect(Self.plan.prunedVariant(of: pruned) == nil)
    }
}

@Suite("Prediction", .onOwnThreads)
struct PredictionTests {
    static let classifier: TextClassifier = {
        // The golden SVM file: trained once, read here by every prediction test.
        try! TextClassifier(contentsOf: Reference.models.appendingPathComponent("v1-headlines-svm.mlkit"))
    }()

    @Test("Batch predictions equal single predictions, on any thread count")
    func batch() throws {
        let texts = try Reference.headlines().examples.map(\.text)
        let single = texts.map { Self.classifier.predictedLabel(for: $0) }
        #expect(Self.classifier.predictions(for: texts, threads: 1) == single)
        #expect(Self.classifier.predictions(for: texts, threads: 2) == single)
    }

    @Test("Batch rankings equal single rankings, on any thread count", arguments: [1, 2, 5])
    func batchRankings(maximumCount: Int) throws {
        let texts = try Reference.headlines().examples.map(\.text) + ["", "revenue law"]
        let single = texts.map { Self.classifier.rankedLabels(for: $0, maximumCount: maximumCount) }
        for threads in [1, 2, 3] {
            let batch = Self.classifier.rankedLabels(for: texts, maximumCount: maximumCount, threads: threads)
            #expect(batch.count == texts.count)
            for (ranked, expected) in zip(batch, single) {
                #expect(ranked.map(\.label) == expected.map(\.label))
                #expect(ranked.map(\.probability) == expected.map(\.probability))
            }
        }
    }

    @Test("The label and the rankings follow the probabilities, which they skip computing",
          arguments: [TextClassifierParameters.Algorithm.naiveBayes, .linearSVM, .maxEnt, .embedding])
    func labelsFollowProbabilities(algorithm: TextClassifierParameters.Algorithm) throws {
        let headlines = try Reference.headlines()
        let classifier = try TextClassifier(trainingData: headlines, parameters: .init(algorithm: algorithm))
        let texts = headlines.examples.map(\.text) + ["", "revenue law", "a new phone for the president"]
        for text in texts {
            let ranked = classifier.rankedLabels(for: text, maximumCount: classifier.labels.count)
            #expect(classifier.predictedLabel(for: text) == ranked.first?.label, "\(text)")
        }
        #expect(classifier.predictions(for: texts) == texts.map { classifier.rankedLabels(for: $0, maximumCount: 1).first?.label })
    }

    @Test("Platt order values rank the classes as the probabilities do")
    func plattOrder() {
        var generator = SplitMix64(seed: 7)
        func uniform() -> Float { Float(generator.next() >> 40) / Float(1 << 24) }
        for _ in 0..<200 {
            let classes = 6
            let a = (0..<classes).map { _ in -0.5 - 4 * uniform() }
            let b = (0..<classes).map { _ in 2 * uniform() - 1 }
            let model = LinearModel(features: 1, classes: classes, weights: [Float](repeating: 0, count: classes),
                                    bias: [Float](repeating: 0, count: classes), probability: .platt(a: a, b: b))
            let scores = (0..<classes).map { _ in 6 * uniform() - 3 }
            var probabilities = scores, order = scores
            probabilities.withUnsafeMutableBufferPointer { model.probabilities(fromScores: $0) }
            order.withUnsafeMutableBufferPointer { model.order(fromScores: $0) }
            let byProbability = probabilities.withUnsafeMutableBufferPointer { TextClassifier.ranking($0, classes) }
            let byOrder = order.withUnsafeMutableBufferPointer { TextClassifier.ranking($0, classes) }
            #expect(byProbability == byOrder)
        }
    }

    @Test("One classifier serves many threads at once with the same answers")
    func concurrency() async throws {
        let texts = try Reference.headlines().examples.map(\.text)
        let expected = texts.map { Self.classifier.predictedLabelHypotheses(for: $0, maximumCount: 2) }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<20 where texts.map({ Self.classifier.predictedLabelHypotheses(for: $0, maximumCount: 2) }) != expected {
                        return false
                    }
                    return true
                }
            }
            for try await agreed in group { #expect(agreed) }
        }
    }

    @Test("Word counts give the same label as the text for a model of words")
    func wordCounts() throws {
        let classifier = try TextClassifier(trainingData: try Reference.headlines(),
                                            parameters: .init(algorithm: .complementNaiveBayes, maxWordNGram: 1))
        let featurizer = try Featurizer(configuration: .init())
        for text in [Reference.techHeadline, Reference.politicsHeadline] {
            #expect(classifier.predictedLabel(forWordCounts: featurizer.wordCounts(for: text)) == classifier.predictedLabel(for: text))
        }
        #expect(classifier.predictedLabel(forWordCounts: ["trump": 2, "law": 1]) == "US Politics")
    }

    @Test("Evaluation counts a confusion matrix and per-class figures")
    func evaluation() throws {
        let data = TextDataset([
            LabeledText(text: Reference.techHeadline, label: "Tech"),
            LabeledText(text: Reference.politicsHeadline, label: "US Politics"),
            LabeledText(text: Reference.politicsHeadline, label: "Tech"),
        ])
        let metrics = Self.classifier.evaluation(on: data)
        #expect(metrics.labels == ["Tech", "US Politics"])
        #expect(metrics.confusion == [[1, 1], [0, 1]])
        #expect(abs(metrics.accuracy - 2.0 / 3) < 1e-12)
        #expect(metrics.perClass.map(\.support) == [2, 1])
        #expect(metrics.perClass[0].precision == 1 && metrics.perClass[0].recall == 0.5)
        #expect(metrics.topKAccuracy[1] == 1)
    }

    @Test("Evaluation's log-loss is the mean of −log of each true label's probability, 10⁻¹⁵ for an unknown label")
    func evaluationLogLoss() throws {
        let texts = [Reference.techHeadline, Reference.politicsHeadline, Reference.politicsHeadline]
        let data = TextDataset(zip(texts, ["Tech", "US Politics", "Weather"]).map { LabeledText(text: $0, label: $1) })
        let metrics = Self.classifier.evaluation(on: data)
        let known = zip(texts.prefix(2), ["Tech", "US Politics"]).map { text, label in
            -log(Self.classifier.predictedLabelHypotheses(for: text, maximumCount: 2)[label]!)
        }
        let expected = (known.reduce(0, +) - log(1e-15)) / 3
        let logLoss = try #require(metrics.logLoss)
        #expect(abs(logLoss - expected) < 1e-6, "\(logLoss) against \(expected)")
        // Metrics from rankings alone, as a model's validation metrics, have none.
        #expect(ClassificationMetrics(labels: ["a", "b"], actual: [0], ranked: [[0, 1]]).logLoss == nil)
    }
}

@Suite("Classification metrics", .onOwnThreads)
struct ClassificationMetricsTests {
    @Test("Hand-computed precision, recall, F1, macro and weighted means")
    func handComputed() {
        // actual:    a a a b b c
        // predicted: a a b b c c
        let metrics = ClassificationMetrics(labels: ["a", "b", "c"], actual: [0, 0, 0, 1, 1, 2],
                                            ranked: [[0], [0], [1], [1], [2], [2]])
        #expect(metrics.confusion == [[2, 1, 0], [0, 1, 1], [0, 0, 1]])
        #expect(metrics.accuracy == 4.0 / 6)
        let f1 = metrics.perClass.map(\.f1)
        #expect(abs(f1[0] - 0.8) < 1e-12)       // p 1, r 2/3
        #expect(abs(f1[1] - 0.5) < 1e-12)       // p 1/2, r 1/2
        #expect(abs(f1[2] - 2.0 / 3) < 1e-12)   // p 1/2, r 1
        #expect(abs(metrics.macroF1 - (0.8 + 0.5 + 2.0 / 3) / 3) < 1e-12)
        #expect(abs(metrics.weightedF1 - (0.8 * 3 + 0.5 * 2 + 2.0 / 3) / 6) < 1e-12)
    }

    @Test("Metrics of parts combine into those of the whole: labels, confusion, top-k and log-loss")
    func combiningParts() throws {
        // Ten examples over labels a, b, c; the later parts bring labels the first has not seen.
        let actual = [0, 0, 1, 2, 1, 0, 2, 2, 1, 0]
        let ranked = [[0, 1, 2], [1, 0, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [0, 1, 2], [1, 0, 2], [2, 1, 0], [1, 0, 2], [2, 1, 0]]
        let losses = [0.1, 0.7, 0.2, 0.3, 1.9, 0.05, 1.2, 0.4, 0.3, 2.2]
        let labels = ["a", "b", "c"]
        func metrics(_ rows: Range<Int>) -> ClassificationMetrics {
            // A part knows only the labels it has seen, in order of first sight, as a batch does.
            var partLabels: [String] = []
            for row in rows {
                for index in [actual[row]] + ranked[row] where !partLabels.contains(labels[index]) {
                    partLabels.append(labels[index])
                }
            }
            let place = labels.map { partLabels.firstIndex(of: $0) ?? -1 }
            return ClassificationMetrics(labels: partLabels, actual: rows.map { place[actual[$0]] },
                                         ranked: rows.map { ranked[$0].map { place[$0] } },
                                         logLoss: losses[rows].reduce(0, +) / Double(rows.count))
        }
        let whole = metrics(0..<10)
        let combined = ClassificationMetrics(combining: [metrics(0..<1), metrics(1..<4), metrics(4..<10)])
        #expect(combined.labels == whole.labels)
        #expect(combined.confusion == whole.confusion)
        #expect(combined.topKAccuracy == whole.topKAccuracy)
        let logLoss = try #require(combined.logLoss)
        #expect(abs(logLoss - whole.logLoss!) < 1e-12)
        #expect(abs(logLoss - losses.reduce(0, +) / 10) < 1e-12)
        // An empty part changes nothing; metrics from rankings alone have no log-loss.
        let empty = ClassificationMetrics(labels: [], actual: [], ranked: [])
        let withEmpty = ClassificationMetrics(combining: [whole, empty])
        #expect(withEmpty.labels == whole.labels && withEmpty.confusion == whole.confusion)
        #expect(withEmpty.topKAccuracy == whole.topKAccuracy && abs(withEmpty.logLoss! - whole.logLoss!) < 1e-12)
        let rankingsOnly = ClassificationMetrics(labels: labels, actual: [0], ranked: [[0, 1, 2]])
        #expect(ClassificationMetrics(combining: [whole, rankingsOnly]).logLoss == nil)
        #expect(ClassificationMetrics(combining: []).count == 0)
    }

    @Test("The report aligns its tables and names the labels in the confusion matrix")
    func report() {
        let metrics = ClassificationMetrics(labels: ["neg", "positive"], actual: [0, 1, 1], ranked: [[0, 1], [1, 0], [0, 1]])
        let report = metrics.report
        #expect(report.contains("accuracy     0.6667"))
        #expect(report.contains("""
            label     precision  recall      F1  support
            neg          0.5000  1.0000  0.6667        1
            positive     1.0000  0.5000  0.6667        2
            """))
        #expect(report.contains("""
                      neg  positive
            neg         1         0
            positive    1         1
            """))
    }
}
