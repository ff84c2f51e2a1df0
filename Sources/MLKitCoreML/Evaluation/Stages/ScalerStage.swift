/// `scaler`: `scale · (x + shift)`, element by element; a single shift or scale applies to
/// every element. Without shifts a sparse array stays sparse.
struct ScalerStage: Sendable {
    /// Empty (0), one value for every element, or one per element.
    let shift: [Double]
    /// Empty (1), one value for every element, or one per element.
    let scale: [Double]
    /// Whether every shift is 0, so that zeros stay zeros.
    let keepsZeros: Bool
    /// The input's size when the parameters fix it.
    let dimension: Int?

    static func compile(_ spec: SpecScaler, _ context: StageContext) throws -> CompiledStage {
        let (_, input) = try context.singleInput()
        try context.requireOutputs(1)
        var dimension: Int?
        switch input.kind {
        case .double, .int64: dimension = 1
        case .array(let size): dimension = size
        default: throw context.invalid(nil, "cannot scale \(input.kind)")
        }
        for (field, values) in [("shiftValue", spec.shiftValue), ("scaleValue", spec.scaleValue)] where values.count > 1 {
            if let known = dimension, known != values.count {
                throw context.invalid(field, "\(values.count) values for \(input.kind)")
            }
            dimension = values.count
        }
        try requireFinite(spec.shiftValue, "shiftValue", context)
        try requireFinite(spec.scaleValue, "scaleValue", context)
        let stage = ScalerStage(shift: spec.shiftValue, scale: spec.scaleValue,
                                keepsZeros: spec.shiftValue.allSatisfy { $0 == 0 }, dimension: dimension)
        let produced: Kind = input.kind == .int64 || input.kind == .double ? .double : .array(dimension)
        return CompiledStage(operation: .scaler(stage), inputSlots: [input.slot], outputKinds: [produced])
    }

    @inline(__always)
    private func shift(_ index: Int) -> Double { shift.isEmpty ? 0 : shift[shift.count == 1 ? 0 : index] }

    @inline(__always)
    private func scale(_ index: Int) -> Double { scale.isEmpty ? 1 : scale[scale.count == 1 ? 0 : index] }

    func run(_ input: Value?, denseLimit: Int) throws -> Value {
        switch try required(input) {
        case .double(let value): return .double(scale(0) * (value + shift(0)))
        case .int64(let value): return .double(scale(0) * (Double(value) + shift(0)))
        case .vector(let vector):
            if let dimension, vector.dimension != dimension {
                throw StepFailure("its input has \(vector.dimension) elements, not \(dimension)")
            }
            if case .sparse(let indices, var values) = vector.storage, keepsZeros {
                for position in values.indices { values[position] *= scale(indices[position]) }
                return .vector(Vector(dimension: vector.dimension, indices: indices, values: values))
            }
            guard vector.dimension <= denseLimit else { throw StepFailure(.invalidModel, expansionFailure(vector.dimension, denseLimit)) }
            var values = vector.denseValues()
            for index in values.indices { values[index] = scale(index) * (values[index] + shift(index)) }
            return .vector(Vector(dense: values, shape: vector.shape))
        case let other:
            throw StepFailure("cannot scale \(other.typeName)")
        }
    }
}

/// `normalizer`: an array divided by its norm, the largest absolute value (`LMax`), the sum of
/// absolute values (`L1`) or the Euclidean length (`L2`). An array of zeros stays as it is.
struct NormalizerStage: Sendable {
    enum Norm: Sendable {
        case maximum, l1, l2
    }

    let norm: Norm

    static func compile(_ spec: SpecNormalizer, _ context: StageContext) throws -> CompiledStage {
        let (_, input) = try context.singleInput()
        try context.requireOutputs(1)
        guard case .array = input.kind else { throw context.invalid(nil, "cannot normalize \(input.kind)") }
        let norm: Norm
        switch spec.normType {
        case .lmax: norm = .maximum
        case .l1: norm = .l1
        case .l2: norm = .l2
        case .UNRECOGNIZED(let code): throw context.invalid("normType", "unknown norm \(code)")
        }
        return CompiledStage(operation: .normalizer(NormalizerStage(norm: norm)), inputSlots: [input.slot],
                             outputKinds: [input.kind])
    }

    func run(_ input: Value?) throws -> Value {
        guard case .vector(var vector) = try required(input) else { throw StepFailure("its input is not an array") }
        var total = 0.0
        switch norm {
        case .maximum: vector.forEachStored { total = max(total, abs($1)) }
        case .l1: vector.forEachStored { total += abs($1) }
        case .l2:
            vector.forEachStored { total += $1 * $1 }
            total = total.squareRoot()
        }
        guard total > 0 else { return .vector(vector) }
        switch vector.storage {
        case .dense(var values):
            for index in values.indices { values[index] /= total }
            vector.storage = .dense(values)
        case .sparse(let indices, var values):
            for index in values.indices { values[index] /= total }
            vector.storage = .sparse(indices: indices, values: values)
        }
        return .vector(vector)
    }
}

/// The message of a stage that would expand a sparse array past the limit.
func expansionFailure(_ dimension: Int, _ limit: Int) -> String {
    "it would expand a sparse array of \(dimension) elements, more than the \(limit) this model's size allows"
}

/// Checks that parameters are finite numbers.
func requireFinite(_ values: [Double], _ field: String, _ context: StageContext) throws {
    if let position = values.firstIndex(where: { !$0.isFinite }) {
        throw context.invalid(field, "value \(position) is \(values[position]), not a finite number")
    }
}
