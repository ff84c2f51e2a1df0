import Foundation

/// The JSON coding of the server's API: ISO 8601 dates, with or without fractional seconds.
enum WireFormat {
    /// A decoder for the server's answers.
    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = parseDate(text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                        debugDescription: "not an ISO 8601 date: \(text)"))
            }
            return date
        }
        return decoder
    }()

    /// An encoder for request bodies and the cache's files.
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(formatDate(date))
        }
        return encoder
    }()

    /// Decodes `type` from a server's answer.
    /// - Throws: ``ModelCollectionError/Code/invalidResponse``, naming `subject` and the field.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, about subject: String) throws -> T {
        do {
            return try decoder.decode(type, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw invalid(subject, "field \"\(path(context.codingPath + [key]))\" is missing")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context),
                let DecodingError.dataCorrupted(context) {
            throw invalid(subject, "field \"\(path(context.codingPath))\": \(context.debugDescription)")
        } catch {
            throw invalid(subject, error.localizedDescription)
        }
    }

    /// Formats a date as `2026-11-22T05:00:00Z`.
    static func formatDate(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// Parses an ISO 8601 date with or without fractional seconds.
    static func parseDate(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
        return try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
    }

    private static func invalid(_ subject: String, _ detail: String) -> ModelCollectionError {
        ModelCollectionError(.invalidResponse, "\(subject): the server's answer is not valid: \(detail)")
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }
}

/// `GET /v1/collections/{id}`: the deployment resolved for a device context.
struct ResolvedCollection: Codable, Sendable, Equatable {
    /// One model of the deployment.
    struct Entry: Codable, Sendable, Equatable {
        let modelIdentifier: String
        let version: String?
        let sha256: String
        let size: Int64
        let formatVersion: Int?
        let encrypted: Bool?
        let keyIdentifier: String?
        let downloadURL: String
    }

    let collection: String
    let deploymentID: String
    let activated: Date?
    let entries: [String: Entry]
}
