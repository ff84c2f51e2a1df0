import ArgumentParser
import Foundation
import MLKit
import MLKitEncryption

/// `--tokenizer`: `standard`, `icu`, or `model:FILE`, a trained word segmenter.
enum TokenizerOption: ExpressibleByArgument, CustomStringConvertible {
    case standard
    case icu
    case model(path: String)

    init?(argument: String) {
        switch argument {
        case "standard": self = .standard
        case "icu": self = .icu
        default:
            guard argument.hasPrefix("model:"), argument.count > "model:".count else { return nil }
            self = .model(path: String(argument.dropFirst("model:".count)))
        }
    }

    var description: String {
        switch self {
        case .standard: return "standard"
        case .icu: return "icu"
        case .model(let path): return "model:\(path)"
        }
    }

    /// A word tokenizer of this kind: a `model:` segmenter is loaded (a plain model file, or an
    /// encrypted one with `key`) and must be a B/M/E/S tagger.
    func tokenizer(locale: String?, normalization: TextNormalization, key: ModelKey? = nil) throws -> Tokenizer {
        switch self {
        case .standard: return Tokenizer(segmentation: .standard, locale: locale, normalization: normalization)
        case .icu: return Tokenizer(segmentation: .icu, locale: locale, normalization: normalization)
        case .model(let path):
            let segmenter = try WordTagger(contentsOf: URL(fileURLWithPath: path), key: key)
            guard segmenter.isSegmenter else {
                throw MLKitError(.wrongType, "this word tagger is not a segmenter: its labels are "
                                 + segmenter.labels.prefix(8).joined(separator: ", ") + ", not B, M, E and S",
                                 at: .init(file: path, field: "labels"))
            }
            return try Tokenizer(segmenter: segmenter, normalization: normalization)
        }
    }
}
