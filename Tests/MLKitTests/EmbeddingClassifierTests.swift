import Foundation
import Testing
import TestSupport
@testable import MLKit

// MARK: - Helpers

/// A problem from sparse rows given as `[feature: count]` dictionaries.
private func problem(_ rows: [[Int32: Float]], labels: [Int32], classes: Int, columns: Int = 64,
                     classWeights: [Float]? = nil) -> TrainingProblem {
    var matrix = SparseMatrix(columns: columns)
    for row in rows {
        let keys = row.keys.sorted()
        matrix.appendRow(indices: keys, values: keys.map { row[$0]! })
    }
    return TrainingProblem(matrix: matrix, labels: labels, classCount: classes, classWeights: classWeights)
}

/// A separable problem: class c's documents hold two or three of its five signal features
/// (`c·5 ..< c·5+5`) plus two or three shared noise features (`100 ..< 110`).
private func separableProblem(classes: Int, documentsPerClass: Int, seed: UInt64) -> TrainingProblem {
    var generator = SplitMix64(seed: seed)
    var rows: [[Int32: Float]] = []
    var labels: [Int32] = []
    for document in 0..<(classes * documentsPerClass) {
        let label = document % classes
        var row: [Int32: Float] = [:]
        for _ in 0..<(2 + Int(generator.next(below: 2))) {
            row[Int32(label * 5) + Int32(generator.next(below: 5)), default: 0] += 1
        }
        for _ in 0..<(2 + Int(generator.next(below: 2))) {
            row[100 + Int32(generator.next(below: 10)), default: 0] += 1
        }
        rows.append(row)
        labels.append(Int32(label))
    }
    return problem(rows, labels: labels, classes: classes, columns: 128)
}

/// The index of the largest of `scores[start..<start+count]`, relative to `start`.
private func argmax(_ scores: [Float], start: Int = 0, count: Int) -> Int {
    var best = start
    for lane in start..<(start + count) where scores[lane] > scores[best] { best = lane }
    return best - start
}

/// The training accuracy of `model` on `problem`.
private func accuracy(_ model: EmbeddingModel, on problem: TrainingProblem) -> Double {
    let predicted = model.predictedClasses(of: problem.matrix)
    let correct = zip(predicted, problem.labels).filter { $0 == Int($1) }.count
    return Double(correct) / Double(problem.labels.count)
}

/// The weighted cross-entropy of `problem` under the parameters, computed in `Double` straight
/// from the model's definition: `h_j = Σ v_i E[row(f_i)] / Σ v_i` over known features,
/// `s_j = b + Wᵀh_j`, `L = Σ_j a_j (log Σ_c exp s_jc − s_{j,y_j})`.
private func referenceLoss(_ problem: TrainingProblem, featureIDs: [Int32], dimension: Int,
                           embeddings: [Double], output: [Double], bias: [Double]) -> Double {
    let classes = problem.classCount
    var loss = 0.0
    for document in 0..<problem.matrix.rows {
        let vector = problem.matrix.vector(at: document)
        var hidden = [Double](repeating: 0, count: dimension)
        var total = 0.0
        for (feature, value) in zip(vector.indices, vector.values) {
            guard let row = featureIDs.firstIndex(of: feature) else { continue }
            total += Double(value)
            for k in 0..<dimension { hidden[k] += Double(value) * embeddings[row * dimension + k] }
        }
        if total > 0 { hidden = hidden.map { $0 / total } }
        var scores = bias
        for c in 0..<classes {
            for k in 0..<dimension { scores[c] += hidden[k] * output[k * classes + c] }
        }
        let largest = scores.max()!
        let logSumExp = largest + log(scores.reduce(0) { $0 + exp($1 - largest) })
        let label = Int(problem.labels[document])
        loss += Double(problem.classWeights[label]) * (logSumExp - scores[label])
    }
    return loss
}

// MARK: - Training

