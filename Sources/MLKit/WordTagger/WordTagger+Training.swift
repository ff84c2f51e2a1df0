import Foundation

extension WordTagger {
    /// Trains a tagger, as Create ML's `MLWordTagger(trainingData:parameters:)` does.
    ///
    /// With ``WordTaggerParameters/Algorithm/automatic`` and validation data, it trains the
    /// CRF with c₂ = 1, then with c₂ = 0.1 (starting from the first), then the averaged
    /// perceptron (keeping its best epoch), scores each on the validation sentences, keeps the
    /// first in that order whose token accuracy is within one standard error of the best (the
    /// error of the difference, paired token by token, as ``TextClassifier`` chooses), and
    /// refits it on all the sentences, a CRF starting from the weights it reached. The reason
    /// is in ``trainingSummary``.
    ///
    /// - Parameters:
    ///   - trainingData: Sentences with a label per token, with at least two labels in all.
    ///   - parameters: How to train.
    /// - Throws: ``MLKitError`` with code `invalidDataset` for no sentences or a single label,
    ///   or `invalidParameter` for a setting that cannot be used.
    public init(trainingData: [TaggedTokens], parameters: WordTaggerParameters = WordTaggerParameters()) throws {
        let clock = ContinuousClock()
        let start = clock.now
        try parameters.validate()
        let rows = try TaggedTokens.validatedForTraining(trainingData)
        let plan = TaggerTrainingPlan(rows: rows, parameters: parameters)
        let trained = plan.run()
        let summary = WordTaggerTrainingSummary(
            algorithm: trained.candidate.algorithm, settings: trained.settings, reason: trained.reason,
            examples: rows.count, tokens: plan.all.tokenCount, seconds: (clock.now - start).seconds, date: Date())
        self.init(labels: plan.labels, attributes: Vocabulary(terms: nil, hashes: plan.attributeHashes), model: trained.model,
                  tokenizer: plan.tokenizer, metadata: ModelMetadata(), trainingSummary: summary,
                  trainingMetrics: trained.trainingMetrics, validationMetrics: trained.validationMetrics, formatVersion: nil)
    }
}

/// The steps of training a word tagger: split, featurize, try the candidates, refit.
struct TaggerTrainingPlan {
    /// A setting to try.
    struct Candidate: Equatable {
        var algorithm: WordTaggerParameters.Algorithm
        /// c₂ for the CRF.
        var regularization: Double = 1
        /// Epochs for the perceptron.
        var epochs = 10
        /// The CRF's best iteration on the validation data, once trained.
        var iterations: Int?

        var name: String {
            algorithm == .crf ? "crf c2=\(Self.format(regularization))" : "perceptron epochs=\(epochs)"
        }

        static func format(_ value: Double) -> String { String(format: "%g", value) }
    }

    /// What training produced.
    struct Trained {
        var candidate: Candidate
        var model: LinearChainModel
        var settings: [String: String]
        var reason: String
        var trainingMetrics: TaggingMetrics
        var validationMetrics: TaggingMetrics?
    }

    /// How many L-BFGS iterations a CRF candidate goes on without a better held-out accuracy.
    static let patience = 20

    let parameters: WordTaggerParameters
    let labels: [String]
    /// Every training sentence, featurized.
    let all: TaggingProblem
    /// The part trained on to compare candidates, and the part they are scored on; `nil` without
    /// validation data.
    let train: TaggingProblem?
    let validation: TaggingProblem?
    /// The hash of each attribute, by index.
    let attributeHashes: [UInt64]
    let tokenizer: Tokenizer
    let threads: Int

