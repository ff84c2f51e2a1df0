import ArgumentParser
import Foundation
import MLKit
import MLKitEncryption

/// `mlkit tag`: labels each token of texts with a word tagger.
struct TagCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tag",
        abstract: "Label each token of texts with a trained word tagger.",
        discussion: """
            Prints one token and its label per line, tab-separated, with an empty line after each \
            text when there are several. With no TEXT, reads one text per line from standard input \
            and writes each text's tokens as it goes. The text is split by the tagger's own \
            tokenizer (words, or characters for a segmenter) unless --tokenizer names another.
            """
    )

    @Argument(help: "The texts to tag.")
    var texts: [String] = []

    @Option(help: "The word tagger's model file.")
    var model: String

    @Option(help: "The key file for an encrypted model (.mlkitkey, or Apple's .mlmodelkey).")
    var key: String?

    @Option(help: "Show the K most likely labels of each token with their probabilities.")
    var top: Int = 1

    @Flag(help: "Write JSON Lines, one token a line: {\"end\":…,\"label\":…,\"start\":…,\"text\":…,\"token\":…}.")
    var json = false

    @Option(help: "Split the text with standard, icu or model:FILE (a trained segmenter) instead of the tagger's own tokenizer.")
    var tokenizer: TokenizerOption?

    @Option(help: "The locale for the icu tokenizer, such as ja or th.")
    var locale: String?

    @Option(help: "Read the texts, one per line, from this file rather than from standard input.")
    var input: String?

    @Option(help: "Write the tags to this file (complete, or not at all) rather than to standard output.")
    var output: String?

    func validate() throws {
        if top < 1 { throw ValidationError("--top must be at least 1.") }
        if input != nil && !texts.isEmpty { throw ValidationError("Give texts or --input, not both.") }
    }

    func run() throws {
        try reportingFailures {
            let tagger = try withKey(key) { try WordTagger(contentsOf: URL(fileURLWithPath: model), key: $0) }
            let split = try tokenizer?.tokenizer(locale: locale, normalization: TextNormalization(lowercase: false))
            let format = TagFormat(top: top, json: json)
            try withOutput(output) { write in
                guard texts.isEmpty else {
                    let answers = format.answers(tagger, split, texts, firstIndex: 0, separated: texts.count > 1, threads: 0)
                    return try Array(answers.utf8).withUnsafeBytes { try write($0) }
                }
                // Read, tag on every core, and write, all at once, in the input's order.
                let reader = try LineBatchReader(path: input)
                let name = reader.name
                try StreamingPipeline.run(reader, transform: { batch in
                    let (texts, failure) = batch.texts(inputName: name)
                    let answers = Array(format.answers(tagger, split, texts, firstIndex: batch.firstLine - 1,
                                                       separated: true, threads: 1).utf8)
                    if let failure { throw StreamingPipeline.Failure(output: answers, error: failure) }
                    return answers
                }, write: write)
            }
        }
    }
}

/// How `mlkit tag` writes each token: tab-separated, or JSON Lines, with the `top` labels.
struct TagFormat: Sendable {
    let top: Int
    let json: Bool

    /// The output for a batch of texts.
    /// - Parameters:
    ///   - firstIndex: The index of the first text in the whole input, for JSON's `text`.
    ///   - separated: Whether an empty line follows each text's tokens (plain output).
    ///   - threads: Worker threads (0: all cores).
    func answers(_ tagger: WordTagger, _ split: Tokenizer?, _ texts: [String], firstIndex: Int,
                 separated: Bool, threads: Int) -> String {
        let tagged = tagger.tags(for: texts, tokenizer: split, threads: threads)
        // One encoder for the batch, not one per token.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var output = ""
        for (offset, (text, tokens)) in zip(texts, tagged).enumerated() {
            let ranked = top > 1 ? tagger.rankedLabels(for: tokens.map(\.token), maximumCount: top) : []
            for (index, token) in tokens.enumerated() {
                let choices = ranked.isEmpty ? nil : ranked[index]
                output += json ? jsonLine(token, in: text, text: firstIndex + offset, choices: choices, encoder: encoder)
                               : plainLine(token, choices: choices)
            }
            if separated && !json { output += "\n" }
        }
        return output
    }

    private func plainLine(_ token: TaggedToken, choices: [(label: String, probability: Double)]?) -> String {
        guard let choices else { return "\(token.token)\t\(token.label)\n" }
        return "\(token.token)\t" + choices.map { "\($0.label)\t\(String(format: "%.4f", $0.probability))" }.joined(separator: "\t") + "\n"
    }

    private func jsonLine(_ token: TaggedToken, in text: String, text index: Int,
                          choices: [(label: String, probability: Double)]?, encoder: JSONEncoder) -> String {
        struct Line: Encodable {
            let token: String
            let start: Int
            let end: Int
            let text: Int
            let label: String
            let probabilities: [String: Double]?
        }
        let utf8 = text.utf8
        let start = utf8.distance(from: utf8.startIndex, to: token.range.lowerBound)
        let line = Line(token: token.token, start: start, end: start + token.token.utf8.count, text: index, label: token.label,
                        probabilities: choices.map { Dictionary($0.map { ($0.label, ($0.probability * 1e4).rounded() / 1e4) }) { a, _ in a } })
        return String(decoding: (try? encoder.encode(line)) ?? Data(), as: UTF8.self) + "\n"
    }
}
