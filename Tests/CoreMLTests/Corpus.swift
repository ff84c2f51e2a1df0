import Foundation
import MLKit
import TestSupport

/// A labelled corpus that the tests generate, so that the export tests always run: short
/// texts on four topics, drawn with a fixed seed from word lists that share many words, with
/// repeated words, capitals, joined words (`open-source`) and punctuation, split into training
/// and test texts.
enum Corpus {
    static let topics: [String: [String]] = [
        "weather": ["rain", "sunny", "cloudy", "storm", "wind", "forecast", "snow", "cold", "warm", "umbrella", "thunder",
                    "fog", "humid", "degrees", "sky", "breeze", "frost", "heat-wave", "drizzle", "weekend"],
        "sports": ["match", "goal", "team", "coach", "season", "score", "league", "win", "lost", "referee", "striker",
                   "stadium", "fans", "play-off", "injury", "weekend", "record", "cup", "final", "training"],
        "cooking": ["recipe", "oven", "garlic", "butter", "bake", "salt", "onion", "simmer", "flour", "sauce", "pan",
                    "roast", "dinner", "spicy", "fresh", "stir-fry", "taste", "kitchen", "warm", "minutes"],
        "finance": ["market", "stocks", "bank", "interest", "rates", "shares", "profit", "loss", "investors", "bond",
                    "inflation", "budget", "record", "fund", "quarter", "price", "cost-cutting", "growth", "trade", "cup"],
    ]
    static let common = ["the", "a", "is", "was", "today", "and", "very", "this", "new", "I", "we", "it", "really", "so"]
    static let punctuation = ["!", "!!!", "?", ":)", "--", ";"]

    /// The texts of `labels`, `count` per label, from `seed`.
    static func examples(labels: [String], count: Int, seed: UInt64) -> [LabeledText] {
        var generator = SeededGenerator(seed: seed)
        func next() -> UInt64 { generator.next() }
        func pick<T>(_ values: [T]) -> T { values[Int(next() % UInt64(values.count))] }
        var examples: [LabeledText] = []
        for index in 0..<(count * labels.count) {
            let label = labels[index % labels.count]
            let others = labels.filter { $0 != label }
            var words: [String] = []
            for _ in 0..<(4 + Int(next() % 12)) {
                switch next() % 10 {
                case 0...4: words.append(pick(topics[label]!))
                case 5: words.append(pick(topics[pick(others)]!))
                case 6...8: words.append(pick(common))
                default: words.append(pick(punctuation))
                }
            }
            if next() % 3 == 0 { words[0] = words[0].capitalized }
            if next() % 4 == 0, let word = words.last { words.append(word) }
            examples.append(LabeledText(text: words.joined(separator: " "), label: label))
        }
        return examples
    }

    static let allLabels = ["cooking", "finance", "sports", "weather"]

    /// Training texts: 60 per label.
    static func training(labels: [String] = allLabels) -> TextDataset {
        TextDataset(examples(labels: labels, count: 60, seed: 1))
    }

    /// Test texts, drawn apart from the training texts: 40 per label.
    static func test(labels: [String] = allLabels) -> TextDataset {
        TextDataset(examples(labels: labels, count: 40, seed: 2))
    }
}
