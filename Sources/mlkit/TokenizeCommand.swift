public import ArgumentParser
import Foundation
public import MLKit

extension TokenUnit: ExpressibleByArgument {}
extension WordSegmentation: ExpressibleByArgument {}
extension InvalidUTF8Policy: ExpressibleByArgument {}

/// `mlkit tokenize`: prints the tokens of a text, one per line, as the featurizer sees them.
struct TokenizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokenize",
        abstract: "Split text into words, sentences or paragraphs.",
        discussion: """
            Prints one token per line, normalized as a model sees it (lowercased unless \
            --keep-case). With no TEXT and no --file, reads standard input.
            """
    )

    @Argument(help: "The text to tokenize; several arguments are joined with spaces.")
    var text: [String] = []

    @Option(name: .shortAndLong, help: "Read the text from a file ('-' for standard input).")
    var file: String?

    @Option(help: "The unit: word, sentence, paragraph, document or character.")
    var unit: TokenUnit = .word

    @Option(help: """
        The word tokenizer: standard (one token per Han, kana or Thai character), icu (dictionary words) \
        or model:FILE (the words of a trained segmenter).
        """)
    var tokenizer: TokenizerOption = .standard

    @Option(help: "The locale for the icu tokenizer, such as ja or th.")
    var locale: String?

    @Flag(help: "Keep letter case.")
    var keepCase = false

    @Flag(help: "Apply NFKC compatibility folding (ﬁ → fi, Ａ → A).")
    var nfkc = false

    @Flag(help: "Remove Latin, Greek and Cyrillic diacritics (café → cafe).")
    var foldDiacritics = false

    @Option(help: "For input that is not valid UTF-8: fail, or replace with U+FFFD.")
    var invalidUTF8: InvalidUTF8Policy = .fail

    @Flag(help: "Print JSON Lines: the token, its UTF-8 byte range and its kind.")
    var json = false

    func validate() throws {
        if file != nil && !text.isEmpty { throw ValidationError("Give TEXT or --file, not both.") }
    }

    func run() throws {
        try reportingFailures {
            var tokenizer = try self.tokenizer.tokenizer(
                locale: locale, normalization: TextNormalization(lowercase: !keepCase, compatibilityFolding: nfkc,
                                                                 diacriticFolding: foldDiacritics))
            tokenizer.unit = unit
            try tokenizer.validate()
            let input = text.isEmpty ? try readText(path: file ?? "-", policy: invalidUTF8) : text.joined(separator: " ")
            var output = ""
            if json {
                try writeJSONLines(of: input, tokenizer, to: &output)
            } else {
                for token in tokenizer.tokens(for: input) { output += token + "\n" }
            }
            FileHandle.standardOutput.write(Data(output.utf8))
        }
    }

    private func writeJSONLines(of input: String, _ tokenizer: Tokenizer, to output: inout String) throws {
        struct Line: Encodable {
            let token: String
            let start: Int
            let end: Int
            let kind: String
        }
        var spans: [(Range<Int>, Token.Kind)] = []
        tokenizer.enumerateTokens(in: input) { spans.append(($0.range, $0.kind)) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for ((range, kind), token) in zip(spans, tokenizer.tokens(for: input)) {
            let line = Line(token: token, start: range.lowerBound, end: range.upperBound, kind: "\(kind)")
            output += String(decoding: try encoder.encode(line), as: UTF8.self) + "\n"
        }
    }
}
