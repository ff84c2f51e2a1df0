/// A model compiled for evaluation: its stages in order, reading and writing numbered slots
/// instead of looking features up by name.
struct Plan: Sendable {
    /// A feature the model takes.
    struct Input: Sendable {
        let name: String
        let slot: Int
        let kind: Kind
        let isOptional: Bool
    }

    /// A feature the model returns.
    struct Output: Sendable {
        let name: String
        let slot: Int
        let kind: Kind
    }

    let inputs: [Input]
    let outputs: [Output]
    let steps: [Step]
    let slotCount: Int
    /// The most elements a stage may expand a sparse array to (``Limits/denseExpansion(forFileLength:)``).
    let denseLimit: Int

    /// Runs the stages on inputs already checked by ``slots(for:)``.
    func run(_ slots: inout [Value?]) throws {
        try run(&slots, through: steps.count)
    }

    /// Runs the stages before step `end`.
    func run(_ slots: inout [Value?], through end: Int) throws {
        for step in steps[..<end] {
            do {
                try step.operation.run(step, &slots, denseLimit: denseLimit)
            } catch let error as StepFailure {
                throw CoreMLError(error.code, "\(step.stage): \(error.reason)")
            }
        }
    }

    /// The slots with the inputs in place, each checked against its declared kind.
    /// - Throws: ``CoreMLError`` (`invalidInput`) for a missing input or one of the wrong type.
    func slots(for values: [String: CoreMLFeatureValue]) throws -> [Value?] {
        var slots = [Value?](repeating: nil, count: slotCount)
        for input in inputs {
            guard let value = values[input.name] else {
                if input.isOptional { continue }
                throw CoreMLError(.invalidInput, "missing input '\(input.name)' (\(input.kind))")
            }
            slots[input.slot] = try Self.check(Value(value), as: input.kind, feature: "input '\(input.name)'")
        }
        return slots
    }

    /// The outputs, by name, once the stages have run.
    /// - Throws: ``CoreMLError`` (`invalidModel`) for a sparse array output that would expand
    ///   past ``denseLimit``: its size comes from the file, not from the input.
    func outputValues(_ slots: [Value?]) throws -> [String: CoreMLFeatureValue] {
        var result: [String: CoreMLFeatureValue] = [:]
        for output in outputs {
            guard let value = slots[output.slot] else { continue }
            let converted = Self.convert(value, to: output.kind)
            if case .vector(let vector) = converted, case .sparse = vector.storage, vector.dimension > denseLimit {
                throw CoreMLError(.invalidModel, "output '\(output.name)': \(expansionFailure(vector.dimension, denseLimit))")
            }
            result[output.name] = converted.featureValue
        }
        return result
    }

    /// `value` if it is of kind `kind`; an int64 where a double is declared becomes a double.
    static func check(_ value: Value, as kind: Kind, feature: String) throws -> Value {
        switch (kind, value) {
        case (.int64, .int64), (.double, .double), (.string, .string), (.stringDictionary, .stringDictionary),
             (.int64Dictionary, .int64Dictionary):
            return value
        case (.double, .int64(let integer)):
            return .double(Double(integer))
        case (.array(let dimension), .vector(let vector)):
            if let dimension, vector.dimension != dimension {
                throw CoreMLError(.invalidInput, "\(feature): expected an array of \(dimension) elements, got \(vector.dimension)")
            }
            return value
        default:
            throw CoreMLError(.invalidInput, "\(feature): expected \(kind), got \(value.typeName)")
        }
    }

    /// `value` in the form its declared kind names: a sparse vector that a stage declares as
    /// a dictionary with int64 keys becomes that dictionary.
    static func convert(_ value: Value, to kind: Kind) -> Value {
        guard case .int64Dictionary = kind, case .vector(let vector) = value else { return value }
        var dictionary: [Int64: Double] = [:]
        vector.forEachStored { dictionary[Int64($0)] = $1 }
        return .int64Dictionary(dictionary)
    }
}

/// One stage of a plan, and the slots it reads and writes.
struct Step: Sendable {
    /// The stage, as messages name it: `stage 1.2 (featureVectorizer)`.
    let stage: String
    let operation: Operation
    let inputs: [Int]
    let outputs: [Int]
}

/// A stage's failure while it runs, which the plan reports with the stage's name.
struct StepFailure: Error {
    let code: CoreMLError.Code
    let reason: String

    /// A failure of the stage's input (`invalidInput`).
    init(_ reason: String) {
        self.init(.invalidInput, reason)
    }

    init(_ code: CoreMLError.Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }
}

/// What a stage does.
enum Operation: Sendable {
    case dictVectorizer(DictVectorizerStage)
    case featureVectorizer(FeatureVectorizerStage)
    case scaler(ScalerStage)
    case normalizer(NormalizerStage)
    case glmClassifier(GLMClassifierStage)
    case glmRegressor(GLMRegressorStage)
    case oneHotEncoder(OneHotEncoderStage)
    case imputer(ImputerStage)
    case categoricalMapping(CategoricalMappingStage)
    case arrayFeatureExtractor(ArrayFeatureExtractorStage)
    case identity

    func run(_ step: Step, _ slots: inout [Value?], denseLimit: Int) throws {
        switch self {
        case .dictVectorizer(let stage): slots[step.outputs[0]] = try stage.run(slots[step.inputs[0]])
        case .featureVectorizer(let stage): slots[step.outputs[0]] = try stage.run(step.inputs.map { slots[$0] })
        case .scaler(let stage): slots[step.outputs[0]] = try stage.run(slots[step.inputs[0]], denseLimit: denseLimit)
        case .normalizer(let stage): slots[step.outputs[0]] = try stage.run(slots[step.inputs[0]])
        case .glmClassifier(let stage):
            let (label, probabilities) = try stage.run(slots[step.inputs[0]])
            if let slot = stage.labelOutput { slots[step.outputs[slot]] = label }
            if let slot = stage.probabilitiesOutput { slots[step.outputs[slot]] = probabilities }
        case .glmRegressor(let stage): slots[step.outputs[0]] = try stage.run(slots[step.inputs[0]])
        case .oneHotEncoder(let stage): slots[step.outputs[0]] = try stage.run(slots[step.inputs[0]])
        case .imputer(let stage): slots[step.outputs[0]] = try stage.run(slots[step.inputs[0]], denseLimit: denseLimit)
        case .categoricalMapping(let stage): slots[step.outputs[0]] = try stage.run(slots[step.inputs[0]])
        case .arrayFeatureExtractor(let stage): slots[step.outputs[0]] = try stage.run(slots[step.inputs[0]])
        case .identity:
            for (input, output) in zip(step.inputs, step.outputs) { slots[output] = slots[input] }
        }
    }
}

/// The value in an input slot of a stage, or a failure naming the missing feature.
@inline(__always)
func required(_ value: Value?, _ what: String = "its input") throws -> Value {
    guard let value else { throw StepFailure("\(what) is missing") }
    return value
}
