// mlkit's speed probe: `swift run -c release --package-path Benchmarks MLKitProbe` prints MB/s
// for the text pipeline, each beside a peer measured in the same run, so that the figures in
// docs/benchmarks.md are easy to reproduce. Each figure is the best of several rounds on one
// thread, timed by that thread's CPU clock (CLOCK_THREAD_CPUTIME_ID): on a shared machine,
// other processes stretch wall time but hardly the CPU time of the work itself. Compare
// ratios rather than absolute numbers across runs.
import Foundation
import MLKit

// As the `mlkit` command does: BLAS calls stay on the calling thread, and OpenBLAS's idle
// worker threads do not compete with mlkit's for the cores.
ProcessSettings.useCallingThreadOnlyForBLAS()

// `compare` is the peer comparison's mlkit side (Comparison.swift): it reads datasets, not the
// corpora below, so it runs before they are built.
if CommandLine.arguments.dropFirst().first == "compare" {
    ProcessSettings.keepFreedMemoryForReuse()  // as `mlkit train` does
    exit(runComparison(Array(CommandLine.arguments.dropFirst(2))))
}
// `tagger` is the word-tagger comparison's mlkit side (TaggerComparison.swift).
if CommandLine.arguments.dropFirst().first == "tagger" {
    ProcessSettings.keepFreedMemoryForReuse()
    exit(runTaggerComparison(Array(CommandLine.arguments.dropFirst(2))))
}
// `passes` is the interleaved prediction benchmark's mlkit side (PredictionPasses.swift).
if CommandLine.arguments.dropFirst().first == "passes" {
    exit(runPredictionPasses(Array(CommandLine.arguments.dropFirst(2))))
}

let rounds = 5

/// The CPU time this thread has used, in seconds.
func threadCPUTime() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}

/// The fastest of `rounds` timings of `body`, in CPU seconds of this thread.
func fastest(_ body: () -> Void) -> Double {
    (0..<rounds).map { _ in
        let start = threadCPUTime()
        body()
        return threadCPUTime() - start
    }.min() ?? .infinity
}

func row(_ name: String, _ value: Double, _ unit: String, peer: (name: String, value: Double)? = nil) {
    var line = name.padding(toLength: 44, withPad: " ", startingAt: 0) + String(format: "%9.1f %@", value, unit)
    if let peer {
        line += String(format: "   %@ %.1f, ratio %.1f×", peer.name, peer.value, value / peer.value)
    }
    print(line)
}

// MARK: Corpora from the system's own documentation

/// English: the licence texts and the packages' copyright files.
func englishCorpus() -> String {
    var parts: [String] = []
    let manager = FileManager.default
    for folder in ["/usr/share/common-licenses"] {
        for name in (try? manager.contentsOfDirectory(atPath: folder)) ?? [] {
            if let text = try? String(contentsOfFile: folder + "/" + name, encoding: .utf8) { parts.append(text) }
        }
    }
    for package in ((try? manager.contentsOfDirectory(atPath: "/usr/share/doc")) ?? []).sorted() {
        if let text = try? String(contentsOfFile: "/usr/share/doc/\(package)/copyright", encoding: .utf8) { parts.append(text) }
    }
    return parts.joined(separator: "\n")
}

/// Chinese: the translated strings of the zh_CN gettext catalogs.
func chineseCorpus() -> String {
    let folder = "/usr/share/locale/zh_CN/LC_MESSAGES"
    var parts: [String] = []
    for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() where name.hasSuffix(".mo") {
        guard let data = FileManager.default.contents(atPath: folder + "/" + name) else { continue }
        parts.append(contentsOf: translations(inCatalog: data))
    }
    return parts.joined(separator: "\n")
}

/// The msgstr strings of a GNU gettext `.mo` file.
func translations(inCatalog data: Data) -> [String] {
    let bytes = [UInt8](data)
    func word(_ offset: Int) -> Int {
        guard offset + 4 <= bytes.count else { return 0 }
        return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
    }
    guard word(0) == 0x9504_12DE else { return [] }  // little-endian catalogs only
    let count = word(8), table = word(16)
    return (0..<count).compactMap { entry in
        let length = word(table + 8 * entry), offset = word(table + 8 * entry + 4)
        guard offset + length <= bytes.count else { return nil }
        return String(decoding: bytes[offset..<(offset + length)], as: UTF8.self)
    }
}

/// Repeats `text` until it is at least `bytes` long, so each round runs long enough to time.
func repeated(_ text: String, toAtLeast bytes: Int) -> String {
    guard !text.isEmpty else { return text }
    var result = text
    while result.utf8.count < bytes { result += "\n" + text }
    return result
}

// MARK: Measurements