    init(rows: [TaggedTokens], parameters: WordTaggerParameters) {
        self.parameters = parameters
        let threads = parameters.threads == 0 ? Parallel.defaultThreadCount : parameters.threads
        self.threads = threads
        let labels = Array(Set(rows.lazy.flatMap(\.labels))).sorted()
        self.labels = labels
        tokenizer = Self.tokenizer(for: rows, language: parameters.language)
        parameters.progress?("featurizing", 0)
        var external: [TaggedTokens] = []
        if case .dataset(let sentences) = parameters.validation { external = sentences.filter { !$0.tokens.isEmpty } }
        let hashed = HashedSentences(rows + external, threads: threads)
        var indexer = AttributeIndexer()
        let index = Dictionary(uniqueKeysWithValues: labels.enumerated().map { ($1, Int32($0)) })
        var all = hashed.problem(sentences: 0..<rows.count, labelCount: labels.count,
                                 gold: { rows[$0].labels.map { index[$0]! } }) { indexer.index(inserting: $0) }
        all.attributeCount = indexer.hashes.count
        // Attributes by decreasing frequency, so that the weights every sentence uses share
        // a few cache lines.
        let renumbering = all.frequencyOrder()
        all.renumber(renumbering.newIndex)
        self.all = all
        attributeHashes = renumbering.order.map { indexer.hashes[Int($0)] }
        switch parameters.validation {
        case .split(let fraction):
            let held = Int((fraction * Double(rows.count)).rounded())
            if held >= 1 && held < rows.count {
                var order = Array(0..<rows.count)
                var generator = SplitMix64(seed: parameters.seed)
                generator.shuffle(&order)
                validation = all.subset(order[0..<held].sorted())
                train = all.subset(order[held...].sorted())
            } else {
                (train, validation) = (nil, nil)
            }
        case .dataset:
            let frozen = indexer
            var held = hashed.problem(sentences: rows.count..<(rows.count + external.count), labelCount: labels.count,
                                      gold: { external[$0 - rows.count].labels.map { index[$0] ?? -1 } }) { frozen.index(of: $0) }
            held.attributeCount = all.attributeCount
            held.renumber(renumbering.newIndex)
            validation = held
            train = all
        case .none:
            (train, validation) = (nil, nil)
        }
    }

    /// The tokenizer of ``WordTagger/tags(for:tokenizer:)``: single characters when nearly every
    /// training token is one character, as a word segmenter's are; else words, with ICU's
    /// dictionaries for Chinese, Japanese and Thai. Case is kept: the features look at it.
    static func tokenizer(for rows: [TaggedTokens], language: String?) -> Tokenizer {
        var total = 0, single = 0
        for row in rows {
            for token in row.tokens {
                total += 1
                if token.count == 1 { single += 1 }
            }
        }
        let keepCase = TextNormalization(lowercase: false)
        if single * 20 >= total * 19 { return Tokenizer(unit: .character, normalization: keepCase) }
        let code = language?.lowercased().split(separator: "-").first.map(String.init)
        if let code, ["zh", "ja", "th"].contains(code), Tokenizer.isICUAvailable {
            return Tokenizer(segmentation: .icu, locale: language, normalization: keepCase)
        }
        return Tokenizer(normalization: keepCase)
    }

    /// The candidates, in order of preference.
    var candidates: [Candidate] {
        let iterations = parameters.maxIterations
        switch parameters.algorithm {
        case .crf: return [Candidate(algorithm: .crf, regularization: parameters.regularization ?? 1)]
        case .perceptron: return [Candidate(algorithm: .perceptron, epochs: iterations ?? 10)]
        case .automatic:
            guard validation != nil else { return [Candidate(algorithm: .crf, regularization: parameters.regularization ?? 1)] }
            let crfs: [Double] = parameters.regularization.map { [$0] } ?? [1, 0.1]
            let perceptron = Candidate(algorithm: .perceptron, epochs: iterations ?? 10)
            return crfs.map { Candidate(algorithm: .crf, regularization: $0) } + [perceptron]
        }
    }

