/// One training example for a text classifier: a text and the label it belongs to.
///
/// This is one object of Create ML's JSON form, `{"text": "...", "label": "..."}`,
/// one row of a CSV file, or one `.txt` file of a labelled directory.
public struct LabeledText: Sendable, Hashable {
    /// The text to classify.
    public var text: String
    /// The label the text belongs to.
    public var label: String

    /// Creates an example.
    /// - Parameters:
    ///   - text: The text to classify.
    ///   - label: The label the text belongs to.
    public init(text: String, label: String) {
        self.text = text
        self.label = label
    }
}

/// One training example for a word tagger: a sentence split into tokens, with one label per token.
///
/// This is one object of Create ML's word-tagger form,
/// `{"tokens": ["Apple", "ships", ...], "labels": ["COMPANY", "NONE", ...]}`.
/// The reader guarantees that `tokens` and `labels` have the same count.
public struct TaggedTokens: Sendable, Hashable {
    /// The tokens of the sentence, in order.
    public var tokens: [String]
    /// The label of each token, in the same order as ``tokens``.
    public var labels: [String]

    /// Creates an example.
    /// - Parameters:
    ///   - tokens: The tokens of the sentence, in order.
    ///   - labels: The label of each token; it should have as many items as `tokens`.
    public init(tokens: [String], labels: [String]) {
        self.tokens = tokens
        self.labels = labels
    }
}

extension TaggedTokens {
    /// Returns `rows` if a word tagger can be trained on them: at least one row, and at least
    /// two distinct labels among them. The reader has already checked each row (tokens, as many
    /// labels, not empty).
    /// - Parameters:
    ///   - rows: The examples.
    ///   - source: The file they came from, named in the error.
    /// - Returns: `rows`, unchanged.
    /// - Throws: ``MLKitError/Code/invalidDataset``, as in
    ///   `labels.json: field "labels": only one label ("NONE") in 12 rows — training needs at least two`.
    public static func validatedForTraining(_ rows: [TaggedTokens], source: String? = nil) throws -> [TaggedTokens] {
        guard let first = rows.first?.labels.first else {
            throw MLKitError(.invalidDataset, "the dataset is empty", at: source.map { .init(file: $0) })
        }
        guard rows.contains(where: { $0.labels.contains { $0 != first } }) else {
            throw MLKitError(.invalidDataset, "only one label (\"\(first)\") in \(rows.count) row\(rows.count == 1 ? "" : "s")"
                             + " — training needs at least two", at: .init(file: source, field: "labels"))
        }
        return rows
    }
}
