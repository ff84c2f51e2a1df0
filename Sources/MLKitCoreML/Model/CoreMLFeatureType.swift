/// A feature as a model describes it: its name, what it holds, and its type.
public struct CoreMLFeatureDescription: Sendable, Hashable {
    /// The feature's name, by which features flow between a pipeline's stages.
    public let name: String
    /// The model's description of the feature.
    public let shortDescription: String
    /// Its type.
    public let type: CoreMLFeatureType
    /// Whether a prediction may leave it out.
    public let isOptional: Bool
}

/// The type of a feature, as Core ML's format names it.
public enum CoreMLFeatureType: Sendable, Hashable, CustomStringConvertible {
    /// A 64-bit integer.
    case int64
    /// A double-precision number.
    case double
    /// A string.
    case string
    /// A multi-dimensional array of the given shape (empty when the model leaves it open) and
    /// element type (`Double`, `Float32`, `Int32`, …).
    case multiArray(shape: [Int], elementType: String)
    /// A dictionary from strings to numbers.
    case stringDictionary
    /// A dictionary from 64-bit integers to numbers.
    case int64Dictionary
    /// An image, a sequence, a state, or a type the description leaves out: mlkit shows these
    /// by name and does not evaluate them.
    case other(String)

    /// As Xcode shows it: `String`, `Dictionary (String → Double)`, `MultiArray (Double 16043)`.
    public var description: String {
        switch self {
        case .int64: return "Int64"
        case .double: return "Double"
        case .string: return "String"
        case .multiArray(let shape, let elementType):
            return "MultiArray (\(elementType)\(shape.isEmpty ? "" : " " + shape.map(String.init).joined(separator: " × ")))"
        case .stringDictionary: return "Dictionary (String → Double)"
        case .int64Dictionary: return "Dictionary (Int64 → Double)"
        case .other(let name): return name
        }
    }
}

extension CoreMLFeatureType {
    /// The type a specification's feature type names.
    init(_ type: SpecFeatureType) {
        switch type.type {
        case .int64Type: self = .int64
        case .doubleType: self = .double
        case .stringType: self = .string
        case .multiArrayType(let array):
            let elementType: String
            switch array.dataType {
            case .double: elementType = "Double"
            case .float32: elementType = "Float32"
            case .float16: elementType = "Float16"
            case .int32: elementType = "Int32"
            case .int8: elementType = "Int8"
            case .invalidArrayDataType, .UNRECOGNIZED: elementType = "unknown element type"
            }
            self = .multiArray(shape: array.shape.map { Int(clamping: $0) }, elementType: elementType)
        case .dictionaryType(let dictionary):
            switch dictionary.keyType {
            case .int64KeyType: self = .int64Dictionary
            case .stringKeyType: self = .stringDictionary
            case nil: self = .other("Dictionary (no key type)")
            }
        case .imageType: self = .other("Image")
        case .sequenceType: self = .other("Sequence")
        case .stateType: self = .other("State")
        case nil: self = .other("no type")
        }
    }
}

extension CoreMLFeatureDescription {
    /// The description of a specification's feature.
    init(_ feature: SpecFeatureDescription) {
        name = feature.name
        shortDescription = feature.shortDescription
        type = CoreMLFeatureType(feature.type)
        isOptional = feature.type.isOptional
    }
}

/// What a feature holds, as the evaluator checks it between stages.
enum Kind: Sendable, Equatable, CustomStringConvertible {
    case int64
    case double
    case string
    /// An array of this many elements, `nil` when only a prediction's input tells.
    case array(Int?)
    case stringDictionary
    case int64Dictionary

    /// `a string`, `an array of 16043`, `a dictionary with string keys`.
    var description: String {
        switch self {
        case .int64: return "an int64"
        case .double: return "a double"
        case .string: return "a string"
        case .array(let dimension): return dimension.map { "an array of \($0)" } ?? "an array"
        case .stringDictionary: return "a dictionary with string keys"
        case .int64Dictionary: return "a dictionary with int64 keys"
        }
    }

    /// Whether a feature declared as `self` can take a value of kind `produced`.
    func accepts(_ produced: Kind) -> Bool {
        switch (self, produced) {
        case (.array(let declared), .array(let actual)):
            guard let declared, let actual else { return true }
            return declared == actual
        default: return self == produced
        }
    }

    /// The more precise of two kinds that accept each other: a known array size over an open one.
    func refined(by other: Kind) -> Kind {
        if case .array(nil) = self { return other }
        return self
    }

    /// The kind of a described type, or `nil` for a type mlkit does not evaluate.
    /// - Throws: ``CoreMLError`` (`malformedModel`) for an array shape that is negative or
    ///   whose size overflows.
    init?(_ type: CoreMLFeatureType, feature: String) throws {
        switch type {
        case .int64: self = .int64
        case .double: self = .double
        case .string: self = .string
        case .stringDictionary: self = .stringDictionary
        case .int64Dictionary: self = .int64Dictionary
        case .multiArray(let shape, _):
            guard !shape.isEmpty else { self = .array(nil); return }
            var size = 1
            for extent in shape {
                guard extent > 0 else { self = .array(nil); return }
                let (product, overflow) = size.multipliedReportingOverflow(by: extent)
                guard !overflow, product <= Limits.maximumArrayElements else {
                    throw CoreMLError(.malformedModel, "feature '\(feature)': its shape \(shape) has more than "
                                      + "\(Limits.maximumArrayElements) elements")
                }
                size = product
            }
            self = .array(size)
        case .other: return nil
        }
    }
}