    /// Trains: every candidate on the training part, the chosen one on everything.
    func run() -> Trained {
        let candidates = self.candidates
        var reason = "the algorithm asked for"
        var chosen = candidates[0]
        var start: LinearChainModel?
        var validationMetrics: TaggingMetrics?
        if let train, let validation {
            typealias Result = (candidate: Candidate, model: LinearChainModel, correct: [Bool], metrics: TaggingMetrics)
            var trained: [Int: Result] = [:]
            let features = StateFeatures(train)
            // The perceptron first: it is quick, and the first CRF searches along its weights first.
            let order = candidates.indices.sorted { (candidates[$0].algorithm == .perceptron ? 0 : 1, $0) < (candidates[$1].algorithm == .perceptron ? 0 : 1, $1) }
            for (number, index) in order.enumerated() {
                var candidate = candidates[index]
                let fraction = Double(number) / Double(candidates.count + 1)
                parameters.progress?("training \(candidate.name) on \(train.sentenceCount) sentences", fraction)
                let model: LinearChainModel
                switch candidate.algorithm {
                case .perceptron:
                    // Keep the epoch that scores best on the validation sentences.
                    var best: (epoch: Int, correct: Int, model: LinearChainModel)?
                    _ = perceptron(epochs: candidate.epochs).train(train, features: features) { epoch, averaged in
                        let model = averaged()
                        let correct = self.correctTokens(model, validation).filter { $0 }.count
                        // On a tie the later epoch wins: more passes rarely hurt the average.
                        if best == nil || correct >= best!.correct { best = (epoch, correct, model) }
                        return true
                    }
                    candidate.epochs = best!.epoch
                    model = best!.model
                default:
                    // A smaller c₂ starts from the CRF before it. Training stops early once the
                    // held-out accuracy has not risen for `patience` iterations, and keeps the
                    // iteration that scored best.
                    let warm = trained.keys.sorted().last { trained[$0]!.candidate.algorithm == .crf }.map { trained[$0]!.model }
                    let perceptron = warm == nil ? trained.values.first { $0.candidate.algorithm == .perceptron }?.model : nil
                    var best: (iteration: Int, correct: Int, model: LinearChainModel)?
                    let name = candidate.name
                    let fit = crf(candidate.regularization).train(train, features: features, initial: warm,
                                                                  direction: perceptron) { iteration, _, current in
                        let model = current()
                        let correct = self.correctTokens(model, validation).filter { $0 }.count
                        if best == nil || correct > best!.correct { best = (iteration, correct, model) }
                        self.parameters.progress?(String(format: "training %@: iteration %d, held-out accuracy %.4f", name, iteration,
                                                         Double(correct) / Double(max(1, validation.tokenCount))), fraction)
                        return iteration - best!.iteration < Self.patience
                    }
                    model = best?.model ?? fit.model
                    candidate.iterations = best?.iteration ?? fit.optimization.iterations
                }
                let paths = decode(model, validation)
                let correct = zip(paths.joined(), validation.gold).map { $0 == $1 }
                trained[index] = (candidate, model, correct, metrics(validation, paths))
            }
            let results = candidates.indices.map { trained[$0]! }
            let best = results.indices.max { results[$0].correct.filter { $0 }.count < results[$1].correct.filter { $0 }.count }!
            let kept = results.indices.first { withinOneStandardError(results[$0].correct, of: results[best].correct) } ?? best
            chosen = results[kept].candidate
            start = results[kept].model
            validationMetrics = results[kept].metrics
            reason = results.count == 1 ? "the algorithm asked for" : "the first within one standard error of the best "
                + "on \(validation.tokenCount) held-out tokens"
            reason += "; validation token accuracy " + results.map { result in
                "\(result.candidate.name) \(String(format: "%.4f", result.metrics.tokenAccuracy))"
            }.joined(separator: ", ")
        } else if parameters.algorithm == .automatic {
            reason = "no validation data: the CRF with its default settings"
        }
        parameters.progress?("training \(chosen.name) on all \(all.sentenceCount) sentences", Double(candidates.count) / Double(candidates.count + 1))
        let features = StateFeatures(all)
        var settings: [String: String] = [:]
        let model: LinearChainModel
        switch chosen.algorithm {
        case .perceptron:
            model = perceptron(epochs: chosen.epochs).train(all, features: features)
            settings["epochs"] = String(chosen.epochs)
        default:
            let fit = crf(chosen.regularization).train(all, features: features, initial: start?.remapped(to: features))
            model = fit.model
            settings["c2"] = Candidate.format(chosen.regularization)
            settings["iterations"] = String(fit.optimization.iterations)
            settings["stopped"] = fit.optimization.reason
        }
        parameters.progress?("measuring", 0.99)
        let trainingMetrics = metrics(all, decode(model, all))
        return Trained(candidate: chosen, model: model, settings: settings, reason: reason, trainingMetrics: trainingMetrics,
                       validationMetrics: validationMetrics)
    }

