/// `dictVectorizer`: a dictionary to an array, each key at its position in the vocabulary.
///
/// Keys that are not in the vocabulary are ignored (as Core ML does). The output is sparse:
/// it holds the dictionary's entries, in the vocabulary's order, never the vocabulary-sized
/// array.
struct DictVectorizerStage: Sendable {
    /// Each key's position.
    enum Vocabulary: Sendable {
        case strings(KeyTable)
        case integers([Int64: Int])
    }

    let vocabulary: Vocabulary
    /// The vocabulary's size: the output array's.
    let dimension: Int

    static func compile(_ spec: SpecDictVectorizer, _ context: StageContext) throws -> CompiledStage {
        let (_, input) = try context.singleInput()
        try context.requireOutputs(1)
        let stage: DictVectorizerStage
        switch spec.map {
        case .stringToIndex(let keys):
            guard input.kind == .stringDictionary else {
                throw context.invalid("stringToIndex", "its input is \(input.kind), but its keys are strings")
            }
            let table: KeyTable
            do {
                table = try KeyTable(keys.vector)
            } catch {
                throw context.invalid("vocabulary", "the key \"\(keys.vector[error.second])\" is listed twice (entries "
                                      + "\(error.first) and \(error.second))")
            }
            stage = DictVectorizerStage(vocabulary: .strings(table), dimension: keys.vector.count)
        case .int64ToIndex(let keys):
            guard input.kind == .int64Dictionary else {
                throw context.invalid("int64ToIndex", "its input is \(input.kind), but its keys are int64")
            }
            stage = DictVectorizerStage(vocabulary: .integers(try positions(keys.vector, context)), dimension: keys.vector.count)
        case nil:
            throw context.invalid(nil, "it has no vocabulary (stringToIndex or int64ToIndex)")
        }
        // Declared either as the array or, as Apple's converters write it, as a dictionary from
        // positions to values.
        let produced: Kind = context.outputs[0].kind == .int64Dictionary ? .int64Dictionary : .array(stage.dimension)
        return CompiledStage(operation: .dictVectorizer(stage), inputSlots: [input.slot], outputKinds: [produced])
    }

    /// Each key's position; a key listed twice is an error, since the array would be ambiguous.
    private static func positions<Key: Hashable>(_ keys: [Key], _ context: StageContext) throws -> [Key: Int] {
        var positions: [Key: Int] = [:]
        positions.reserveCapacity(keys.count)
        for (position, key) in keys.enumerated() {
            if let earlier = positions.updateValue(position, forKey: key) {
                throw context.invalid("vocabulary", "the key \"\(key)\" is listed twice (entries \(earlier) and \(position))")
            }
        }
        return positions
    }

    func run(_ input: Value?) throws -> Value {
        var entries: [(index: Int, value: Double)] = []
        switch (vocabulary, try required(input)) {
        case (.strings(let table), .stringDictionary(let dictionary)):
            entries.reserveCapacity(dictionary.count)
            for (key, value) in dictionary {
                if let position = table.position(of: key) { entries.append((Int(position), value)) }
            }
        case (.integers(let positions), .int64Dictionary(let dictionary)):
            entries.reserveCapacity(dictionary.count)
            for (key, value) in dictionary {
                if let position = positions[key] { entries.append((position, value)) }
            }
        case (_, let other):
            throw StepFailure("expected a dictionary, got \(other.typeName)")
        }
        // A dictionary's order changes from process to process; in the vocabulary's order, the
        // sums of later stages come out the same to the last bit every time.
        entries.sort { $0.index < $1.index }
        return .vector(Vector(dimension: dimension, indices: entries.map(\.index), values: entries.map(\.value)))
    }
}