func tokenizerMBps(_ tokenizer: Tokenizer, _ text: String) -> Double {
    var count = 0
    let time = fastest { tokenizer.enumerateTokens(in: text) { _ in count += 1 } }
    precondition(count > 0)
    return Double(text.utf8.count) / time / 1e6
}

/// A naive tokenizer of the kind that does not belong in a hot path: `Character` and `split`.
func naiveSplitMBps(_ text: String) -> Double {
    var count = 0
    let time = fastest { count += text.lowercased().split { !$0.isLetter && !$0.isNumber }.count }
    precondition(count > 0)
    return Double(text.utf8.count) / time / 1e6
}

func featurizerMBps(_ featurizer: Featurizer, _ documents: [String]) -> Double {
    let bytes = documents.reduce(0) { $0 + $1.utf8.count }
    var sink = 0
    let time = fastest { sink &+= featurizer.vectors(for: documents, threads: 1).count }
    precondition(sink > 0)
    return Double(bytes) / time / 1e6
}

/// Sections to run: all by default, or those named on the command line
/// (`tokenizer`, `featurizer`, `json`, `encryption`; `predict`, `vocabulary` and the `profile-`
/// sections only when named).
let sections = Set(CommandLine.arguments.dropFirst())
func wants(_ section: String) -> Bool { sections.isEmpty || sections.contains(section) }

let english = repeated(englishCorpus(), toAtLeast: 16_000_000)
let chinese = repeated(chineseCorpus(), toAtLeast: 8_000_000)
print("mlkit speed probe — one thread, best of \(rounds) rounds, per CPU-second")
print(String(format: "corpora: English %.1f MB (licences and copyright files), Chinese %.1f MB (zh_CN catalogs)\n",
             Double(english.utf8.count) / 1e6, Double(chinese.utf8.count) / 1e6))

if wants("tokenizer") {
let standard = Tokenizer()
let icu = Tokenizer(segmentation: .icu)
let icuAvailable = Tokenizer.isICUAvailable
let englishICU = icuAvailable ? tokenizerMBps(icu, english) : .nan
let chineseICU = icuAvailable ? tokenizerMBps(icu, chinese) : .nan
row("tokenizer, English", tokenizerMBps(standard, english), "MB/s", peer: ("ICU word break", englishICU))
row("tokenizer, Chinese", tokenizerMBps(standard, chinese), "MB/s", peer: ("ICU word break", chineseICU))
row("naive Character split, English", naiveSplitMBps(english), "MB/s")
}

if sections.contains("profile-tokenizer") {
    // Only the standard tokenizer, for `perf record`: no peers in the profile.
    row("tokenizer, English", tokenizerMBps(Tokenizer(), english), "MB/s")
    row("tokenizer, Chinese", tokenizerMBps(Tokenizer(), chinese), "MB/s")
}

if sections.contains("profile-english") {
    row("featurizer, English paragraphs", featurizerMBps(try Featurizer(configuration: FeaturizerConfiguration()), english.split(separator: "\n\n").map(String.init)), "MB/s")
}

if sections.contains("profile-chinese") {
    row("featurizer, Chinese lines", featurizerMBps(try Featurizer(configuration: FeaturizerConfiguration()), chinese.split(separator: "\n").map(String.init)), "MB/s")
}

if sections.contains("profile-featurizer") {
    // Only the default featurizer on English, for `perf record`.
    let documents = english.split(separator: "\n\n").map(String.init)
    let featurizer = try Featurizer(configuration: FeaturizerConfiguration())
    print("documents: \(documents.count), mean \(english.utf8.count / max(1, documents.count)) bytes")
    row("featurizer (words, hashed), English", featurizerMBps(featurizer, documents), "MB/s")
    row("  as one document", featurizerMBps(featurizer, [english]), "MB/s")
    let chineseDocuments = chinese.split(separator: "\n").map(String.init)
    print("Chinese documents: \(chineseDocuments.count), mean \(chinese.utf8.count / max(1, chineseDocuments.count)) bytes")
    row("featurizer, Chinese", featurizerMBps(featurizer, chineseDocuments), "MB/s")
    row("  as one document", featurizerMBps(featurizer, [chinese]), "MB/s")
}

if wants("featurizer") {
let englishDocuments = english.split(separator: "\n\n").map(String.init)
let chineseDocuments = chinese.split(separator: "\n").map(String.init)
let unigrams = try Featurizer(configuration: FeaturizerConfiguration())
let bigrams = try Featurizer(configuration: FeaturizerConfiguration(maxWordNGram: 2))
print("")
row("featurizer (words, hashed), English", featurizerMBps(unigrams, englishDocuments), "MB/s")
row("featurizer (words + bigrams), English", featurizerMBps(bigrams, englishDocuments), "MB/s")
let parts = try Featurizer(configuration: FeaturizerConfiguration(maxWordNGram: 2, wordParts: true))
row("featurizer (bigrams + word parts), English", featurizerMBps(parts, englishDocuments), "MB/s")
row("featurizer (words + script bigrams), Chinese", featurizerMBps(unigrams, chineseDocuments), "MB/s")
}

