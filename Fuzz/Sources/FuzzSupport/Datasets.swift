public import Foundation
public import MLKit

/// What the dataset harnesses share: the seeds in each format, and what is done with a dataset
/// that reads.
public enum DatasetSeeds {
    /// The training fixture (`topics.json`) as JSON, JSON Lines and CSV, whole and in a few
    /// variations (a BOM, CRLF line ends, other fields, a tagged-token row).
    public static func all() throws -> [String: Data] {
        let examples = try Seeds.topics().examples
        func json(_ value: Any) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
        }
        let objects = examples.map { ["text": $0.text, "label": $0.label] }
        let lines = try objects.map(json)
        let csvRows = ["text,label"] + examples.map { "\"\($0.text.replacingOccurrences(of: "\"", with: "\"\""))\",\($0.label)" }
        let few = Array(objects.prefix(4))
        var seeds: [String: Data] = [
            "topics.json": Data(try json(objects).utf8),
            "few.json": Data(try json(few).utf8),
            "bom.json": Data([0xEF, 0xBB, 0xBF]) + Data(try json(few).utf8),
            "extra-fields.json": Data(#"[{"text": "a\u00e9\n", "label": "x", "n": [1, 2.5e3, null, true], "o": {"k": false}}]"#.utf8),
            "tagged.json": Data(#"[{"tokens": ["Swift", "runs", "on", "Linux"], "labels": ["LANG", "NONE", "NONE", "OS"]}]"#.utf8),
            "topics.jsonl": Data(lines.joined(separator: "\n").utf8),
            "crlf.jsonl": Data((lines.prefix(4).joined(separator: "\r\n") + "\r\n\r\n").utf8),
            "tagged.jsonl": Data((#"{"tokens": ["a", "b"], "labels": ["X", "Y"]}"# + "\n").utf8),
            "topics.csv": Data(csvRows.joined(separator: "\n").utf8),
            "crlf.csv": Data((csvRows.prefix(5).joined(separator: "\r\n") + "\r\n").utf8),
            "columns.csv": Data("id,label,text,extra\n1,a,\"quoted, with \"\"quotes\"\"\nand a line\",x\n2,b,plain,\n".utf8),
        ]
        seeds["semicolons.csv"] = Data("text;label\nx;y\n".utf8)
        return seeds
    }

    /// Reads `data` as `format` with both UTF-8 policies, and as word-tagger rows for the JSON
    /// formats, then uses what reads as training would.
    public static func read(_ data: Data, as format: DatasetFormat) {
        for policy in [InvalidUTF8Policy.fail, .replace] {
            let reader = DatasetReader(invalidUTF8: policy)
            if let dataset = try? reader.read(data: data, format: format, source: "fuzz") {
                use(dataset)
            }
            if format != .csv, let rows = try? reader.readTaggedTokens(data: data, format: format, source: "fuzz") {
                for row in rows { precondition(row.tokens.count == row.labels.count, "a tagged row with uneven tokens and labels") }
            }
        }
        // Other columns than the defaults, as `--text-column` and `--label-column` name them.
        _ = try? DatasetReader(textColumn: "label", labelColumn: "text").read(data: data, format: format, source: "fuzz")
    }

    /// What `mlkit train` does with a dataset before training: validation and a split.
    public static func use(_ dataset: TextDataset) {
        _ = dataset.labels
        if let valid = try? dataset.validatedForTraining(source: "fuzz") {
            _ = try? valid.split(validationFraction: 0.2, seed: 1)
        }
    }
}
