import Foundation
import MLKit

/// The lines that show the candidates `auto` compared, as `mlkit train` and `mlkit info` print
/// them: an aligned table of algorithm, settings, validation accuracy, macro-F1 and time, in the
/// order they were tried, with `*` before the one chosen.
func candidateTable(_ candidates: [TrainingSummary.Candidate]) -> [String] {
    let header = ["algorithm", "settings", "accuracy", "macro-F1", "time"]
    let rows = candidates.map { candidate in
        [candidate.algorithm.rawValue,
         candidate.settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "),
         String(format: "%.4f", candidate.accuracy), String(format: "%.4f", candidate.macroF1),
         String(format: "%.2f s", candidate.seconds)]
    }
    let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
    /// Text columns are aligned left, figures right.
    func line(_ cells: [String], marker: String) -> String {
        let aligned = cells.enumerated().map { column, cell in
            let pad = String(repeating: " ", count: widths[column] - cell.count)
            return column < 2 ? cell + pad : pad + cell
        }
        return "  \(marker) " + aligned.joined(separator: "  ")
    }
    return [line(header, marker: " ")] + zip(candidates, rows).map { line($1, marker: $0.chosen ? "*" : " ") }
}
