/// A value a Core ML model takes or returns, by the feature types of the format.
public enum CoreMLFeatureValue: Sendable, Hashable {
    /// A 64-bit integer.
    case int64(Int64)
    /// A double-precision number.
    case double(Double)
    /// A string.
    case string(String)
    /// A multi-dimensional array of numbers, flattened in row-major order, with its shape.
    case multiArray(values: [Double], shape: [Int])
    /// A dictionary from strings to numbers: word counts, or a classifier's probabilities.
    case stringDictionary([String: Double])
    /// A dictionary from integers to numbers.
    case int64Dictionary([Int64: Double])

    /// The feature type's name, as an error message gives it: `a string`, `an array of 3`.
    var typeName: String {
        switch self {
        case .int64: return "an int64"
        case .double: return "a double"
        case .string: return "a string"
        case .multiArray(let values, _): return "an array of \(values.count)"
        case .stringDictionary: return "a dictionary with string keys"
        case .int64Dictionary: return "a dictionary with int64 keys"
        }
    }
}

/// A value as it flows between the stages of a model: arrays stay sparse while every stage
/// can keep them so, and are expanded only for a stage that needs every element.
enum Value: Sendable {
    case int64(Int64)
    case double(Double)
    case string(String)
    case vector(Vector)
    case stringDictionary([String: Double])
    case int64Dictionary([Int64: Double])

    /// The value as the public type: a sparse vector is expanded.
    var featureValue: CoreMLFeatureValue {
        switch self {
        case .int64(let value): return .int64(value)
        case .double(let value): return .double(value)
        case .string(let value): return .string(value)
        case .vector(let vector): return .multiArray(values: vector.denseValues(), shape: vector.shape)
        case .stringDictionary(let value): return .stringDictionary(value)
        case .int64Dictionary(let value): return .int64Dictionary(value)
        }
    }

    /// The value's type as messages name it (`an array of 3`), without expanding a sparse array.
    var typeName: String {
        if case .vector(let vector) = self { return "an array of \(vector.dimension)" }
        return featureValue.typeName
    }

    /// The value of a public feature value.
    init(_ value: CoreMLFeatureValue) {
        switch value {
        case .int64(let value): self = .int64(value)
        case .double(let value): self = .double(value)
        case .string(let value): self = .string(value)
        case .multiArray(let values, let shape): self = .vector(Vector(dense: values, shape: shape))
        case .stringDictionary(let value): self = .stringDictionary(value)
        case .int64Dictionary(let value): self = .int64Dictionary(value)
        }
    }
}

/// A one-dimensional array of doubles (a multi-array, flattened), dense or sparse.
///
/// A sparse vector holds distinct indices, in any order, with their values; every other
/// element is 0. A text classifier's features stay sparse from the dictionary vectorizer to the
/// linear model, so a prediction never builds the vocabulary-sized vector the model describes.
struct Vector: Sendable {
    /// The elements as stored.
    enum Storage: Sendable {
        case dense([Double])
        case sparse(indices: [Int], values: [Double])
    }

    /// The number of elements.
    let dimension: Int
    /// The shape the array is declared with; `[dimension]` unless the input said otherwise.
    let shape: [Int]
    /// The elements.
    var storage: Storage

    /// A dense vector.
    init(dense values: [Double], shape: [Int]? = nil) {
        dimension = values.count
        self.shape = shape ?? [values.count]
        storage = .dense(values)
    }

    /// A sparse vector of `dimension` elements; `indices` are distinct and below `dimension`.
    init(dimension: Int, indices: [Int], values: [Double]) {
        self.dimension = dimension
        shape = [dimension]
        storage = .sparse(indices: indices, values: values)
    }

    /// Every element, the zeros of a sparse vector included.
    /// - Complexity: O(``dimension``).
    func denseValues() -> [Double] {
        switch storage {
        case .dense(let values): return values
        case .sparse(let indices, let values):
            var dense = [Double](repeating: 0, count: dimension)
            for (index, value) in zip(indices, values) { dense[index] = value }
            return dense
        }
    }

    /// Calls `body` with the index and value of every element that may be non-zero.
    @inline(__always)
    func forEachStored(_ body: (Int, Double) -> Void) {
        switch storage {
        case .dense(let values):
            for index in values.indices { body(index, values[index]) }
        case .sparse(let indices, let values):
            for position in indices.indices { body(indices[position], values[position]) }
        }
    }
}
