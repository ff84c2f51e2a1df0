import Foundation

/// How every model file's JSON header is written and read: sorted keys, ISO 8601 dates, and
/// non-finite floats as the strings `inf`, `-inf` and `nan`.
enum ModelHeaderCoding {
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return decoder
    }

    /// Encodes a header; the header types hold only strings, numbers and arrays, so this
    /// cannot fail.
    static func encode<Header: Encodable>(_ header: Header) -> Data {
        do { return try encoder.encode(header) } catch { preconditionFailure("a model header failed to encode: \(error)") }
    }

    /// Decodes a header.
    /// - Throws: ``MLKitError`` with code `malformedData`, naming the JSON path and the problem.
    static func decode<Header: Decodable>(_ type: Header.Type, from data: Data) throws -> Header {
        do {
            return try decoder.decode(type, from: data)
        } catch let error as DecodingError {
            throw MLKitError(.malformedData, "the model's header is invalid: \(error.summary)")
        }
    }

    /// The `kind` field of a header, which tells a classifier's file from a tagger's.
    static func kind(of header: Data) throws -> String {
        struct Kind: Decodable { let kind: String }
        return try decode(Kind.self, from: header).kind
    }
}

extension DecodingError {
    /// The field path and the problem, for error messages.
    var summary: String {
        func path(_ context: Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch self {
        case .keyNotFound(let key, let context): return "missing field \(path(context)).\(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "field \(path(context)): \(context.debugDescription)"
        @unknown default: return "\(self)"
        }
    }
}
