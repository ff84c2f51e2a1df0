import Foundation
import SwiftProtobuf

/// Reads `.mlmodel` bytes into a specification, with errors that say what is wrong.
enum SpecificationReader {
    /// Decoding options: unknown fields (those of the types mlkit does not evaluate, such as a
    /// neural network's weights) are dropped rather than kept; nesting is capped by
    /// swift-protobuf's default depth limit.
    static let options: BinaryDecodingOptions = {
        var options = BinaryDecodingOptions()
        options.discardUnknownFields = true
        return options
    }()

    /// Decodes a model.
    /// - Parameters:
    ///   - bytes: The protobuf bytes of a `Model` message.
    ///   - what: What the bytes are, for messages (`the file`, `entry 'model1/coremldata.bin'`).
    /// - Throws: ``CoreMLError`` with code `malformedModel`.
    static func model(_ bytes: Data, what: String = "the file") throws -> SpecModel {
        guard bytes.count <= Limits.maximumModelSize else {
            throw CoreMLError(.malformedModel, "\(what) has \(bytes.count) bytes, more than the \(Limits.maximumModelSize) "
                              + "a Core ML model can hold")
        }
        let model: SpecModel
        do {
            model = try SpecModel(serializedBytes: bytes, options: options)
        } catch {
            throw CoreMLError(.malformedModel, "\(what) is not a Core ML model, or is truncated or damaged: \(reason(error))")
        }
        guard model.specificationVersion > 0 || model.type != nil else {
            throw CoreMLError(.malformedModel, "\(what) is not a Core ML model: it has neither a specification version "
                              + "nor a model type")
        }
        return model
    }

    /// Decodes a model description (a pipeline node of a compiled archive).
    static func description(_ bytes: Data, what: String) throws -> SpecModelDescription {
        do {
            return try SpecModelDescription(serializedBytes: bytes, options: options)
        } catch {
            throw CoreMLError(.malformedModel, "\(what): its model description is damaged: \(reason(error))")
        }
    }

    /// A protobuf decoding error in words.
    static func reason(_ error: any Error) -> String {
        switch error {
        case BinaryDecodingError.truncated: return "the protobuf ends in the middle of a field"
        case BinaryDecodingError.malformedProtobuf: return "the protobuf is malformed"
        case BinaryDecodingError.invalidUTF8: return "a string is not valid UTF-8"
        case BinaryDecodingError.messageDepthLimit: return "messages nest deeper than the limit of 100"
        default: return String(describing: error)
        }
    }
}
