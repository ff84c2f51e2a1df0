import Foundation

extension ClassificationMetrics {
    /// The metrics as aligned text tables: a summary, per-class precision, recall, F1 and
    /// support, and the confusion matrix with label names (rows: actual; columns: predicted).
    public var report: String {
        var lines: [String] = []
        lines.append("examples     \(count)")
        lines.append("accuracy     \(Self.format(accuracy))")
        lines.append("error        \(Self.format(classificationError))")
        lines.append("macro F1     \(Self.format(macroF1))")
        lines.append("weighted F1  \(Self.format(weightedF1))")
        let ks = (0..<min(5, labels.count)).map { "top-\($0 + 1) \(Self.format(topKAccuracy[$0]))" }
        lines.append("top-k        " + ks.joined(separator: "  "))
        if let logLoss { lines.append("log-loss     \(Self.format(logLoss))") }
        lines.append("")
        var rows = [["label", "precision", "recall", "F1", "support"]]
        rows += perClass.map {
            [$0.label, Self.format($0.precision), Self.format($0.recall), Self.format($0.f1), String($0.support)]
        }
        lines += Self.table(rows, rightAligned: 1...4)
        lines.append("")
        lines.append("confusion matrix (rows: actual, columns: predicted)")
        var matrix = [[""] + labels]
        matrix += labels.indices.map { [labels[$0]] + confusion[$0].map(String.init) }
        lines += Self.table(matrix, rightAligned: 1...max(1, labels.count))
        return lines.joined(separator: "\n") + "\n"
    }

    private static func format(_ value: Double) -> String { String(format: "%.4f", value) }

    /// Pads the cells of each column to the column's width, in characters.
    static func table(_ rows: [[String]], rightAligned: ClosedRange<Int>) -> [String] {
        let columns = rows.map(\.count).max() ?? 0
        let widths = (0..<columns).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned.contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
    }
}