@Suite("Embedding classifier: training", .onOwnThreads)
struct EmbeddingTrainingTests {
    @Test("One step's update is the analytic gradient, and it matches finite differences of the loss")
    func gradientCheck() throws {
        let tiny = problem([[0: 2, 3: 1], [1: 1, 3: 1, 7: 3], [2: 1, 5: 2], [0: 1, 7: 1], [5: 1, 6: 1], [4: 2]],
                           labels: [0, 1, 2, 1, 2, 0], classes: 3, classWeights: [1, 0.5, 2])
        let set = EmbeddingTrainingSet(problem: tiny, minCount: 1)
        #expect(set.featureIDs == [0, 1, 2, 3, 4, 5, 6, 7])
        var generator = SplitMix64(seed: 3)
        let state = EmbeddingTrainingState(set: set, dimension: 4, batchCapacity: 6, threads: 2, generator: &generator)
        let all = Array(0..<6)
        // A few steps first, so that W (zero at the start) and with it ∂L/∂E are not zero.
        try all.withUnsafeBufferPointer { batch in
            for _ in 0..<5 { _ = state.step(examples: batch, learningRate: 0.5) }
            let before = state.parameters
            let lossBefore = state.step(examples: batch, learningRate: 1)
            let after = state.parameters

            // With η = 1 the step is E −= ∂L/∂E, W −= ∂L/∂W, b −= ∂L/∂b / B.
            let analytic = zip(before.embeddings, after.embeddings).map { Double($0 - $1) }
                + zip(before.output, after.output).map { Double($0 - $1) }
                + zip(before.bias, after.bias).map { Double($0 - $1) * 6 }
            var parameters = (before.embeddings + before.output + before.bias).map(Double.init)
            let (embeddingCount, outputCount) = (before.embeddings.count, before.output.count)
            func loss(_ parameters: [Double]) -> Double {
                referenceLoss(tiny, featureIDs: set.featureIDs, dimension: 4,
                              embeddings: Array(parameters[0..<embeddingCount]),
                              output: Array(parameters[embeddingCount..<(embeddingCount + outputCount)]),
                              bias: Array(parameters[(embeddingCount + outputCount)...]))
            }
            #expect(abs(loss(parameters) - lossBefore) < 1e-4 * max(1, lossBefore))
            let epsilon = 1e-5
            var largestError = 0.0
            for index in parameters.indices {
                let saved = parameters[index]
                parameters[index] = saved + epsilon
                let up = loss(parameters)
                parameters[index] = saved - epsilon
                let down = loss(parameters)
                parameters[index] = saved
                let numeric = (up - down) / (2 * epsilon)
                largestError = max(largestError, abs(numeric - analytic[index]) / max(1, abs(numeric)))
            }
            #expect(largestError < 1e-4, "largest relative gradient error \(largestError)")
            let nonzero = try #require(analytic.prefix(embeddingCount).map(abs).max())
            #expect(nonzero > 1e-3, "the embedding gradient is not trivially zero")
        }
    }

    @Test("A separable synthetic problem is learned to 100%, on training and fresh documents")
    func separable() throws {
        let training = separableProblem(classes: 4, documentsPerClass: 50, seed: 1)
        let model = try EmbeddingTrainer.train(training, options: .init(dimension: 16))
        #expect(accuracy(model, on: training) == 1)
        #expect(accuracy(model, on: separableProblem(classes: 4, documentsPerClass: 25, seed: 2)) == 1)
    }

    @Test("Training is deterministic for a seed, and the same for one thread and two")
    func determinism() throws {
        let training = separableProblem(classes: 3, documentsPerClass: 40, seed: 5)
        let options = EmbeddingTrainingOptions(dimension: 12, epochs: 3, batchSize: 16, seed: 9, threads: 2)
        let first = try EmbeddingTrainer.train(training, options: options)
        let second = try EmbeddingTrainer.train(training, options: options)
        #expect(first == second)
        var oneThread = options
        oneThread.threads = 1
        #expect(try EmbeddingTrainer.train(training, options: oneThread) == first)
        var otherSeed = options
        otherSeed.seed = 10
        #expect(try EmbeddingTrainer.train(training, options: otherSeed).embeddings != first.embeddings)
    }