    private func crf(_ regularization: Double) -> LinearChainCRF {
        LinearChainCRF(regularization: regularization, maxIterations: parameters.maxIterations ?? 100,
                       tolerance: parameters.tolerance, threads: threads)
    }

    private func perceptron(epochs: Int) -> StructuredPerceptron {
        StructuredPerceptron(epochs: epochs, seed: parameters.seed, threads: threads)
    }

    /// Whether the candidate is right on so many tokens that its gap to the best is within one
    /// standard error of the paired differences: `s/√n`, with `dᵢ` = 1 where only the best is
    /// right, −1 where only the candidate is, 0 elsewhere.
    private func withinOneStandardError(_ candidate: [Bool], of best: [Bool]) -> Bool {
        let n = Double(best.count)
        guard n > 1 else { return true }
        var sum = 0.0, squares = 0.0
        for (b, c) in zip(best, candidate) {
            let d: Double = b == c ? 0 : (b ? 1 : -1)
            sum += d
            squares += d * d
        }
        let mean = sum / n
        let deviation = ((squares - n * mean * mean) / (n - 1)).squareRoot()
        return mean <= deviation / n.squareRoot()
    }

    /// The Viterbi labels of every sentence of `problem`, on all threads.
    func decode(_ model: LinearChainModel, _ problem: TaggingProblem) -> [[Int32]] {
        let chunks = Parallel.chunks(of: problem.sentenceCount, threads: threads * Parallel.balancingChunksPerThread)
        return model.withViews { views in
            Parallel.balancedMap(chunks.count, threads: threads) { parts in
                let decoder = StructuredPerceptron.DecodingWorkspace()
                return parts.flatMap { part in chunks[part].map { decoder.decode(problem, sentence: $0, model: views) } }
            }.flatMap { $0 }
        }
    }

    private func correctTokens(_ model: LinearChainModel, _ problem: TaggingProblem) -> [Bool] {
        zip(decode(model, problem).joined(), problem.gold).map { $0 == $1 }
    }

    /// Metrics of predicted paths against a problem's gold labels; a gold label the tagger does
    /// not know (−1, in separate validation data) counts as an error of its own.
    private func metrics(_ problem: TaggingProblem, _ paths: [[Int32]]) -> TaggingMetrics {
        let unknown = labels.count
        let names = problem.gold.contains(-1) ? labels + ["(unknown)"] : labels
        var actual: [[Int]] = [], predicted: [[Int]] = []
        for (sentence, path) in paths.enumerated() {
            let first = problem.sentenceStarts[sentence]
            actual.append(path.indices.map { problem.gold[first + $0] < 0 ? unknown : Int(problem.gold[first + $0]) })
            predicted.append(path.map(Int.init))
        }
        return TaggingMetrics(labels: names, actual: actual, predicted: predicted)
    }
}

/// The attribute hashes of every token of many sentences, computed on all threads.
struct HashedSentences {
    /// Sentence `s` holds tokens `sentenceStarts[s] ..< sentenceStarts[s + 1]`.
    let sentenceStarts: [Int]
    /// Token `t`'s hashes are `hashes[tokenStarts[t] ..< tokenStarts[t + 1]]`.
    let tokenStarts: [Int]
    let hashes: [UInt64]

