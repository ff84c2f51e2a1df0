/// `oneHotEncoder`: a category (a string or an int64) to an array of zeros with a 1 at the
/// category's position, or, with `outputSparse`, to a dictionary `{position: 1}`. An unknown
/// category is an error, or all zeros with `IgnoreUnknown`.
struct OneHotEncoderStage: Sendable {
    enum Categories: Sendable {
        case strings([String: Int])
        case integers([Int64: Int])
    }

    let categories: Categories
    let count: Int
    let sparseOutput: Bool
    let ignoresUnknown: Bool

    static func compile(_ spec: SpecOneHotEncoder, _ context: StageContext) throws -> CompiledStage {
        let (_, input) = try context.singleInput()
        try context.requireOutputs(1)
        let categories: Categories
        let count: Int
        switch spec.categoryType {
        case .stringCategories(let vector):
            guard input.kind == .string else { throw context.invalid("stringCategories", "its input is \(input.kind), not a string") }
            categories = .strings(try positions(vector.vector, context))
            count = vector.vector.count
        case .int64Categories(let vector):
            guard input.kind == .int64 else { throw context.invalid("int64Categories", "its input is \(input.kind), not an int64") }
            categories = .integers(try positions(vector.vector, context))
            count = vector.vector.count
        case nil: throw context.invalid("categoryType", "it has no categories")
        }
        let ignoresUnknown: Bool
        switch spec.handleUnknown {
        case .errorOnUnknown: ignoresUnknown = false
        case .ignoreUnknown: ignoresUnknown = true
        case .UNRECOGNIZED(let code): throw context.invalid("handleUnknown", "unknown setting \(code)")
        }
        let stage = OneHotEncoderStage(categories: categories, count: count, sparseOutput: spec.outputSparse,
                                       ignoresUnknown: ignoresUnknown)
        return CompiledStage(operation: .oneHotEncoder(stage), inputSlots: [input.slot],
                             outputKinds: [spec.outputSparse ? .int64Dictionary : .array(count)])
    }

    private static func positions<Key: Hashable>(_ keys: [Key], _ context: StageContext) throws -> [Key: Int] {
        var positions: [Key: Int] = [:]
        for (position, key) in keys.enumerated() where positions.updateValue(position, forKey: key) != nil {
            throw context.invalid("categories", "the category \"\(key)\" is listed twice")
        }
        return positions
    }

    func run(_ input: Value?) throws -> Value {
        let position: Int?
        switch (categories, try required(input)) {
        case (.strings(let positions), .string(let category)):
            position = positions[category]
            if position == nil && !ignoresUnknown { throw StepFailure("unknown category \"\(category)\"") }
        case (.integers(let positions), .int64(let category)):
            position = positions[category]
            if position == nil && !ignoresUnknown { throw StepFailure("unknown category \(category)") }
        case (_, let other):
            throw StepFailure("expected a category, got \(other.typeName)")
        }
        if sparseOutput { return .int64Dictionary(position.map { [Int64($0): 1] } ?? [:]) }
        return .vector(Vector(dimension: count, indices: position.map { [$0] } ?? [], values: position == nil ? [] : [1]))
    }
}

/// `categoricalMapping`: a string to an int64 or an int64 to a string, by a table; an unknown
/// input gives the default value, or is an error when there is none.
struct CategoricalMappingStage: Sendable {
    enum Mapping: Sendable {
        case stringToInteger([String: Int64], default: Int64?)
        case integerToString([Int64: String], default: String?)
    }

    let mapping: Mapping