    @Test("Features in fewer than minCount documents get no row")
    func minCount() throws {
        let training = problem([[1: 1, 2: 5], [2: 1, 3: 1], [2: 2, 3: 1, 9: 1]], labels: [0, 1, 1], classes: 2, columns: 16)
        let model = try EmbeddingTrainer.train(training, options: .init(dimension: 8, epochs: 1, minCount: 2))
        #expect(model.featureIDs == [2, 3])
        #expect(model.rowCount == 2 && model.embeddings.count == 16 && model.buckets == 16)
        #expect(model.storedByteCount == 4 * (2 + 16 + 8 * 2 + 2))
        #expect(model.table.row(of: 3) == 1 && model.table.row(of: 9) == nil)
    }

    @Test("Bad settings and empty problems are refused with the setting named")
    func invalid() {
        let cases: [(EmbeddingTrainingOptions, String)] = [
            (.init(dimension: 0), "dimension"), (.init(epochs: 0), "epochs"), (.init(learningRate: -1), "learningRate"),
            (.init(batchSize: 0), "batchSize"), (.init(minCount: 0), "minCount"), (.init(threads: -1), "threads"),
        ]
        for (options, field) in cases {
            #expect(throws: MLKitError.self) { try options.validate() }
            do { try options.validate() } catch { #expect((error as? MLKitError)?.location?.field == field) }
        }
        let empty = TrainingProblem(matrix: SparseMatrix(columns: 4), labels: [], classCount: 2)
        #expect { _ = try EmbeddingTrainer.train(empty) } throws: { ($0 as? MLKitError)?.code == .invalidDataset }
    }

    @Test("Training that diverges throws instead of returning a model of NaNs")
    func divergence() {
        let training = separableProblem(classes: 3, documentsPerClass: 20, seed: 2)
        let options = EmbeddingTrainingOptions(dimension: 8, epochs: 3, learningRate: 1e30, batchSize: 4)
        #expect {
            _ = try EmbeddingTrainer.train(training, options: options)
        } throws: { error in
            let error = error as? MLKitError
            return error?.code == .invalidParameter && error?.location?.field == "learningRate"
                && error?.reason.hasPrefix("training diverged in epoch") == true
        }
    }
}

// MARK: - Prediction

@Suite("Embedding classifier: prediction", .onOwnThreads)
struct EmbeddingPredictionTests {
    @Test("Batched scores equal one-at-a-time scores (SIMD and sgemv), and probabilities sum to 1",
          arguments: [(5, 20), (21, 19), (2, 8), (8, 1)])
    func batchedMatchesSingle(classes: Int, dimension: Int) throws {
        let training = separableProblem(classes: classes, documentsPerClass: 12, seed: 11)
        let model = try EmbeddingTrainer.train(training, options: .init(dimension: dimension, epochs: 2))
        let batched = model.scores(of: training.matrix, blockSize: 7)
        #expect(batched.count == training.matrix.rows * classes)
        // The same blocks give the same bits; other blocks, the same scores up to rounding, since
        // BLAS may sum a row's products in another order when the row sits elsewhere in a block
        // (OpenBLAS 0.3.21's sgemm on a CPU without AVX-512 does).
        #expect(model.scores(of: training.matrix, rows: 7..<21, blockSize: 7) == Array(batched[(7 * classes)..<(21 * classes)]))
        let unaligned = model.scores(of: training.matrix, rows: 10..<20)
        for (offset, score) in unaligned.enumerated() {
            let expected = batched[10 * classes + offset]
            #expect(abs(score - expected) <= 1e-5 * max(1, abs(expected)))
        }
        var single = [Float](repeating: 0, count: classes)
        var simd = single
        var viaGEMV = single
        training.matrix.forEachRow(in: 0..<training.matrix.rows) { row, indices, values in
            single.withUnsafeMutableBufferPointer { model.scores(indices: indices, values: values, into: $0) }
            simd.withUnsafeMutableBufferPointer { model.scores(indices: indices, values: values, into: $0, usingGEMV: false) }
            viaGEMV.withUnsafeMutableBufferPointer { model.scores(indices: indices, values: values, into: $0, usingGEMV: true) }
            #expect(single == (classes > 16 ? viaGEMV : simd))
            for lane in 0..<classes {
                #expect(abs(simd[lane] - batched[row * classes + lane]) <= 1e-5 * max(1, abs(simd[lane])))
                #expect(abs(simd[lane] - viaGEMV[lane]) <= 1e-5 * max(1, abs(simd[lane])))
            }
        }
        let probabilities = model.probabilities(of: training.matrix.vector(at: 0))
        #expect(abs(probabilities.reduce(0, +) - 1) < 1e-5)
        #expect(argmax(probabilities, count: classes) == argmax(batched, count: classes))
    }