    init(_ rows: [TaggedTokens], threads: Int) {
        let parts = Parallel.map(rows.count, threads: threads) { range in
            var scratch = TokenFeatures.Scratch()
            var bytes: [UInt8] = []
            var ranges: [Range<Int>] = []
            var hashes: [UInt64] = []
            var tokenCounts: [Int] = []  // hashes per token
            var sentenceLengths: [Int] = []
            for row in range {
                bytes.removeAll(keepingCapacity: true)
                ranges.removeAll(keepingCapacity: true)
                for token in rows[row].tokens {
                    let start = bytes.count
                    bytes.append(contentsOf: token.utf8)
                    ranges.append(start..<bytes.count)
                }
                let first = tokenCounts.count
                tokenCounts.append(contentsOf: repeatElement(0, count: ranges.count))
                bytes.withUnsafeBufferPointer { buffer in
                    TokenFeatures.forEachAttribute(of: buffer, tokens: ranges, scratch: &scratch) { token, hash in
                        hashes.append(hash)
                        tokenCounts[first + token] += 1
                    }
                }
                sentenceLengths.append(ranges.count)
            }
            return (hashes, tokenCounts, sentenceLengths)
        }
        var sentenceStarts = [0], tokenStarts = [0]
        var hashes: [UInt64] = []
        hashes.reserveCapacity(parts.reduce(0) { $0 + $1.0.count })
        for (partHashes, tokenCounts, sentenceLengths) in parts {
            hashes.append(contentsOf: partHashes)
            for count in tokenCounts { tokenStarts.append(tokenStarts.last! + count) }
            for length in sentenceLengths { sentenceStarts.append(sentenceStarts.last! + length) }
        }
        self.sentenceStarts = sentenceStarts
        self.tokenStarts = tokenStarts
        self.hashes = hashes
    }

    /// The sentences `sentences` as a problem: each hash becomes the attribute `index` gives it
    /// (dropped when negative), each token's gold label comes from `gold`.
    func problem(sentences: Range<Int>, labelCount: Int, gold: (Int) -> [Int32],
                 index: (UInt64) -> Int32) -> TaggingProblem {
        var sentenceStarts = [0], tokenStarts = [0]
        var attributes: [Int32] = [], labels: [Int32] = []
        let firstToken = self.sentenceStarts[sentences.lowerBound], lastToken = self.sentenceStarts[sentences.upperBound]
        attributes.reserveCapacity(self.tokenStarts[lastToken] - self.tokenStarts[firstToken])
        for sentence in sentences {
            labels.append(contentsOf: gold(sentence))
            for token in self.sentenceStarts[sentence]..<self.sentenceStarts[sentence + 1] {
                for position in self.tokenStarts[token]..<self.tokenStarts[token + 1] {
                    let attribute = index(hashes[position])
                    if attribute >= 0 { attributes.append(attribute) }
                }
                tokenStarts.append(attributes.count)
            }
            sentenceStarts.append(labels.count)
        }
        return TaggingProblem(labelCount: labelCount, attributeCount: Int((attributes.max() ?? -1) + 1), sentenceStarts: sentenceStarts,
                              tokenStarts: tokenStarts, attributes: attributes, gold: labels)
    }
}

extension LinearChainModel {
    /// The same weights over another set of pairs with the same attributes: a pair this model
    /// has keeps its weight, a new pair starts at zero.
    func remapped(to features: StateFeatures) -> LinearChainModel {
        var weights = [Float](repeating: 0, count: features.pairCount)
        for attribute in 0..<min(self.features.attributeCount, features.attributeCount) {
            var old = Int(self.features.rowStarts[attribute])
            let oldEnd = Int(self.features.rowStarts[attribute + 1])
            for pair in Int(features.rowStarts[attribute])..<Int(features.rowStarts[attribute + 1]) {
                while old < oldEnd && self.features.pairLabels[old] < features.pairLabels[pair] { old += 1 }
                if old < oldEnd && self.features.pairLabels[old] == features.pairLabels[pair] { weights[pair] = pairWeights[old] }
            }
        }
        return LinearChainModel(labelCount: labelCount, features: features, pairWeights: weights, transitions: transitions,
                                start: start, end: end)
    }
}
