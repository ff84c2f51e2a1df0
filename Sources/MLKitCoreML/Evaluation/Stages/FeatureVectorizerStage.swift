/// `featureVectorizer`: several features side by side in one array, in the order of its input
/// list. A number takes one element, an array its elements, and a dictionary with int64 keys
/// (a sparse array, as a dictionary vectorizer may declare its output) the declared number.
struct FeatureVectorizerStage: Sendable {
    /// Each input's size, in order.
    let dimensions: [Int]
    /// The output's size.
    let dimension: Int

    static func compile(_ spec: SpecFeatureVectorizer, _ context: StageContext) throws -> CompiledStage {
        try context.requireOutputs(1)
        guard !spec.inputList.isEmpty else { throw context.invalid("inputList", "it lists no inputs") }
        var slots: [Int] = []
        var dimensions: [Int] = []
        var total = 0
        for (position, column) in spec.inputList.enumerated() {
            let field = "inputList[\(position)] '\(column.inputColumn)'"
            guard let binding = context.scope[column.inputColumn] else {
                throw context.invalid(field, "is neither an input of the model nor produced by an earlier stage")
            }
            guard column.inputDimensions >= 1, column.inputDimensions <= UInt64(Limits.maximumArrayElements) else {
                throw context.invalid(field, "inputDimensions \(column.inputDimensions) is outside 1...\(Limits.maximumArrayElements)")
            }
            let declared = Int(column.inputDimensions)
            switch binding.kind {
            case .double, .int64:
                guard declared == 1 else { throw context.invalid(field, "a number has 1 dimension, not \(declared)") }
            case .array(let actual):
                if let actual, actual != declared {
                    throw context.invalid(field, "inputDimensions is \(declared), but \(binding.kind) flows into it")
                }
            case .int64Dictionary:
                break
            case .string, .stringDictionary:
                throw context.invalid(field, "cannot put \(binding.kind) into an array")
            }
            slots.append(binding.slot)
            dimensions.append(declared)
            total += declared
            guard total <= Limits.maximumArrayElements else {
                throw context.invalid("inputList", "the inputs add up to more than \(Limits.maximumArrayElements) elements")
            }
        }
        let stage = FeatureVectorizerStage(dimensions: dimensions, dimension: total)
        return CompiledStage(operation: .featureVectorizer(stage), inputSlots: slots, outputKinds: [.array(total)])
    }

    func run(_ inputs: [Value?]) throws -> Value {
        var sparse = false
        for input in inputs {
            switch input {
            case .vector(let vector)?: if case .sparse = vector.storage { sparse = true }
            case .int64Dictionary?: sparse = true
            default: break
            }
        }
        if !sparse {
            var values: [Double] = []
            values.reserveCapacity(dimension)
            for (position, input) in inputs.enumerated() {
                try append(input, position: position) { values.append($1) }
            }
            return .vector(Vector(dense: values))
        }
        var indices: [Int] = []
        var values: [Double] = []
        var offset = 0
        for (position, input) in inputs.enumerated() {
            try append(input, position: position) { index, value in
                indices.append(offset + index)
                values.append(value)
            }
            offset += dimensions[position]
        }
        return .vector(Vector(dimension: dimension, indices: indices, values: values))
    }

    /// Calls `body` with the index (within the input) and value of each stored element of
    /// input `position`.
    private func append(_ input: Value?, position: Int, _ body: (Int, Double) -> Void) throws {
        let dimension = dimensions[position]
        switch try required(input, "input \(position + 1)") {
        case .double(let value): body(0, value)
        case .int64(let value): body(0, Double(value))
        case .vector(let vector):
            guard vector.dimension == dimension else {
                throw StepFailure("input \(position + 1) has \(vector.dimension) elements, not the \(dimension) declared")
            }
            vector.forEachStored(body)
        case .int64Dictionary(let dictionary):
            for (key, value) in dictionary {
                guard key >= 0 && key < Int64(dimension) else {
                    throw StepFailure("input \(position + 1): key \(key) is outside 0..<\(dimension)")
                }
                body(Int(key), value)
            }
        case let other:
            throw StepFailure("input \(position + 1): cannot put \(other.typeName) into an array")
        }
    }
}