    @Test("A document of unknown features scores the bias alone")
    func unknownFeatures() throws {
        let model = EmbeddingModel(dimension: 2, classes: 2, buckets: 10, featureIDs: [3], embeddings: [1, 2],
                                   output: [1, 0, 0, 1], bias: [0.5, -0.5])
        #expect(model.probabilities(of: SparseVector(indices: [4, 7], values: [1, 1])) == model.probabilities(of: SparseVector(indices: [], values: [])))
        var scores = [Float](repeating: 0, count: 2)
        SparseVector(indices: [4], values: [2]).indices.withUnsafeBufferPointer { indices in
            [Float(2)].withUnsafeBufferPointer { values in
                scores.withUnsafeMutableBufferPointer { model.scores(indices: indices, values: values, into: $0) }
            }
        }
        #expect(scores == [0.5, -0.5])
        // h is the count-weighted mean of the known rows: feature 3 alone gives h = E[0] = (1, 2).
        [Int32(3), 4].withUnsafeBufferPointer { indices in
            [Float(3), 5].withUnsafeBufferPointer { values in
                scores.withUnsafeMutableBufferPointer { model.scores(indices: indices, values: values, into: $0) }
            }
        }
        #expect(scores == [1.5, 1.5])
    }

    @Test("The row table finds every feature and no other, for hashed and dense indices")
    func rowTable() {
        var generator = SplitMix64(seed: 4)
        let hashed = Array(Set((0..<5000).map { _ in Int32(generator.next(below: 1 << 21)) })).sorted()
        for features in [hashed, Array(0..<Int32(3000)), [Int32](), [Int32(0)]] {
            let table = EmbeddingRowTable(features: features)
            for (row, feature) in features.enumerated() { #expect(table.row(of: feature) == row) }
            let present = Set(features)
            for probe in (0..<2000).map({ _ in Int32(generator.next(below: 1 << 21)) }) where !present.contains(probe) {
                #expect(table.row(of: probe) == nil)
            }
        }
    }
}

// MARK: - Reference headlines

@Suite("Embedding classifier: reference headlines", .onOwnThreads)
struct EmbeddingHeadlineTests {
    @Test("With default settings, 30 headlines are enough to label two new ones", .needsSeedArtifacts("texts.json"))
    func headlines() throws {
        let dataset = try Reference.chapterHeadlines().validatedForTraining()
        let featurizer = try Featurizer(configuration: .init(maxWordNGram: 2))
        let matrix = featurizer.matrix(for: dataset.examples.map(\.text))
        let labels = dataset.examples.map { Int32(dataset.labels.firstIndex(of: $0.label)!) }
        let model = try EmbeddingTrainer.train(TrainingProblem(matrix: matrix, labels: labels,
                                                               classCount: dataset.labels.count))
        func label(_ text: String) -> String {
            let probabilities = model.probabilities(of: featurizer.vector(for: text))
            return dataset.labels[argmax(probabilities, count: probabilities.count)]
        }
        #expect(label("Snap users drop for first time, but revenue climbs") == "Tech")
        #expect(label("President Donald Trump is approving a new law") == "US Politics")
    }
}