if sections.contains("vocabulary") {
    // Learning a vocabulary (words + bigrams, with their key strings) from a dataset's texts, on
    // all cores, timed by the wall clock: `MLKitProbe vocabulary datasets/out/X.train.json`.
    let arguments = CommandLine.arguments
    guard let position = arguments.firstIndex(of: "vocabulary"), position + 1 < arguments.count else {
        fatalError("usage: MLKitProbe vocabulary DATASET.json")
    }
    let texts = try DatasetReader().read(contentsOf: URL(fileURLWithPath: arguments[position + 1])).examples.map(\.text)
    let bytes = texts.reduce(0) { $0 + $1.utf8.count }
    let configuration = FeaturizerConfiguration(maxWordNGram: 2, indexing: .vocabulary(.init()))
    var best = Double.infinity
    var dimension = 0
    for _ in 0..<rounds {
        let start = Date()
        dimension = try Featurizer(fitting: texts, configuration: configuration).dimension
        best = min(best, Date().timeIntervalSince(start))
    }
    print(String(format: "\nvocabulary of %d texts (%.1f MB): %d features, words + bigrams, with their terms",
                 texts.count, Double(bytes) / 1e6, dimension))
    row("vocabulary learning, all cores, wall clock", best * 1000, "ms")
    row("  as MB/s", Double(bytes) / best / 1e6, "MB/s")
}

if wants("json") {
    // 50 MB JSON arrays of {"text", "label"} records made from the English corpus, read by
    // mlkit's dataset reader and, as the peer, by Foundation's JSONDecoder: one-line records
    // written with JSONEncoder's default `\/` escapes (half the records hold one), and
    // paragraph records written without them, as Python's `json.dump` writes.
    struct Record: Codable { let text: String; let label: String }
    func records(_ texts: [String]) -> [Record] {
        var records: [Record] = []
        var size = 0
        while size < 50_000_000 {
            let text = texts[records.count % texts.count]
            records.append(Record(text: text, label: "label\(records.count % 7)"))
            size += text.utf8.count + 30
        }
        return records
    }
    let lines = english.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    let paragraphs = english.components(separatedBy: "\n\n").filter { !$0.isEmpty }
    let plainEncoder = JSONEncoder()
    plainEncoder.outputFormatting = .withoutEscapingSlashes
    print("")
    for (name, records, encoder) in [("lines", records(lines), JSONEncoder()),
                                     ("paragraphs", records(paragraphs), plainEncoder)] {
        let data = try encoder.encode(records)
        var count = 0
        let reader = fastest { count = (try? DatasetReader().read(data: data, format: .jsonArray, source: "probe"))?.examples.count ?? 0 }
        precondition(count == records.count)
        let decoder = fastest { count = (try? JSONDecoder().decode([Record].self, from: data))?.count ?? 0 }
        row("JSON dataset reading, \(data.count / 1_000_000) MB of \(name)", Double(data.count) / reader / 1e6, "MB/s",
            peer: ("JSONDecoder", Double(data.count) / decoder / 1e6))
    }
}

if sections.contains("predict") {
    // Prediction with the bundled sentiment model: batch documents per second on the VADER test
    // sentences (both cores, wall clock), and the latency of one short sentence (one thread).
    let root = repositoryRoot
    let classifier = try TextClassifier(contentsOf: root.appendingPathComponent("trained/sentiment.mlkit"))
    let test = try DatasetReader().read(contentsOf: root.appendingPathComponent("datasets/out/vader-sentiment.test.json"))
    let texts = Array(repeating: test.examples.map(\.text), count: 20).flatMap { $0 }
    let clock = ContinuousClock()
    var best = Double.infinity
    for _ in 0..<rounds {
        let elapsed = clock.measure { _ = classifier.predictions(for: texts) }
        best = min(best, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    }
    print("")
    row("batch prediction, VADER test × 20, 2 threads", Double(texts.count) / best, "docs/s")
    var label: String?
    let calls = 200_000
    let single = fastest { for _ in 0..<calls { label = classifier.predictedLabel(for: "I love rainbows") } }
    precondition(label == "positive")
    row("one short sentence, one thread", single / Double(calls) * 1e9, "ns")
}

if wants("encryption") {
    try encryptionProbe(root: repositoryRoot)
}
