/// How a dataset is laid out on disk.
///
/// ``DatasetReader`` infers the format from a file's extension when none is given.
public enum DatasetFormat: String, Sendable, CaseIterable {
    /// A JSON array of objects, one per example: Create ML's form (`.json`).
    case jsonArray = "json"
    /// JSON Lines: one object per line, blank lines allowed (`.jsonl`, `.ndjson`).
    case jsonLines = "jsonl"
    /// Comma-separated values with a header row naming the columns (`.csv`).
    case csv
    /// A folder of sub-folders named by label, each holding `.txt` files, one example per file.
    case directory
    /// Word-tagger data as tagged corpora write it: one sentence per line, each token `word/TAG`
    /// (`.txt`, `.tagged`). Only ``DatasetReader/readTaggedTokens(contentsOf:tokensKey:labelsKey:)``
    /// reads it.
    case wordTags = "wordtags"
}

extension DatasetFormat {
    /// The format a file extension names (case-insensitive), or `nil`.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "json": self = .jsonArray
        case "jsonl", "ndjson": self = .jsonLines
        case "csv": self = .csv
        case "txt", "tagged": self = .wordTags
        default: return nil
        }
    }

    /// Whether the format is one of the JSON forms.
    var isJSON: Bool { self == .jsonArray || self == .jsonLines }
}
