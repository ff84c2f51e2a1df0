/// `imputer`: a missing value replaced by a fixed one. A value is missing when an optional input
/// is left out, when it equals the replace value, or, for numbers without a replace value (or
/// with NaN as the replace value), when it is NaN; in an array each missing element takes the
/// imputed array's element.
struct ImputerStage: Sendable {
    enum Imputed: Sendable {
        case double(Double)
        case int64(Int64)
        case string(String)
        case doubles([Double])
        case stringDictionary([String: Double])
        case int64Dictionary([Int64: Double])
    }

    enum Replaced: Sendable {
        case double(Double)
        case int64(Int64)
        case string(String)
    }

    let imputed: Imputed
    let replaced: Replaced?

    static func compile(_ spec: SpecImputer, _ context: StageContext) throws -> CompiledStage {
        let (_, input) = try context.singleInput()
        try context.requireOutputs(1)
        let imputed: Imputed
        let expected: Kind
        switch spec.imputedValue {
        case .imputedDoubleValue(let value): (imputed, expected) = (.double(value), .double)
        case .imputedInt64Value(let value): (imputed, expected) = (.int64(value), .int64)
        case .imputedStringValue(let value): (imputed, expected) = (.string(value), .string)
        case .imputedDoubleArray(let vector): (imputed, expected) = (.doubles(vector.vector), .array(vector.vector.count))
        case .imputedInt64Array(let vector): (imputed, expected) = (.doubles(vector.vector.map(Double.init)), .array(vector.vector.count))
        case .imputedStringDictionary(let map): (imputed, expected) = (.stringDictionary(map.map), .stringDictionary)
        case .imputedInt64Dictionary(let map): (imputed, expected) = (.int64Dictionary(map.map), .int64Dictionary)
        case nil: throw context.invalid("imputedValue", "it has no value to impute")
        }
        guard expected.accepts(input.kind) else {
            throw context.invalid("imputedValue", "it imputes \(expected) for an input that is \(input.kind)")
        }
        var replaced: Replaced?
        switch spec.replaceValue {
        case .replaceDoubleValue(let value): replaced = .double(value)
        case .replaceInt64Value(let value): replaced = .int64(value)
        case .replaceStringValue(let value): replaced = .string(value)
        case nil: replaced = nil
        }
        return CompiledStage(operation: .imputer(ImputerStage(imputed: imputed, replaced: replaced)),
                             inputSlots: [input.slot], outputKinds: [expected.refined(by: input.kind)])
    }

    /// Whether a number is missing.
    private func isMissing(_ value: Double) -> Bool {
        switch replaced {
        case .double(let marker) where !marker.isNaN: return value == marker
        case .int64(let marker): return value == Double(marker)
        default: return value.isNaN
        }
    }

    func run(_ input: Value?, denseLimit: Int) throws -> Value {
        switch (imputed, input) {
        case (.double(let value), nil): return .double(value)
        case (.int64(let value), nil): return .int64(value)
        case (.string(let value), nil): return .string(value)
        case (.doubles(let values), nil): return .vector(Vector(dense: values))
        case (.stringDictionary(let value), nil): return .stringDictionary(value)
        case (.int64Dictionary(let value), nil): return .int64Dictionary(value)
        case (.double(let imputed), .double(let value)?): return .double(isMissing(value) ? imputed : value)
        case (.int64(let imputed), .int64(let value)?):
            if case .int64(let marker) = replaced, marker == value { return .int64(imputed) }
            return .int64(value)
        case (.string(let imputed), .string(let value)?):
            if case .string(let marker) = replaced, marker == value { return .string(imputed) }
            return .string(value)
        case (.doubles(let imputed), .vector(let vector)?):
            guard vector.dimension == imputed.count else {
                throw StepFailure("its input has \(vector.dimension) elements, not \(imputed.count)")
            }
            guard vector.dimension <= denseLimit else { throw StepFailure(.invalidModel, expansionFailure(vector.dimension, denseLimit)) }
            var values = vector.denseValues()
            for index in values.indices where isMissing(values[index]) { values[index] = imputed[index] }
            return .vector(Vector(dense: values, shape: vector.shape))
        case (_, let value?):
            return value
        }
    }
}