    static func compile(_ spec: SpecCategoricalMapping, _ context: StageContext) throws -> CompiledStage {
        let (_, input) = try context.singleInput()
        try context.requireOutputs(1)
        let mapping: Mapping
        let produced: Kind
        switch spec.mappingType {
        case .stringToInt64Map(let map):
            guard input.kind == .string else { throw context.invalid("stringToInt64Map", "its input is \(input.kind), not a string") }
            var fallback: Int64?
            switch spec.valueOnUnknown {
            case .int64Value(let value): fallback = value
            case .strValue: throw context.invalid("strValue", "a string default for a mapping to int64")
            case nil: fallback = nil
            }
            mapping = .stringToInteger(map.map, default: fallback)
            produced = .int64
        case .int64ToStringMap(let map):
            guard input.kind == .int64 else { throw context.invalid("int64ToStringMap", "its input is \(input.kind), not an int64") }
            var fallback: String?
            switch spec.valueOnUnknown {
            case .strValue(let value): fallback = value
            case .int64Value: throw context.invalid("int64Value", "an int64 default for a mapping to strings")
            case nil: fallback = nil
            }
            mapping = .integerToString(map.map, default: fallback)
            produced = .string
        case nil: throw context.invalid("mappingType", "it has no mapping")
        }
        return CompiledStage(operation: .categoricalMapping(CategoricalMappingStage(mapping: mapping)),
                             inputSlots: [input.slot], outputKinds: [produced])
    }

    func run(_ input: Value?) throws -> Value {
        switch (mapping, try required(input)) {
        case (.stringToInteger(let map, let fallback), .string(let key)):
            guard let value = map[key] ?? fallback else { throw StepFailure("unknown input \"\(key)\" and no default") }
            return .int64(value)
        case (.integerToString(let map, let fallback), .int64(let key)):
            guard let value = map[key] ?? fallback else { throw StepFailure("unknown input \(key) and no default") }
            return .string(value)
        case (_, let other):
            throw StepFailure("unexpected input: \(other.typeName)")
        }
    }
}

/// `arrayFeatureExtractor`: the elements at the given positions of an array: a number for one
/// position (unless the output is declared as an array), an array for several.
struct ArrayFeatureExtractorStage: Sendable {
    let positions: [Int]
    let givesNumber: Bool

    static func compile(_ spec: SpecArrayFeatureExtractor, _ context: StageContext) throws -> CompiledStage {
        let (_, input) = try context.singleInput()
        try context.requireOutputs(1)
        guard case .array(let dimension) = input.kind else { throw context.invalid(nil, "its input is \(input.kind), not an array") }
        guard !spec.extractIndex.isEmpty else { throw context.invalid("extractIndex", "it extracts nothing") }
        let limit = UInt64(dimension ?? Limits.maximumArrayElements)
        if let bad = spec.extractIndex.firstIndex(where: { $0 >= limit }) {
            throw context.invalid("extractIndex", "position \(spec.extractIndex[bad]) is outside \(input.kind)")
        }
        let positions = spec.extractIndex.map { Int($0) }
        let givesNumber: Bool
        switch context.outputs[0].kind {
        case .array: givesNumber = false
        default: givesNumber = positions.count == 1
        }
        return CompiledStage(operation: .arrayFeatureExtractor(ArrayFeatureExtractorStage(positions: positions, givesNumber: givesNumber)),
                             inputSlots: [input.slot], outputKinds: [givesNumber ? .double : .array(positions.count)])
    }

    func run(_ input: Value?) throws -> Value {
        guard case .vector(let vector) = try required(input) else { throw StepFailure("its input is not an array") }
        if let bad = positions.first(where: { $0 >= vector.dimension }) {
            throw StepFailure("position \(bad) is outside its input of \(vector.dimension) elements")
        }
        let values: [Double]
        switch vector.storage {
        case .dense(let dense): values = positions.map { dense[$0] }
        case .sparse(let indices, let stored):
            var byIndex: [Int: Double] = [:]
            for (index, value) in zip(indices, stored) { byIndex[index] = value }
            values = positions.map { byIndex[$0] ?? 0 }
        }
        return givesNumber ? .double(values[0]) : .vector(Vector(dense: values))
    }
}

/// `identity`: each input, unchanged, as the output in the same position.
enum IdentityStage {
    static func compile(_ context: StageContext) throws -> CompiledStage {
        let description = context.description
        guard description.input.count == context.outputs.count, !description.input.isEmpty else {
            throw context.invalid(nil, "\(description.input.count) inputs for \(context.outputs.count) outputs")
        }
        var slots: [Int] = []
        var kinds: [Kind] = []
        for feature in description.input {
            let binding = try PlanCompiler.resolve(feature, in: context.scope, stage: context.name)
            slots.append(binding.slot)
            kinds.append(binding.kind)
        }
        return CompiledStage(operation: .identity, inputSlots: slots, outputKinds: kinds)
    }
}
