/// What to do with bytes that are not valid UTF-8.
public enum InvalidUTF8Policy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Replace each ill-formed sequence (and, in JSON, each unpaired `\u` surrogate escape)
    /// with U+FFFD, as `String(decoding:as:)` does.
    case replace
    /// Throw an ``MLKitError`` with code `invalidUTF8` that gives the byte offset.
    case fail
}
