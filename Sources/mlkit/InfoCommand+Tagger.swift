import Foundation
import MLKit

extension InfoCommand {
    /// The lines that describe a word tagger.
    func describe(_ tagger: WordTagger) -> [String] {
        var lines = [
            "kind                word tagger",
            "format version      \(tagger.formatVersion.map(String.init) ?? "-")",
            "labels              \(tagger.labels.count): \(tagger.labels.joined(separator: ", "))",
        ]
        if let summary = tagger.trainingSummary {
            let settings = summary.settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            lines.append("algorithm           \(summary.algorithm.rawValue) (\(settings))")
            lines.append("trained             \(summary.examples) sentences, \(summary.tokens) tokens, "
                         + "\(String(format: "%.2f", summary.seconds)) s")
        }
        lines.append("features            \(tagger.attributeCount) attributes, \(tagger.weightCount) weights")
        let tokenizer = tagger.tokenizer
        lines.append("tokenizer           " + (tokenizer.unit == .character ? "characters (a segmenter's)"
                                                : "words, \(tokenizer.segmentation.rawValue)"))
        lines += describe(tagger.metadata)
        if let validation = tagger.validationMetrics {
            var line = String(format: "validation          token accuracy %.4f", validation.tokenAccuracy)
            if validation.hasEntities {
                line += String(format: ", %@ F1 %.4f", validation.segmentsWords ? "word" : "entity", validation.allEntities.f1)
            }
            lines.append(line + " on \(validation.tokenCount) tokens")
        }
        return lines
    }
}
