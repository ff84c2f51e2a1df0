import Foundation
import Testing
import TestSupport
@testable import MLKit

// MARK: - Helpers

/// A problem from rows written as `[column: value]` dictionaries.
private func problem(_ rows: [[Int32: Float]], labels: [Int32], columns: Int, classCount: Int? = nil,
                     classWeights: [Float]? = nil) -> TrainingProblem {
    var matrix = SparseMatrix(columns: columns)
    for row in rows {
        let keys = row.keys.sorted()
        matrix.appendRow(indices: keys, values: keys.map { row[$0]! })
    }
    return TrainingProblem(matrix: matrix, labels: labels, classCount: classCount ?? Int(labels.max()! + 1),
                           classWeights: classWeights)
}

/// The weight of `feature` for `lane`.
private func weight(_ model: LinearModel, _ feature: Int, _ lane: Int) -> Float {
    model.weights[feature * model.classes + lane]
}

/// `|a − b| ≤ tolerance · max(1, |b|)`.
private func close(_ a: Float, _ b: Double, _ tolerance: Double = 1e-5) -> Bool {
    abs(Double(a) - b) <= tolerance * max(1, abs(b))
}

/// `count` rows of a `classes`-class problem that a linear model separates: each row holds
/// three features from its class's own block of ten and two from a shared block of noise.
private func separableProblem(rows count: Int, classes: Int, seed: UInt64,
                              classWeights: [Float]? = nil) -> TrainingProblem {
    var generator = SplitMix64(seed: seed)
    let noiseStart = classes * 10
    var rows: [[Int32: Float]] = []
    var labels: [Int32] = []
    for index in 0..<count {
        let label = index % classes
        var row: [Int32: Float] = [:]
        for _ in 0..<3 { row[Int32(label * 10 + Int(generator.next(below: 10))), default: 0] += 1 }
        for _ in 0..<2 { row[Int32(noiseStart + Int(generator.next(below: 20))), default: 0] += 1 }
        rows.append(row)
        labels.append(Int32(label))
    }
    return problem(rows, labels: labels, columns: noiseStart + 20, classCount: classes, classWeights: classWeights)
}

/// A two-class problem whose classes overlap: each row holds four features drawn from its
/// class's preferred half of 20 features with probability 0.7, from the other half otherwise.
private func noisyProblem(rows count: Int, seed: UInt64) -> TrainingProblem {
    var generator = SplitMix64(seed: seed)
    var rows: [[Int32: Float]] = []
    var labels: [Int32] = []
    for index in 0..<count {
        let label = index % 2
        var row: [Int32: Float] = [:]
        for _ in 0..<4 {
            let half = generator.nextFloat() < 0.7 ? label : 1 - label
            row[Int32(half * 10 + Int(generator.next(below: 10))), default: 0] += 1
        }
        rows.append(row)
        labels.append(Int32(label))
    }
    return problem(rows, labels: labels, columns: 20, classCount: 2)
}

/// The classes of the linear trainers, each with its default settings, keyed by name.
private let defaultTrainers: [(name: String, train: @Sendable (TrainingProblem) throws -> LinearModel)] = [
    ("multinomial NB", { try MultinomialNaiveBayes().train($0) }),
    ("complement NB", { try ComplementNaiveBayes().train($0) }),
    ("logistic regression", { try LogisticRegression(threads: 2).train($0) }),
    ("linear SVM", { try LinearSVM(threads: 2).train($0) }),
]

// MARK: - Naive Bayes by hand

/// Three documents over three features, two classes:
///
///     d0 (class 0): f0 × 2, f1 × 1        d1 (class 0): f0 × 1        d2 (class 1): f1 × 1, f2 × 3
///
/// Class totals: N_0 = (3, 1, 0), sum 4; N_1 = (0, 1, 3), sum 4; feature totals T = (3, 2, 3).
@Suite("Naive Bayes on a corpus computed by hand", .onOwnThreads)
struct NaiveBayesByHandTests {
    let corpus = problem([[0: 2, 1: 1], [0: 1], [1: 1, 2: 3]], labels: [0, 0, 1], columns: 3)

