import Foundation

/// The linear part of a generalized linear model: `z_r = offset_r + Σ_i w_r[i] · x_i` for each
/// of its rows, over the stored elements of a sparse input only.
struct LinearScores: Sendable {
    /// The number of rows.
    let rows: Int
    /// The length of each row: the input's size.
    let columns: Int
    /// Feature-major: the weights of input element `i` are `weights[i * rows ..< (i + 1) * rows]`,
    /// so a sparse input reads one contiguous run per element it holds.
    let weights: [Double]
    let offsets: [Double]

    /// Checks and transposes rows of weights.
    /// - Throws: `invalidModel` naming the stage and the row at fault.
    init(rows: [[Double]], offsets: [Double], inputDimension: Int?, _ context: StageContext) throws {
        guard !rows.isEmpty else { throw context.invalid("weights", "it has no rows") }
        guard offsets.count == rows.count else {
            throw context.invalid("offset", "\(offsets.count) offsets for \(rows.count) rows of weights")
        }
        let columns = rows[0].count
        if let inputDimension, inputDimension != columns {
            throw context.invalid("weights", "rows of \(columns) weights for an input of \(inputDimension) elements")
        }
        for (index, row) in rows.enumerated() {
            guard row.count == columns else {
                throw context.invalid("weights", "row \(index) has \(row.count) weights, row 0 has \(columns)")
            }
            try requireFinite(row, "weights[\(index)]", context)
        }
        try requireFinite(offsets, "offset", context)
        var weights = [Double](repeating: 0, count: columns * rows.count)
        for (row, values) in rows.enumerated() {
            for (column, value) in values.enumerated() { weights[column * rows.count + row] = value }
        }
        self.rows = rows.count
        self.columns = columns
        self.weights = weights
        self.offsets = offsets
    }

    /// The scores of an input: an array of ``columns`` elements, or a number when there is one column.
    func scores(_ input: Value) throws -> [Double] {
        var scores = offsets
        switch input {
        case .vector(let vector):
            guard vector.dimension == columns else {
                throw StepFailure("its input has \(vector.dimension) elements, not the \(columns) of its weights")
            }
            weights.withUnsafeBufferPointer { weights in
                scores.withUnsafeMutableBufferPointer { scores in
                    vector.forEachStored { column, value in
                        guard value != 0 else { return }
                        let base = column * rows
                        for row in 0..<rows { scores[row] += weights[base + row] * value }
                    }
                }
            }
        case .double(let value) where columns == 1:
            for row in 0..<rows { scores[row] += weights[row] * value }
        case .int64(let value) where columns == 1:
            for row in 0..<rows { scores[row] += weights[row] * Double(value) }
        case let other:
            throw StepFailure("its input is \(other.typeName), not an array of \(columns)")
        }
        return scores
    }

    /// The input's declared size, for a stage of one input: 1 for a number.
    static func inputDimension(_ kind: Kind, _ context: StageContext) throws -> Int? {
        switch kind {
        case .array(let dimension): return dimension
        case .double, .int64: return 1
        default: throw context.invalid(nil, "its input is \(kind), not an array")
        }
    }
}

/// The logistic function σ(z) = 1 / (1 + e^−z).
@inline(__always)
func logistic(_ z: Double) -> Double { 1 / (1 + exp(-z)) }

/// The standard normal distribution function Φ(z).
@inline(__always)
func normalDistribution(_ z: Double) -> Double { 0.5 * erfc(-z / 2.0.squareRoot()) }

/// `glmClassifier`: a linear classifier with Core ML's semantics, as coremltools' tests against
/// Core ML establish them:
///
/// - `ReferenceClass` has K − 1 rows, and p = softmax([0, z₁ … z_{K−1}]), the first label being
///   the reference;
/// - `OneVsRest` with K = 2 has one row, and p(labels[1]) = σ(z); with K > 2 it has K rows, and
///   p_k = σ(z_k) / Σ_j σ(z_j);
/// - `Probit` (two labels only) uses Φ(z) in place of σ; a missing transform means `Logit`.
///
/// The label is the most probable one (the first of equals).
struct GLMClassifierStage: Sendable {
    enum Encoding: Sendable {
        case referenceClass, oneVsRest
    }

    enum Labels: Sendable {
        case strings([String])
        case integers([Int64])

        var count: Int {
            switch self {
            case .strings(let labels): return labels.count
            case .integers(let labels): return labels.count
            }
        }

