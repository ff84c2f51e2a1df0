import Foundation

extension TaggingMetrics {
    /// The metrics as aligned text tables: a summary, the entities' or words' precision,
    /// recall and F1 (all together and by type), per-label precision, recall, F1 and support
    /// over tokens, and the confusion matrix with label names (rows: actual; columns: predicted).
    public var report: String {
        var lines: [String] = []
        lines.append("sentences       \(sentenceCount)")
        lines.append("tokens          \(tokenCount)")
        lines.append("token accuracy  \(Self.format(tokenAccuracy))")
        if hasEntities {
            let all = allEntities
            let name = segmentsWords ? "words" : "entities"
            lines.append("\(name.padding(toLength: 16, withPad: " ", startingAt: 0))precision \(Self.format(all.precision))  "
                         + "recall \(Self.format(all.recall))  F1 \(Self.format(all.f1))  (\(all.actual) true, \(all.predicted) predicted)")
            if !segmentsWords {
                lines.append("")
                var rows = [["entity", "precision", "recall", "F1", "true", "predicted"]]
                rows += entities.map {
                    [$0.type, Self.format($0.precision), Self.format($0.recall), Self.format($0.f1), String($0.actual), String($0.predicted)]
                }
                lines += ClassificationMetrics.table(rows, rightAligned: 1...5)
            }
        }
        lines.append("")
        var rows = [["label", "precision", "recall", "F1", "support"]]
        rows += perLabel.map {
            [$0.label, Self.format($0.precision), Self.format($0.recall), Self.format($0.f1), String($0.support)]
        }
        lines += ClassificationMetrics.table(rows, rightAligned: 1...4)
        lines.append("")
        lines.append("confusion matrix (rows: actual, columns: predicted)")
        var matrix = [[""] + labels]
        matrix += labels.indices.map { [labels[$0]] + confusion[$0].map(String.init) }
        lines += ClassificationMetrics.table(matrix, rightAligned: 1...max(1, labels.count))
        return lines.joined(separator: "\n") + "\n"
    }

    private static func format(_ value: Double) -> String { String(format: "%.4f", value) }
}