    @Test("Multinomial: log((N_cf + 1) / (N_c + 3)) and the class log prior")
    func multinomial() throws {
        let model = try MultinomialNaiveBayes().train(corpus)
        // Class 0: (3+1)/(4+3), (1+1)/7, (0+1)/7. Class 1: 1/7, 2/7, 4/7.
        let expected: [[Double]] = [[4.0 / 7, 1.0 / 7], [2.0 / 7, 2.0 / 7], [1.0 / 7, 4.0 / 7]]
        for feature in 0..<3 {
            for lane in 0..<2 { #expect(close(weight(model, feature, lane), log(expected[feature][lane]))) }
        }
        // Priors: 2 of 3 documents, 1 of 3.
        #expect(close(model.bias[0], log(2.0 / 3)) && close(model.bias[1], log(1.0 / 3)))
        #expect(model.probability == .softmax(temperature: 1))
    }

    @Test("Complement: −log of the smoothed complement distribution, and no prior")
    func complement() throws {
        let model = try ComplementNaiveBayes().train(corpus)
        // Class 0's complement is class 1: (T − N_0 + 1) = (1, 2, 4), sum 7, so W = −log(1/7, 2/7, 4/7).
        // Class 1's complement is class 0: (4, 2, 1) / 7.
        let complement: [[Double]] = [[1.0 / 7, 4.0 / 7], [2.0 / 7, 2.0 / 7], [4.0 / 7, 1.0 / 7]]
        for feature in 0..<3 {
            for lane in 0..<2 { #expect(close(weight(model, feature, lane), -log(complement[feature][lane]))) }
        }
        #expect(model.bias == [0, 0])
        // Without validation data: temperature 1, as scikit-learn's predict_proba.
        #expect(model.probability == .softmax(temperature: 1))
    }

    @Test("Complement with normalized weights: log θ̃ divided by its sum over the features")
    func complementNormalized() throws {
        let model = try ComplementNaiveBayes(normalizesWeights: true).train(corpus)
        // Both classes: Σ_f log θ̃ = log(1/7) + log(2/7) + log(4/7) = log(8/343).
        let sum = log(8.0 / 343)
        #expect(close(weight(model, 0, 0), log(1.0 / 7) / sum))
        #expect(close(weight(model, 2, 0), log(4.0 / 7) / sum))
        #expect(close(weight(model, 0, 1), log(4.0 / 7) / sum))
    }

    @Test("Hashed columns: smoothing counts every column, used or not")
    func unusedColumns() throws {
        // The same corpus in columns 1, 4 and 6 of 8: n = 8, so class 0's f0 gets (3+1)/(4+8).
        let spread = problem([[1: 2, 4: 1], [1: 1], [4: 1, 6: 3]], labels: [0, 0, 1], columns: 8)
        let model = try MultinomialNaiveBayes().train(spread)
        #expect(close(weight(model, 1, 0), log(4.0 / 12)))
        #expect(close(weight(model, 6, 1), log(4.0 / 12)))
        // An unseen column gets the smoothing alone: 1 / 12 for both classes.
        #expect(close(weight(model, 0, 0), log(1.0 / 12)) && close(weight(model, 7, 1), log(1.0 / 12)))
        // Complement: class 0's complement over 8 columns sums to 4 + 8 = 12; unseen columns get −log(1/12).
        let complement = try ComplementNaiveBayes().train(spread)
        #expect(close(weight(complement, 1, 0), -log(1.0 / 12)) && close(weight(complement, 3, 0), -log(1.0 / 12)))
        #expect(close(weight(complement, 6, 0), -log(4.0 / 12)))
    }

    @Test("Class weights scale each document's counts and its class's prior")
    func classWeights() throws {
        let weighted = problem([[0: 2, 1: 1], [0: 1], [1: 1, 2: 3]], labels: [0, 0, 1], columns: 3,
                               classWeights: [1, 4])
        let model = try MultinomialNaiveBayes().train(weighted)
        // N_1 = 4 · (0, 1, 3), sum 16: f2 gets (12 + 1)/(16 + 3). Priors: 2 and 4 of 6.
        #expect(close(weight(model, 2, 1), log(13.0 / 19)))
        #expect(close(model.bias[0], log(2.0 / 6)) && close(model.bias[1], log(4.0 / 6)))
    }

    @Test("Invalid input is refused")
    func refusals() {
        #expect(throws: MLKitError.self) { try MultinomialNaiveBayes(smoothing: 0).train(corpus) }
        let negative = problem([[0: -1], [1: 1]], labels: [0, 1], columns: 2)
        #expect(throws: MLKitError.self) { try ComplementNaiveBayes().train(negative) }
    }
}

// MARK: - Scoring

@Suite("Scoring", .onOwnThreads)
struct ScoringTests {
    @Test("A model large enough for row prefetching scores exactly as the plain sum, to the last row")
    func prefetchedScores() {
        let features = 40_000, classes = 39
        #expect(features * classes >= LinearModel.prefetchThreshold)
        var generator = SplitMix64(seed: 3)
        let weights = (0..<(features * classes)).map { _ in generator.nextFloat() - 0.5 }
        let bias = (0..<classes).map { Float($0) / 10 }
        let model = LinearModel(features: features, classes: classes, weights: weights, bias: bias,
                                probability: .softmax(temperature: 1))
        let indices: [Int32] = [0, 17, 4_095, 20_000, 39_999]
        let values: [Float] = [1, 0.5, 2, -1, 3]
        var scores = [Float](repeating: 0, count: classes)
        indices.withUnsafeBufferPointer { indices in
            values.withUnsafeBufferPointer { values in
                scores.withUnsafeMutableBufferPointer { model.scores(indices: indices, values: values, into: $0) }
            }
        }
        for lane in 0..<classes {
            var expected = bias[lane]
            for (index, value) in zip(indices, values) { expected = expected + value * weights[Int(index) * classes + lane] }
            #expect(scores[lane] == expected)
        }
    }
}

// MARK: - Column compaction

@Suite("Column compaction", .onOwnThreads)
struct ColumnCompactionTests {
    @Test("Used columns are renumbered in order and expanded back, with a fill for the others")
    func roundTrip() {
        let spread = problem([[3: 1, 70: 2], [1000: 5, 3: 1]], labels: [0, 1], columns: 1 << 12)
        let compaction = ColumnCompaction(matrix: spread.matrix)
        #expect(compaction.usedColumns == [3, 70, 1000])
        #expect(compaction.compactIndex(of: 70) == 1 && compaction.compactIndex(of: 71) == nil)
        let compact = compaction.compact(spread.matrix)
        #expect(compact.columns == 3 && compact.indices == [0, 1, 0, 2] && compact.values == [1, 2, 1, 5])
        let full = compaction.expand([1, 2, 3, 4, 5, 6], classes: 2, fill: [-1, -2])
        #expect(full.count == (1 << 12) * 2)
        #expect(Array(full[6..<8]) == [1, 2] && Array(full[140..<142]) == [3, 4] && Array(full[2000..<2002]) == [5, 6])
        #expect(Array(full[0..<2]) == [-1, -2] && Array(full[8190..<8192]) == [-1, -2])
    }
}

// MARK: - Trust-region Newton

/// `f(x) = ½ Σᵢ aᵢ (xᵢ − cᵢ)² + ½ (Σᵢ xᵢ − 1)²`, `aᵢ = 1 … n` (condition number ≈ n), whose
/// Hessian is `A + 11ᵀ`. Its minimizer solves `(A + 11ᵀ) x = A c + 1`; Sherman–Morrison gives
/// `x = c + A⁻¹1 · (1 − Σ c) / (1 + Σ 1/aᵢ)`.
private struct IllConditionedQuadratic: SecondOrderObjective {
    let a: [Double]
    let c: [Double]

    init(count n: Int) {
        a = (0..<n).map { Double($0 + 1) }
        c = (0..<n).map { Double(($0 * 7) % 11) / 10 - 0.5 }
    }

    var minimizer: [Double] {
        let shift = (1 - c.reduce(0, +)) / (1 + a.reduce(0) { $0 + 1 / $1 })
        return a.indices.map { c[$0] + shift / a[$0] }
    }

    func evaluate(_ x: UnsafeBufferPointer<Float>, _ g: UnsafeMutableBufferPointer<Float>) -> Double {
        let total = x.reduce(0) { $0 + Double($1) }
        for i in a.indices { g[i] = Float(a[i] * (Double(x[i]) - c[i]) + (total - 1)) }
        return value(at: x, plus: nil)
    }

    func value(at x: UnsafeBufferPointer<Float>, plus step: UnsafeBufferPointer<Float>?) -> Double {
        let point = a.indices.map { Double(x[$0]) + Double(step?[$0] ?? 0) }
        let total = point.reduce(0, +)
        return a.indices.reduce(0.5 * (total - 1) * (total - 1)) { sum, i in
            sum + 0.5 * a[i] * (point[i] - c[i]) * (point[i] - c[i])
        }
    }

    func hessianDiagonal(into preconditioner: Preconditioner) {
        a.map { Float($0 + 1) }.withUnsafeBufferPointer { preconditioner.store($0, at: 0) }
    }

    func hessianCurvature(along d: UnsafeBufferPointer<Float>) -> Double {
        let total = d.reduce(0) { $0 + Double($1) }
        return a.indices.reduce(total * total) { $0 + a[$1] * Double(d[$1]) * Double(d[$1]) }
    }

    func addHessianProduct(_ d: UnsafeBufferPointer<Float>, scale: Float, to target: UnsafeMutableBufferPointer<Float>) {
        let total = d.reduce(0) { $0 + Double($1) }
        for i in a.indices { target[i] += scale * Float(a[i] * Double(d[i]) + total) }
    }
}

@Suite("Trust-region Newton", .onOwnThreads)
struct TrustRegionNewtonTests {
    @Test("Converges to the minimum of an ill-conditioned convex quadratic")
    func quadratic() {
        let objective = IllConditionedQuadratic(count: 100)
        let result = TrustRegionNewton(tolerance: 1e-6, maxIterations: 100)
            .minimize(objective, from: [Float](repeating: 0, count: 100))
        #expect(result.summary.stop == .converged)
        #expect(result.summary.gradientNorm <= 1e-6 * result.summary.initialGradientNorm)
        let error = zip(result.solution, objective.minimizer).map { abs(Double($0) - $1) }.max()!
        #expect(error < 1e-4, "largest error \(error)")
    }

    @Test("The softmax loss's Hessian product is the derivative of its gradient")
    func softmaxHessian() {
        let data = separableProblem(rows: 40, classes: 3, seed: 5)
        let loss = SoftmaxLoss(problem: data, c: 2, threads: 2)
        let count = (data.matrix.columns + 1) * data.classCount
        let point = (0..<count).map { Float(($0 * 37) % 17) / 40 - 0.2 }
        let direction = (0..<count).map { Float(($0 * 11) % 13) / 13 - 0.5 }
        let step: Float = 1e-2
        func gradient(at x: [Float]) -> [Float] {
            var g = [Float](repeating: 0, count: count)
            x.withUnsafeBufferPointer { x in g.withUnsafeMutableBufferPointer { g in _ = loss.evaluate(x, g) } }
            return g
        }
        let ahead = gradient(at: zip(point, direction).map { $0 + step * $1 })
        let behind = gradient(at: zip(point, direction).map { $0 - step * $1 })
        _ = gradient(at: point)
        // The product, added twice to a vector that holds 1s: 1 + 2 ∇²f d.
        var product = [Float](repeating: 1, count: count)
        let curvature = direction.withUnsafeBufferPointer { d in
            let curvature = loss.hessianCurvature(along: d)
            product.withUnsafeMutableBufferPointer { loss.addHessianProduct(d, scale: 2, to: $0) }
            product.withUnsafeMutableBufferPointer { loss.addHessianProduct(d, scale: -1, to: $0) }
            return curvature
        }
        product = product.map { $0 - 1 }
        let scale = product.map { abs($0) }.max()!
        for index in 0..<count {
            let difference = (ahead[index] - behind[index]) / (2 * step)
            #expect(abs(difference - product[index]) <= 2e-3 * scale, "parameter \(index)")
        }
        // The curvature is dᵀ(∇²f d).
        let dot = zip(direction, product).reduce(0) { $0 + Double($1.0) * Double($1.1) }
        #expect(abs(curvature - dot) <= 1e-4 * abs(dot), "curvature \(curvature), dᵀ(∇²f d) \(dot)")
        // value(at:plus:) agrees with evaluate, and leaves the Hessian's point alone.
        let value = point.withUnsafeBufferPointer { loss.value(at: $0, plus: nil) }
        var again = [Float](repeating: 0, count: count)
        let evaluated = point.withUnsafeBufferPointer { x in again.withUnsafeMutableBufferPointer { loss.evaluate(x, $0) } }
        #expect(value == evaluated)
        // With a step, it is f at the sum, which the solver never stores.
        let sum = zip(point, direction).map { $0 + $1 }
        let atSum = sum.withUnsafeBufferPointer { loss.value(at: $0, plus: nil) }
        let plus = point.withUnsafeBufferPointer { x in direction.withUnsafeBufferPointer { loss.value(at: x, plus: $0) } }
        #expect(abs(plus - atSum) <= 1e-5 * abs(atSum), "f(x + s) \(plus), f at the stored sum \(atSum)")
    }

    @Test("The preconditioner keeps its entries in bfloat16, mixed with the identity")
    func preconditionerStorage() {
        let preconditioner = Preconditioner(count: 5, mix: 0.5)
        #expect((0..<5).allSatisfy { preconditioner[$0] == 1 })
        let diagonal: [Float] = [1, 3.14159, 1e6, 0.0001]
        diagonal.withUnsafeBufferPointer { preconditioner.store($0, at: 1) }
        #expect(preconditioner[0] == 1)
        for (index, value) in diagonal.enumerated() {
            let mixed = 0.5 + 0.5 * value
            #expect(abs(preconditioner[index + 1] - mixed) <= mixed / 256, "entry \(index + 1)")
        }
        // Rounded to nearest: 1 + 2⁻⁸ is halfway between two bfloat16 values and goes to the even one, 1.
        #expect(Preconditioner.encode(1 + 1.0 / 256) == Preconditioner.encode(1))
        #expect(Preconditioner.encode(1 + 3.0 / 512) == Preconditioner.encode(1 + 1.0 / 128))
    }
}

// MARK: - Separable data

@Suite("Separable data", .onOwnThreads)
struct SeparableDataTests {
    @Test("Every trainer reaches 100% training accuracy", arguments: defaultTrainers.indices)
    func perfectTrainingAccuracy(trainer: Int) throws {
        let data = separableProblem(rows: 120, classes: 4, seed: 7)
        let model = try defaultTrainers[trainer].train(data)
        #expect(model.accuracy(on: data) == 1, "\(defaultTrainers[trainer].name)")
    }

    @Test("Logistic regression converges and its gradient vanishes")
    func logisticConvergence() throws {
        let data = separableProblem(rows: 90, classes: 3, seed: 11)
        let fit = try LogisticRegression(tolerance: 1e-5, maxIterations: 1000, threads: 1).fit(data)
        #expect(fit.optimization.stop == .converged)
        #expect(fit.optimization.gradientNorm <= 1e-5 * fit.optimization.initialGradientNorm)
    }

    @Test("A linear SVM separates two classes with one problem and its negation")
    func binarySVM() throws {
        let data = separableProblem(rows: 60, classes: 2, seed: 3)
        let model = try LinearSVM(threads: 1).train(data)
        #expect(model.accuracy(on: data) == 1)
        for feature in 0..<model.features { #expect(weight(model, feature, 0) == -weight(model, feature, 1)) }
        #expect(model.bias[0] == -model.bias[1])
    }
}

// MARK: - Determinism

@Suite("Determinism", .onOwnThreads)
struct DeterminismTests {
    let data = separableProblem(rows: 300, classes: 5, seed: 21)

    @Test("The linear SVM gives identical weights for the same seed, on any number of threads")
    func svmSeed() throws {
        let first = try LinearSVM(seed: 5, threads: 2).train(data)
        let again = try LinearSVM(seed: 5, threads: 2).train(data)
        let serial = try LinearSVM(seed: 5, threads: 1).train(data)
        #expect(first == again)
        #expect(first == serial)
    }

    /// The cold run stops after a pass whose projected gradients, taken before each update, lie
    /// within the tolerance; the updates of that pass can leave one more pass to go.
    @Test("An SVM started from its own dual solution stops within two passes, with the same labels")
    func svmWarmStartFromSolution() throws {
        for classes in [2, 5] {
            let data = separableProblem(rows: 300, classes: classes, seed: 21)
            let cold = try LinearSVM(seed: 5, threads: 2).fit(data)
            #expect(cold.dual.count == data.matrix.rows * (classes == 2 ? 1 : classes))
            #expect(cold.dual.allSatisfy { $0 >= 0 })
            var trainer = LinearSVM(seed: 5, threads: 2)
            trainer.start = cold.dual
            let warm = try trainer.fit(data)
            #expect(warm.iterations.allSatisfy { $0 <= 2 }, "\(warm.iterations)")
            #expect(cold.iterations.reduce(0, +) > warm.iterations.reduce(0, +))
            #expect(warm.model.predictions(for: data.matrix) == cold.model.predictions(for: data.matrix))
        }
    }

    @Test("A warm-started SVM gives identical weights on any number of threads, and a short start pads with 0")
    func svmWarmStartThreads() throws {
        let half = try LinearSVM(c: 0.5, seed: 5, threads: 2).fit(data)
        // The start covers the first 200 of 300 rows; the others start at 0.
        let start = Array(half.dual.prefix(200 * data.classCount)).map { $0 * 2 }
        var trainer = LinearSVM(c: 1, seed: 5, threads: 2)
        trainer.start = start
        let two = try trainer.fit(data)
        trainer.threads = 1
        let one = try trainer.fit(data)
        #expect(two.model == one.model)
        #expect(two.dual == one.dual)
    }

    @Test("An SVM for C = 1 started from the solution for C = 0.5 takes fewer passes than from 0")
    func svmWarmStartAlongC() throws {
        let half = try LinearSVM(c: 0.5, seed: 5, threads: 1).fit(data)
        let cold = try LinearSVM(c: 1, seed: 5, threads: 1).fit(data)
        var trainer = LinearSVM(c: 1, seed: 5, threads: 1)
        trainer.start = half.dual.map { $0 * 2 }
        let warm = try trainer.fit(data)
        #expect(warm.iterations.reduce(0, +) < cold.iterations.reduce(0, +), "\(warm.iterations) against \(cold.iterations)")
        #expect(warm.model.accuracy(on: data) == cold.model.accuracy(on: data))
    }

    @Test("Logistic regression agrees on 1 and 2 threads")
    func logisticThreads() throws {
        let one = try LogisticRegression(threads: 1).train(data)
        let two = try LogisticRegression(threads: 2).train(data)
        let scale = one.weights.map { abs($0) }.max()!
        let largest = zip(one.weights, two.weights).map { abs($0 - $1) }.max()!
        #expect(largest <= 1e-4 * scale)
        // The reduction order is fixed by rows and features, not threads: the results are identical.
        #expect(one == two)
    }

    @Test("An SVM lane's solution does not depend on the lanes trained beside it")
    func laneIndependence() {
        let solver = DualCoordinateDescent(matrix: data.matrix, labels: data.labels, tolerance: 0.1, maxIterations: 1000)
        let lanes = (0..<3).map { DualCoordinateDescent.Lane(positiveClass: Int32($0), positiveCost: 1, negativeCost: 2) }
        let together = solver.solve(lanes: lanes, seed: 9)
        let alone = solver.solve(lanes: [lanes[1]], seed: 9)
        let middle = (0..<data.matrix.columns).map { together.weights[$0 * 3 + 1] }
        #expect(middle == alone.weights && together.bias[1] == alone.bias[0])
        #expect(together.iterations[1] == alone.iterations[0])
    }

    /// Rows visited lane by lane (in every pass with a limit of all the lanes, once shrinking has
    /// taken them out of most lanes with a limit of 3) and rows visited with SIMD passes over
    /// every lane (a limit of −1): the same iterates, bit for bit. 20 lanes, so that the SIMD
    /// passes run the AVX kernels where the processor has them.
    @Test("SVM rows visited lane by lane give the SIMD passes' solution bit for bit", arguments: [3, 20])
    func laneByLaneVisits(limit: Int) {
        let classes = 20
        let problem = separableProblem(rows: 600, classes: classes, seed: 21)
        let lanes = (0..<classes).map { DualCoordinateDescent.Lane(positiveClass: Int32($0), positiveCost: 1, negativeCost: 0.5) }
        func solve(limit: Int) -> DualCoordinateDescent.Solution {
            DualCoordinateDescent(matrix: problem.matrix, labels: problem.labels, tolerance: 0.01, maxIterations: 1000,
                                  laneListLimit: limit).solve(lanes: lanes, seed: 4)
        }
        /// How many of the values differ in some bit.
        func differing(_ one: [Float], _ other: [Float]) -> Int {
            one.count == other.count ? zip(one, other).filter { $0.bitPattern != $1.bitPattern }.count : max(one.count, other.count)
        }
        let simd = solve(limit: -1), listed = solve(limit: limit)
        #expect(simd.iterations.allSatisfy { $0 > 2 })
        #expect(differing(listed.weights, simd.weights) == 0)
        #expect(differing(listed.bias, simd.bias) == 0)
        #expect(differing(listed.alpha, simd.alpha) == 0)
        #expect(listed.iterations == simd.iterations)
    }

    /// Every row of this problem also has a column of its own, with value 1, and a column that
    /// it shares with one other row, with value 0.5; one column stays unused. The passes run on
    /// the columns two rows or more use, and the solution gives the others `αᵢ yᵢ xᵢⱼ`.
    @Test("Columns that one row alone uses: w = Σ αᵢyᵢxᵢ over every column, and the optimum's conditions hold")
    func soleColumns() {
        let base = separableProblem(rows: 90, classes: 3, seed: 8)
        let rows = base.matrix.rows, unused = base.matrix.columns, columns = unused + 1 + rows + rows / 2
        var matrix = SparseMatrix(columns: columns)
        base.matrix.forEachRow(in: 0..<rows) { row, indices, values in
            matrix.appendRow(indices: Array(indices) + [Int32(unused + 1 + row), Int32(unused + 1 + rows + row / 2)],
                             values: Array(values) + [1, 0.5])
        }
        var uses = [Int](repeating: 0, count: columns)
        for column in matrix.indices { uses[Int(column)] += 1 }
        let solver = DualCoordinateDescent(matrix: matrix, labels: base.labels, tolerance: 1e-4, maxIterations: 10_000)
        #expect(solver.matrix.columns == uses.filter { $0 >= 2 }.count)
        // A column that one row uses holds one entry, which the passes leave out.
        let soleEntries = uses.filter { $0 == 1 }.count
        #expect(soleEntries >= rows)
        #expect(solver.matrix.nonzeros + soleEntries == matrix.nonzeros)
        let lanes = (0..<3).map { DualCoordinateDescent.Lane(positiveClass: Int32($0), positiveCost: 1, negativeCost: 0.5) }
        let solution = solver.solve(lanes: lanes, seed: 3)
        #expect(solution.weights.count == columns * 3)
        var expected = [Double](repeating: 0, count: columns * 3)
        var margins = [Double](repeating: 0, count: rows * 3)
        matrix.forEachRow(in: 0..<rows) { row, indices, values in
            for lane in 0..<3 {
                let sign: Double = base.labels[row] == Int32(lane) ? 1 : -1
                for (column, value) in zip(indices, values) {
                    expected[Int(column) * 3 + lane] += Double(solution.alpha[row * 3 + lane]) * sign * Double(value)
                }
            }
        }
        for (index, weight) in solution.weights.enumerated() { #expect(close(weight, expected[index], 1e-4)) }
        #expect(solution.weights[unused * 3..<(unused + 1) * 3].allSatisfy { $0 == 0 })
        // At the optimum the projected gradient of every dual variable is 0: G = 0 where α > 0,
        // G ≥ 0 where α = 0, with G = y(w·x + b) − 1 + α/(2C) over all the columns.
        var worst: Double = 0
        matrix.forEachRow(in: 0..<rows) { row, indices, values in
            for lane in 0..<3 {
                let positive = base.labels[row] == Int32(lane)
                var margin = Double(solution.bias[lane])
                for (column, value) in zip(indices, values) { margin += Double(solution.weights[Int(column) * 3 + lane]) * Double(value) }
                margins[row * 3 + lane] = margin
                let alpha = Double(solution.alpha[row * 3 + lane])
                let gradient = (positive ? margin : -margin) - 1 + alpha * (positive ? 0.5 : 1)
                worst = max(worst, alpha > 0 ? abs(gradient) : max(0, -gradient))
            }
        }
        #expect(worst < 1e-3, "largest projected gradient \(worst)")
        #expect(solution.alpha.contains { $0 > 0 })
    }

    /// Every column belongs to one row (two of its own each), so no column is left for the
    /// passes: only the bias and the folded terms remain, for one lane (two classes) and three.
    @Test("An SVM whose every column one row alone uses trains, with each weight αᵢyᵢxᵢⱼ", arguments: [2, 3])
    func onlySoleColumns(classes: Int) throws {
        let rows = 30
        var matrix = SparseMatrix(columns: 2 * rows)
        for row in 0..<rows { matrix.appendRow(indices: [Int32(2 * row), Int32(2 * row + 1)], values: [1, 0.5]) }
        let labels = (0..<rows).map { Int32($0 % classes) }
        let problem = TrainingProblem(matrix: matrix, labels: labels, classCount: classes)
        let fit = try LinearSVM(c: 1, threads: 2).fit(problem)
        #expect(fit.model.accuracy(on: problem) == 1)
        let lanes = classes == 2 ? 1 : classes
        for row in 0..<rows {
            for lane in 0..<lanes {
                // With two classes the one problem has class 1 positive, and class 1's weights are its own.
                let positiveClass = classes == 2 ? 1 : lane
                let signed = fit.dual[row * lanes + lane] * (labels[row] == Int32(positiveClass) ? 1 : -1)
                for (offset, value) in [(0, Float(1)), (1, Float(0.5))] {
                    #expect(close(weight(fit.model, 2 * row + offset, positiveClass), Double(signed * value)))
                }
            }
        }
    }

    /// The separable problem's columns spread over 4,096: column c becomes 50 c + 7.
    var spread: TrainingProblem {
        var matrix = SparseMatrix(columns: 4096)
        data.matrix.forEachRow(in: 0..<data.matrix.rows) { _, indices, values in
            matrix.appendRow(indices: indices.map { $0 * 50 + 7 }, values: Array(values))
        }
        return TrainingProblem(matrix: matrix, labels: data.labels, classCount: data.classCount)
    }

    /// The separable problem's column that column `column` of ``spread`` holds, if any.
    func spreadSource(_ column: Int) -> Int? {
        let offset = column - 7
        return offset % 50 == 0 && offset / 50 < data.matrix.columns ? offset / 50 : nil
    }

    @Test("Unused columns get zero weight, and the used ones what the compact problem gives")
    func compactedTraining() throws {
        let narrow = try LogisticRegression(threads: 1).train(data)
        let model = try LogisticRegression(threads: 1).train(spread)
        for column in 0..<4096 {
            for lane in 0..<data.classCount {
                let expected = spreadSource(column).map { weight(narrow, $0, lane) } ?? 0
                #expect(weight(model, column, lane) == expected)
            }
        }
    }

    @Test("A warm start from the solution stops at once")
    func warmStart() throws {
        let trainer = LogisticRegression(tolerance: 1e-4, threads: 1)
        let cold = try trainer.fit(data)
        let warm = try trainer.fit(data, initial: cold.model)
        #expect(warm.optimization.iterations < cold.optimization.iterations)
        #expect(abs(warm.optimization.value - cold.optimization.value) <= 1e-4 * cold.optimization.value)
    }

    @Test("A warm start over more columns starts each from the column of the same feature, and is handed over once")
    func warmStartOverMoreColumns() throws {
        // The refit's case: the spread problem starts from the model trained on the separable
        // one; its other columns are features that model did not have.
        let wide = spread
        let trainer = LogisticRegression(tolerance: 1e-4, threads: 1)
        let narrow = try trainer.fit(data)
        let cold = try trainer.fit(wide)
        let sourceColumns = (0..<4096).map { Int32(spreadSource($0) ?? -1) }
        let start = LogisticRegression.WarmStart(narrow.model, sourceColumns: sourceColumns)
        let warm = try trainer.fit(wide, start: start)
        #expect(warm.optimization.iterations < cold.optimization.iterations)
        #expect(abs(warm.optimization.value - cold.optimization.value) <= 1e-4 * cold.optimization.value)
        #expect(start.take() == nil)
        // A start that does not fit the problem's columns is refused.
        let misfit = LogisticRegression.WarmStart(narrow.model, sourceColumns: Array(sourceColumns.prefix(100)))
        #expect(throws: MLKitError.self) { try trainer.fit(wide, start: misfit) }
    }
}

// MARK: - Class weights

/// Two classes that share feature 0; class 0 has more examples. Feature 0 alone is ambiguous.
@Suite("Class weights", .onOwnThreads)
struct ClassWeightTests {
    static func data(upweighting weight: Float) -> TrainingProblem {
        let rows: [[Int32: Float]] = [[0: 1, 1: 1], [0: 1, 1: 1], [0: 1, 2: 1], [0: 1], [0: 1, 3: 1], [0: 1]]
        return problem(rows, labels: [0, 0, 0, 0, 1, 1], columns: 4, classWeights: [1, weight])
    }

    @Test("Up-weighting class 1 raises its score on an ambiguous document", arguments: defaultTrainers.indices)
    func shift(trainer: Int) throws {
        var ambiguous = SparseMatrix(columns: 4)
        ambiguous.appendRow(indices: [0], values: [1])
        func margin(_ weight: Float) throws -> Float {
            let scores = try defaultTrainers[trainer].train(Self.data(upweighting: weight)).scores(for: ambiguous)
            return scores[1] - scores[0]
        }
        let plain = try margin(1), weighted = try margin(5)
        #expect(weighted > plain, "\(defaultTrainers[trainer].name): \(plain) → \(weighted)")
    }

    @Test("With strong enough weights the ambiguous document changes class", arguments: defaultTrainers.indices)
    func flip(trainer: Int) throws {
        var ambiguous = SparseMatrix(columns: 4)
        ambiguous.appendRow(indices: [0], values: [1])
        let plain = try defaultTrainers[trainer].train(Self.data(upweighting: 1)).predictions(for: ambiguous)
        let weighted = try defaultTrainers[trainer].train(Self.data(upweighting: 10)).predictions(for: ambiguous)
        #expect(plain == [0] && weighted == [1], "\(defaultTrainers[trainer].name)")
    }
}

// MARK: - Calibration

@Suite("Probability calibration", .onOwnThreads)
struct CalibrationTests {
    let training = noisyProblem(rows: 400, seed: 1)
    let validation = noisyProblem(rows: 200, seed: 2)
    let test = noisyProblem(rows: 400, seed: 3)

    @Test("Platt-scaled SVM probabilities lie in (0, 1), sum to 1 and beat the uniform guess")
    func plattSVM() throws {
        let model = try LinearSVM(threads: 1).train(training, validation: validation)
        guard case .platt(let a, _) = model.probability else { Issue.record("expected Platt scaling"); return }
        #expect(a.allSatisfy { $0 < 0 })
        let probabilities = model.probabilities(for: test.matrix)
        #expect(probabilities.allSatisfy { $0 > 0 && $0 < 1 })
        for row in 0..<test.matrix.rows {
            #expect(abs(probabilities[2 * row] + probabilities[2 * row + 1] - 1) < 1e-5)
        }
        let nll = ProbabilityCalibration.meanNegativeLogLikelihood(of: model, on: test)
        #expect(nll < log(2.0), "NLL \(nll)")
    }

    @Test("With more classes, an SVM keeps whichever of Platt and a softmax temperature labels more held-out examples correctly")
    func svmMappingChoice() {
        // Three classes, 600 rows: the true class's decision value is highest but for noise.
        // `shift` is added to class 0's values, which makes the plain largest value pick class 0
        // too often; Platt's per-class offsets undo it.
        func scores(shift: Float, seed: UInt64) -> (scores: [Float], labels: [Int32]) {
            var generator = SplitMix64(seed: seed)
            var scores: [Float] = [], labels: [Int32] = []
            for row in 0..<600 {
                let label = Int32(row % 3)
                labels.append(label)
                for lane in 0..<3 {
                    let noise = Float.random(in: -1...1, using: &generator)
                    scores.append((lane == label ? 0.5 : -0.5) + noise + (lane == 0 ? shift : 0))
                }
            }
            return (scores, labels)
        }
        for (shift, seed) in [(Float(0), UInt64(5)), (0, 6), (1.5, 7), (1.5, 8)] {
            let (values, labels) = scores(shift: shift, seed: seed)
            let chosen = ProbabilityCalibration.fitSVMMapping(scores: values, labels: labels, classes: 3)
            let platt = ProbabilityCalibration.fitPlatt(scores: values, labels: labels, classes: 3)
            let softmax = LinearModel.ProbabilityMapping.softmax(
                temperature: ProbabilityCalibration.fitTemperature(scores: values, labels: labels, classes: 3))
            let counts = [chosen, platt, softmax].map {
                ProbabilityCalibration.correctCount($0, scores: values, labels: labels, classes: 3)
            }
            #expect(counts[0] == max(counts[1], counts[2]), "shift \(shift): \(counts)")
            #expect(chosen == (counts[2] > counts[1] ? softmax : platt), "shift \(shift): Platt on a tie")
            if shift > 0 {
                #expect(chosen == platt, "Platt's offsets undo the shift: \(counts)")
            }
        }
        // Two classes: always Platt, whose one sigmoid never changes the label.
        let binary = ProbabilityCalibration.fitSVMMapping(scores: [1, -1, -1, 1, 0.5, -0.5], labels: [0, 1, 0],
                                                          classes: 2)
        guard case .platt = binary else { Issue.record("expected Platt scaling for two classes"); return }
    }

    @Test("Platt's method recovers a known sigmoid")
    func plattRecovery() {
        // Decision values on a grid, with exactly P(positive | f) = 1 / (1 + exp(−2f + 0.5)) of
        // each value's 1,000 examples positive.
        var values: [Double] = [], positives: [Bool] = []
        for step in -20...20 {
            let f = Double(step) / 10
            let positiveCount = Int((1000 / (1 + exp(-2 * f + 0.5))).rounded())
            for index in 0..<1000 {
                values.append(f)
                positives.append(index < positiveCount)
            }
        }
        let (a, b) = ProbabilityCalibration.plattParameters(decisionValues: values, positives: positives)
        #expect(abs(a + 2) < 0.02 && abs(b - 0.5) < 0.02, "a \(a), b \(b)")
    }

    @Test("A temperature fitted on many scores is the same on one thread and on several")
    func temperatureThreads() {
        // 4,000 rows of 30 classes (120,000 scores, enough to go parallel), the labelled class
        // usually but not always on top.
        var generator = SplitMix64(seed: 11)
        let classes = 30, rows = 4_000
        var scores = (0..<(rows * classes)).map { _ in generator.nextFloat() * 4 - 2 }
        let labels = (0..<rows).map { Int32($0 % classes) }
        for row in 0..<rows where row % 3 != 0 { scores[row * classes + Int(labels[row])] += 2.5 }
        let one = ProbabilityCalibration.fitTemperature(scores: scores, labels: labels, classes: classes, threads: 1)
        for threads in [2, 3, 0] {
            let many = ProbabilityCalibration.fitTemperature(scores: scores, labels: labels, classes: classes,
                                                             threads: threads)
            #expect(many.bitPattern == one.bitPattern, "\(threads) threads: \(many) against \(one)")
        }
        #expect(one > 0 && one < 10)
    }

    @Test("Platt's fit on many values starts from a subsample's: the same optimum, in fewer evaluations")
    func plattSubsampledStart() {
        // 12,000 steep, noisy decision values, as an SVM gives on its own training rows: the
        // positives' values mostly above 1, the negatives' mostly below -1.
        var generator = SplitMix64(seed: 5)
        var values: [Double] = [], positives: [Bool] = []
        for index in 0..<12_000 {
            let positive = index % 9 == 0
            let noise = Double(generator.nextFloat()) * 2.4 - 1.2
            values.append((positive ? 1.3 : -1.1) + noise)
            positives.append(positive)
        }
        #expect(values.count >= ProbabilityCalibration.subsampledStartThreshold)
        let (targets, prior) = ProbabilityCalibration.plattTargets(positives)
        let fromPrior = ProbabilityCalibration.plattNewton(decisionValues: values, targets: targets, start: prior)
        let (a, b) = ProbabilityCalibration.plattParameters(decisionValues: values, positives: positives)
        #expect(abs(a - fromPrior.parameters.a) <= 1e-6 * abs(fromPrior.parameters.a), "a \(a) against \(fromPrior.parameters.a)")
        #expect(abs(b - fromPrior.parameters.b) <= 1e-6 * abs(fromPrior.parameters.b), "b \(b) against \(fromPrior.parameters.b)")
        // The work, in evaluations over all the values: the subsample's count as about a
        // twelfth each.
        let sample = Array(stride(from: 0, to: values.count, by: values.count / 1024))
        let start = ProbabilityCalibration.plattNewton(decisionValues: sample.map { values[$0] },
                                                       targets: sample.map { targets[$0] }, start: prior)
        let fromStart = ProbabilityCalibration.plattNewton(decisionValues: values, targets: targets,
                                                           start: start.parameters)
        #expect(fromStart.parameters.a == a && fromStart.parameters.b == b)
        let sampleShare = Double(sample.count) / Double(values.count)
        let work = Double(fromStart.evaluations) + Double(start.evaluations) * sampleShare
        #expect(work < 0.6 * Double(fromPrior.evaluations),
                "\(fromStart.evaluations) + \(start.evaluations) on the subsample, against \(fromPrior.evaluations)")
    }

    @Test("A fitted temperature lowers the validation NLL of naive Bayes")
    func temperature() throws {
        let plain = try MultinomialNaiveBayes().train(training)
        let fitted = try MultinomialNaiveBayes().train(training, validation: validation)
        guard case .softmax(let temperature) = fitted.probability else { Issue.record("expected softmax"); return }
        #expect(temperature > 0 && temperature != 1)
        let before = ProbabilityCalibration.meanNegativeLogLikelihood(of: plain, on: validation)
        let after = ProbabilityCalibration.meanNegativeLogLikelihood(of: fitted, on: validation)
        #expect(after < before)
        #expect(ProbabilityCalibration.meanNegativeLogLikelihood(of: fitted, on: test) < log(2.0))
    }
}

// MARK: - Reference headlines

@Suite("The reference headlines", .onOwnThreads)
struct ReferenceHeadlineTests {
    @Test("Every trainer labels the two sample headlines as Create ML does", .needsSeedArtifacts("texts.json"),
          arguments: defaultTrainers.indices)
    func sampleHeadlines(trainer: Int) throws {
        let dataset = try Reference.chapterHeadlines()
        let configuration = FeaturizerConfiguration(indexing: .vocabulary(.init()))
        let featurizer = try Featurizer(fitting: dataset.examples.map(\.text), configuration: configuration)
        let labels = dataset.examples.map { Int32(dataset.labels.firstIndex(of: $0.label)!) }
        let training = TrainingProblem(matrix: featurizer.matrix(for: dataset.examples.map(\.text)), labels: labels,
                                       classCount: dataset.labels.count)
        let model = try defaultTrainers[trainer].train(training)
        let headlines = ["Snap users drop for first time, but revenue climbs",
                         "President Donald Trump is approving a new law"]
        let predicted = model.predictions(for: featurizer.matrix(for: headlines)).map { dataset.labels[Int($0)] }
        #expect(predicted == ["Tech", "US Politics"], "\(defaultTrainers[trainer].name)")
    }
}