        /// Label `index` as a value.
        func value(_ index: Int) -> Value {
            switch self {
            case .strings(let labels): return .string(labels[index])
            case .integers(let labels): return .int64(labels[index])
            }
        }

        /// The labels as text, for messages and for mlkit's text classifier.
        var names: [String] {
            switch self {
            case .strings(let labels): return labels
            case .integers(let labels): return labels.map(String.init)
            }
        }
    }

    let linear: LinearScores
    let encoding: Encoding
    let probit: Bool
    let labels: Labels
    /// The position among the stage's outputs of the predicted label and of the probabilities.
    let labelOutput: Int?
    let probabilitiesOutput: Int?

    static func compile(_ spec: SpecGLMClassifier, _ context: StageContext) throws -> CompiledStage {
        let (_, input) = try context.singleInput()
        let labels: Labels
        switch spec.classLabels {
        case .stringClassLabels(let vector): labels = .strings(vector.vector)
        case .int64ClassLabels(let vector): labels = .integers(vector.vector)
        case nil: throw context.invalid("classLabels", "the classifier has no labels")
        }
        let count = labels.count
        guard count >= 2 else { throw context.invalid("classLabels", "\(count) label\(count == 1 ? "" : "s"); a classifier needs 2 or more") }
        guard Set(labels.names).count == count else { throw context.invalid("classLabels", "a label is listed twice") }
        let encoding: Encoding
        switch spec.classEncoding {
        case .referenceClass: encoding = .referenceClass
        case .oneVsRest: encoding = .oneVsRest
        case .UNRECOGNIZED(let code): throw context.invalid("classEncoding", "unknown encoding \(code)")
        }
        let probit: Bool
        switch spec.postEvaluationTransform {
        case .logit: probit = false
        case .probit: probit = true
        case .UNRECOGNIZED(let code): throw context.invalid("postEvaluationTransform", "unknown transform \(code)")
        }
        if probit && count != 2 {
            throw context.invalid("postEvaluationTransform", "Probit takes two labels, not \(count)")
        }
        let expectedRows = encoding == .referenceClass || count == 2 ? count - 1 : count
        guard spec.weights.count == expectedRows else {
            let encodingName = encoding == .referenceClass ? "ReferenceClass" : "OneVsRest"
            throw context.invalid("weights", "\(spec.weights.count) rows for \(count) labels with \(encodingName), "
                                  + "which needs \(expectedRows)")
        }
        let linear = try LinearScores(rows: spec.weights.map(\.value), offsets: spec.offset,
                                      inputDimension: try LinearScores.inputDimension(input.kind, context), context)
        // The outputs: the predicted label and the probabilities, by the names the description
        // gives them, else by their types.
        let labelKind: Kind = { if case .strings = labels { return .string } else { return .int64 } }()
        let probabilitiesKind: Kind = { if case .strings = labels { return .stringDictionary } else { return .int64Dictionary } }()
        let description = context.description
        func position(named name: String, else kind: Kind) -> Int? {
            if !name.isEmpty { return context.outputs.firstIndex { $0.name == name } }
            return context.outputs.firstIndex { $0.kind == kind }
        }
        let labelOutput = position(named: description.predictedFeatureName, else: labelKind)
        let probabilitiesOutput = position(named: description.predictedProbabilitiesName, else: probabilitiesKind)
        guard labelOutput != nil || probabilitiesOutput != nil else {
            throw context.invalid(nil, "it declares neither a predicted label nor probabilities among its outputs")
        }
        var kinds: [Kind] = []
        for (position, output) in context.outputs.enumerated() {
            switch position {
            case labelOutput: kinds.append(labelKind)
            case probabilitiesOutput: kinds.append(probabilitiesKind)
            default: throw context.invalid(nil, "output '\(output.name)' is neither the predicted label nor the probabilities")
            }
        }
        let stage = GLMClassifierStage(linear: linear, encoding: encoding, probit: probit, labels: labels,
                                       labelOutput: labelOutput, probabilitiesOutput: probabilitiesOutput)
        return CompiledStage(operation: .glmClassifier(stage), inputSlots: [input.slot], outputKinds: kinds)
    }

    /// The probability of each label, in the order of ``labels``.
    func probabilities(_ input: Value) throws -> [Double] {
        let z = try linear.scores(input)
        var result = [Double](repeating: 0, count: labels.count)
        z.withUnsafeBufferPointer { z in
            result.withUnsafeMutableBufferPointer { probabilities(fromScores: z, into: $0) }
        }
        return result
    }

    /// Writes the probability of each label for the scores `z` (one per row) into `output`.
    func probabilities(fromScores z: UnsafeBufferPointer<Double>, into output: UnsafeMutableBufferPointer<Double>) {
        let count = labels.count
        if count == 2 {
            // One row with either encoding: p(labels[1]) = σ(z) or Φ(z).
            let positive = probit ? normalDistribution(z[0]) : logistic(z[0])
            output[0] = 1 - positive
            output[1] = positive
            return
        }
        switch encoding {
        case .referenceClass:
            // softmax([0, z₁ … z_{K−1}])
            var largest = 0.0
            for value in z { largest = max(largest, value) }
            output[0] = exp(-largest)
            for row in 0..<z.count { output[row + 1] = exp(z[row] - largest) }
        case .oneVsRest:
            // σ(z_k) / Σ_j σ(z_j), from log σ(z) = −log(1 + e^−z) so that very negative scores
            // keep their ratios instead of all becoming 0.
            var largest = -Double.infinity
            for row in 0..<count {
                let value = z[row]
                output[row] = value >= 0 ? -log1p(exp(-value)) : value - log1p(exp(value))
                largest = max(largest, output[row])
            }
            for row in 0..<count { output[row] = exp(output[row] - largest) }
        }
        var total = 0.0
        for index in 0..<count { total += output[index] }
        for index in 0..<count { output[index] /= total }
    }

    /// The index of the most probable label (the first of equals).
    static func argmax<C: RandomAccessCollection<Double>>(_ probabilities: C) -> Int where C.Index == Int {
        var best = 0
        for index in probabilities.indices where probabilities[index] > probabilities[best] { best = index }
        return best
    }

    func run(_ input: Value?) throws -> (label: Value, probabilities: Value) {
        let probabilities = try self.probabilities(try required(input))
        let label = labels.value(Self.argmax(probabilities))
        switch labels {
        case .strings(let names):
            var dictionary: [String: Double] = [:]
            dictionary.reserveCapacity(names.count)
            for (name, probability) in zip(names, probabilities) { dictionary[name] = probability }
            return (label, .stringDictionary(dictionary))
        case .integers(let names):
            var dictionary: [Int64: Double] = [:]
            dictionary.reserveCapacity(names.count)
            for (name, probability) in zip(names, probabilities) { dictionary[name] = probability }
            return (label, .int64Dictionary(dictionary))
        }
    }
}

/// `glmRegressor`: `z = offset + w · x` for each row, then the identity, σ or Φ; one row gives
/// a number (unless the output is declared as an array), several an array.
struct GLMRegressorStage: Sendable {
    enum Transform: Sendable {
        case none, logit, probit
    }

    let linear: LinearScores
    let transform: Transform
    /// Whether the output is a number rather than an array.
    let givesNumber: Bool

    static func compile(_ spec: SpecGLMRegressor, _ context: StageContext) throws -> CompiledStage {
        let (_, input) = try context.singleInput()
        try context.requireOutputs(1)
        let transform: Transform
        switch spec.postEvaluationTransform {
        case .noTransform: transform = .none
        case .logit: transform = .logit
        case .probit: transform = .probit
        case .UNRECOGNIZED(let code): throw context.invalid("postEvaluationTransform", "unknown transform \(code)")
        }
        let linear = try LinearScores(rows: spec.weights.map(\.value), offsets: spec.offset,
                                      inputDimension: try LinearScores.inputDimension(input.kind, context), context)
        let givesNumber: Bool
        switch context.outputs[0].kind {
        case .array: givesNumber = false
        default: givesNumber = linear.rows == 1
        }
        let stage = GLMRegressorStage(linear: linear, transform: transform, givesNumber: givesNumber)
        return CompiledStage(operation: .glmRegressor(stage), inputSlots: [input.slot],
                             outputKinds: [givesNumber ? .double : .array(linear.rows)])
    }

    func run(_ input: Value?) throws -> Value {
        var values = try linear.scores(try required(input))
        for index in values.indices {
            switch transform {
            case .none: break
            case .logit: values[index] = logistic(values[index])
            case .probit: values[index] = normalDistribution(values[index])
            }
        }
        return givesNumber ? .double(values[0]) : .vector(Vector(dense: values))
    }
}
