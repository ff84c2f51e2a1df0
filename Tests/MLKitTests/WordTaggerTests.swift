import Foundation
import Testing
import TestSupport
@testable import MLKit

/// The word-tagger fixtures of `Tests/MLKitTests/Fixtures/tagger/`.
enum TaggerFixtures {
    static let folder = Reference.repositoryRoot.appendingPathComponent("Tests/MLKitTests/Fixtures/tagger")
    static func url(_ name: String) -> URL { folder.appendingPathComponent(name) }
    /// 40 invented tech headlines: COMPANY, PRODUCT, OS, EVENT, NONE.
    static func headlines() throws -> [TaggedTokens] { try DatasetReader().readTaggedTokens(contentsOf: url("tech-headlines.json")) }
    /// 30 invented Chinese sentences as B/M/E/S character tags.
    static func segmentation() throws -> [TaggedTokens] { try DatasetReader().readTaggedTokens(contentsOf: url("segmentation.jsonl")) }
    /// The golden tagger file, format version 4, trained on the headlines.
    static let golden = Reference.models.appendingPathComponent("v4-headlines-tagger.mlkit")
    /// The sentence the issue asks about, with the labels the headlines teach.
    static let newSentence = "Google announced Android 11 at Google I/O"
    static let newSentenceLabels = ["COMPANY", "NONE", "OS", "NONE", "NONE", "COMPANY", "EVENT", "EVENT"]
}

/// The error `body` throws, if it is an ``MLKitError``.
private func mlkitError(_ body: () throws -> some Any) -> MLKitError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error as? MLKitError
    }
}

@Suite("Word tagger: training and prediction", .onOwnThreads)
struct WordTaggerTrainingTests {
    @Test("Each algorithm learns the headlines and tags a new sentence as a reader expects",
          arguments: [WordTaggerParameters.Algorithm.automatic, .crf, .perceptron])
    func headlines(algorithm: WordTaggerParameters.Algorithm) throws {
        let tagger = try WordTagger(trainingData: try TaggerFixtures.headlines(), parameters: .init(algorithm: algorithm))
        #expect(tagger.labels == ["COMPANY", "EVENT", "NONE", "OS", "PRODUCT"])
        #expect(tagger.trainingMetrics?.tokenAccuracy == 1)
        let tags = tagger.tags(for: TaggerFixtures.newSentence)
        #expect(tags.map(\.token) == ["Google", "announced", "Android", "11", "at", "Google", "I", "O"])
        #expect(tags.map(\.label) == TaggerFixtures.newSentenceLabels)
        #expect(String(TaggerFixtures.newSentence[tags[2].range]) == "Android")
        #expect(tagger.predictedLabels(for: ["Apple", "ships", "iOS", "16", "at", "WWDC"])
                == ["COMPANY", "NONE", "OS", "NONE", "NONE", "EVENT"])
        #expect(tagger.predictedLabels(for: []) == [])
    }

    @Test("auto tries three candidates on held-out sentences and says which it kept")
    func automatic() throws {
        let tagger = try WordTagger(trainingData: try TaggerFixtures.headlines())
        let summary = try #require(tagger.trainingSummary)
        #expect(summary.reason.contains("crf c2=1 "))
        #expect(summary.reason.contains("crf c2=0.1 "))
        #expect(summary.reason.contains("perceptron epochs="))
        #expect(summary.examples == 40)
        #expect(summary.tokens == 254)
        #expect(tagger.validationMetrics?.sentenceCount == 4)
    }

    @Test("Training is deterministic for a seed and thread count: the same weights, bit for bit",
          arguments: [WordTaggerParameters.Algorithm.crf, .perceptron])
    func determinism(algorithm: WordTaggerParameters.Algorithm) throws {
        let rows = try TaggerFixtures.headlines()
        let first = try WordTagger(trainingData: rows, parameters: .init(algorithm: algorithm, seed: 3, threads: 2))
        let second = try WordTagger(trainingData: rows, parameters: .init(algorithm: algorithm, seed: 3, threads: 2))
        #expect(first.storage.model.pairWeights == second.storage.model.pairWeights)
        #expect(first.storage.model.transitions == second.storage.model.transitions)
        #expect(first.storage.attributes.hashes == second.storage.attributes.hashes)
        // The perceptron decodes in batches that do not depend on the thread count.
        if algorithm == .perceptron {
            let one = try WordTagger(trainingData: rows, parameters: .init(algorithm: algorithm, seed: 3, threads: 1))
            #expect(one.storage.model.pairWeights == first.storage.model.pairWeights)
        }
    }

    @Test("Marginal probabilities: each token's sum to 1, and the best agrees with Viterbi here")
    func hypotheses() throws {
        let tagger = try WordTagger(trainingData: try TaggerFixtures.headlines(), parameters: .init(algorithm: .crf))
        let tokens = ["Samsung", "shows", "Galaxy", "phones", "at", "CES"]
        let all = tagger.predictedLabelHypotheses(for: tokens, maximumCount: 5)
        #expect(all.count == tokens.count)
        for token in all { #expect(abs(token.values.reduce(0, +) - 1) < 1e-4) }
        let ranked = tagger.rankedLabels(for: tokens, maximumCount: 2)
        #expect(ranked.map { $0.count } == Array(repeating: 2, count: tokens.count))
        #expect(ranked.map { $0[0].label } == tagger.predictedLabels(for: tokens))
        #expect(ranked.allSatisfy { $0[0].probability >= $0[1].probability })
    }

    @Test("Many sentences at once give what one at a time gives")
    func batch() throws {
        let rows = try TaggerFixtures.headlines()
        let tagger = try WordTagger(trainingData: rows, parameters: .init(algorithm: .perceptron))
        let sentences = rows.map(\.tokens)
        #expect(tagger.predictedLabels(for: sentences, threads: 2) == sentences.map { tagger.predictedLabels(for: $0) })
    }

    @Test("A word segmenter: B/M/E/S characters, tagged from text with the character tokenizer")
    func segmenter() throws {
        let tagger = try WordTagger(trainingData: try TaggerFixtures.segmentation(), parameters: .init(algorithm: .crf))
        #expect(tagger.tokenizer.unit == .character)
        #expect(tagger.trainingMetrics?.tokenAccuracy == 1)
        #expect(tagger.trainingMetrics?.segmentsWords == true)
        let tags = tagger.tags(for: "我们 明天去北京学习。")
        #expect(tags.map(\.token).joined() == "我们明天去北京学习。")
        #expect(tags.map(\.label) == ["B", "E", "B", "E", "S", "B", "E", "B", "E", "S"])
    }

    @Test("Evaluation counts tokens, labels, entities and labels the tagger does not know")
    func evaluation() throws {
        let tagger = try WordTagger(trainingData: try TaggerFixtures.headlines(), parameters: .init(algorithm: .crf))
        let data = [TaggedTokens(tokens: ["Apple", "ships", "Vision", "Pro"], labels: ["COMPANY", "NONE", "DEVICE", "DEVICE"])]
        let metrics = tagger.evaluation(on: data)
        #expect(metrics.labels.contains("DEVICE"))
        #expect(metrics.tokenCount == 4)
        #expect(metrics.sentenceCount == 1)
        #expect(metrics.tokenAccuracy <= 0.5)
        #expect(metrics.entities.first { $0.type == "COMPANY" }?.correct == 1)
        #expect(metrics.entities.first { $0.type == "DEVICE" }?.actual == 1)
    }

    @Test("Settings that cannot be used are refused, naming the field")
    func badParameters() throws {
        let rows = try TaggerFixtures.headlines()
        #expect(mlkitError { try WordTagger(trainingData: rows, parameters: .init(regularization: -1)) }?.location?.field
                == "regularization")
        #expect(mlkitError { try WordTagger(trainingData: rows, parameters: .init(maxIterations: 0)) }?.location?.field
                == "maxIterations")
        #expect(mlkitError { try WordTagger(trainingData: rows, parameters: .init(validation: .split(fraction: 1))) }?
            .location?.field == "validation")
        #expect(mlkitError { try WordTagger(trainingData: []) }?.code == .invalidDataset)
    }

    @Test("Separate validation sentences, with a label training never saw")
    func separateValidation() throws {
        let rows = try TaggerFixtures.headlines()
        let held = [TaggedTokens(tokens: ["Apple", "ships", "Vision", "Pro"], labels: ["COMPANY", "NONE", "DEVICE", "DEVICE"])]
        let tagger = try WordTagger(trainingData: rows, parameters: .init(validation: .dataset(held)))
        let validation = try #require(tagger.validationMetrics)
        #expect(validation.tokenCount == 4)
        #expect(validation.tokenAccuracy <= 0.5)
    }
}

@Suite("Word tagger: features", .onOwnThreads)
struct TokenFeatureTests {
    @Test("The keys of an English token and its neighbours")
    func englishKeys() {
        let keys = TokenFeatures.keys(of: ["Apple", "ships", "iOS", "14"])
        #expect(keys[0] == ["bias", "w=Apple", "l=apple", "p1=a", "s1=e", "p2=ap", "s2=le", "p3=app", "s3=ple", "sh=Xx",
                            "w-2=\u{2}", "w-1=\u{2}", "w+1=ships", "w+2=ios"])
        #expect(keys[2] == ["bias", "w=iOS", "l=ios", "p1=i", "s1=s", "p2=io", "s2=os", "sh=xX",
                            "w-2=apple", "w-1=ships", "w+1=14", "w+2=\u{3}"])
        #expect(keys[3] == ["bias", "l=14", "p1=1", "s1=4", "sh=d", "w-2=ships", "w-1=ios", "w+1=\u{3}", "w+2=\u{3}"])
    }

    @Test("Han tokens add the characters and bigrams around them")
    func chineseKeys() {
        let keys = TokenFeatures.keys(of: ["中国", "的", "首都", "１９９８年"])
        #expect(keys[1] == ["bias", "l=的", "sh=C", "w-2=\u{2}", "w-1=中国", "w+1=首都", "w+2=１９９８年",
                            "c-1=国", "c+1=首", "b-2=中国", "b-1=国的", "b+1=的首", "b+2=首都", "b0=国首"])
        #expect(keys[3].contains("sh=dC"))
        #expect(keys[3].contains("b+1=年\u{3}"))
        #expect(keys[0].contains("b-2=\u{2}\u{2}"))
    }

    @Test("The hashed keys are the FNV-1a hashes of the keys, in order")
    func hashesMatchKeys() throws {
        for sentence in [["Apple", "ships", "iOS", "14"], ["中国", "的", "首都", "１９９８年"], ["É", "naïve", "İstanbul", "ﬁ"],
                         ["x"], ["Wi-Fi", "ＷＷＤＣ", "e\u{301}", "🙂"]] {
            var bytes: [UInt8] = []
            var ranges: [Range<Int>] = []
            for token in sentence {
                let start = bytes.count
                bytes.append(contentsOf: token.utf8)
                ranges.append(start..<bytes.count)
            }
            var hashes = [[UInt64]](repeating: [], count: sentence.count)
            var scratch = TokenFeatures.Scratch()
            bytes.withUnsafeBufferPointer { buffer in
                TokenFeatures.forEachAttribute(of: buffer, tokens: ranges, scratch: &scratch) { hashes[$0].append($1) }
            }
            #expect(hashes == TokenFeatures.keys(of: sentence).map { $0.map(FeatureHash.of) }, "\(sentence)")
        }
    }
}

@Suite("Word tagger: metrics", .onOwnThreads)
struct TaggingMetricsTests {
    @Test("Runs of one label are entities; NONE is outside")
    func runs() {
        let labels = ["COMPANY", "NONE", "PRODUCT"]
        let metrics = TaggingMetrics(labels: labels, actual: [[0, 1, 2, 2, 1, 0]], predicted: [[0, 1, 2, 1, 1, 0]])
        #expect(metrics.tokenAccuracy == 5.0 / 6.0)
        let company = metrics.entities.first { $0.type == "COMPANY" }!
        #expect((company.actual, company.predicted, company.correct) == (2, 2, 2))
        let product = metrics.entities.first { $0.type == "PRODUCT" }!
        #expect((product.actual, product.predicted, product.correct) == (1, 1, 0))
        #expect(metrics.allEntities.f1 == 2 * (2.0 / 3) * (2.0 / 3) / (4.0 / 3))
        #expect(metrics.perLabel[2].recall == 0.5)
        #expect(metrics.confusion[2][1] == 1)
    }

    @Test("BIO labels, read as conlleval reads them")
    func bio() {
        let labels = ["B-PER", "I-PER", "O", "B-LOC", "I-LOC"]
        // Actual: [PER PER] O [LOC] [PER]; predicted: [PER] [PER] O [LOC LOC ...] with an I- start.
        let metrics = TaggingMetrics(labels: labels, actual: [[0, 1, 2, 3, 0]], predicted: [[0, 0, 2, 4, 0]])
        let person = metrics.entities.first { $0.type == "PER" }!
        #expect((person.actual, person.predicted, person.correct) == (2, 3, 1))
        let place = metrics.entities.first { $0.type == "LOC" }!
        #expect((place.actual, place.predicted, place.correct) == (1, 1, 1))
    }

    @Test("B/M/E/S labels are words; part-of-speech tags have no entities")
    func wordsAndTags() {
        let labels = ["B", "E", "M", "S"]
        // 北京 大 学 vs 北京 大学
        let metrics = TaggingMetrics(labels: labels, actual: [[0, 1, 0, 1]], predicted: [[0, 1, 3, 3]])
        #expect(metrics.segmentsWords)
        #expect((metrics.allEntities.actual, metrics.allEntities.predicted, metrics.allEntities.correct) == (2, 3, 1))
        #expect(!TaggingMetrics(labels: ["n", "v"], actual: [[0, 1]], predicted: [[0, 0]]).hasEntities)
    }
}

@Suite("Word tagger: the chapter's labels.json", .needsSeedArtifacts("labels.json"), .onOwnThreads)
struct ChapterLabelsTests {
    @Test("The tagger learns the chapter's 12 rows and tags a new headline from their words")
    func chapter() throws {
        let rows = try TaggedTokens.validatedForTraining(try DatasetReader().readTaggedTokens(contentsOf: SeedArtifacts.url("labels.json")))
        let tagger = try WordTagger(trainingData: rows)
        #expect(tagger.labels == ["COMPANY", "NONE", "OS", "PRODUCT"])
        #expect(tagger.trainingMetrics?.tokenAccuracy == 1)
        #expect(rows.allSatisfy { tagger.predictedLabels(for: $0.tokens) == $0.labels })
        #expect(tagger.tags(for: "Apple announced a new iPhone").map(\.label) == ["COMPANY", "NONE", "NONE", "NONE", "PRODUCT"])
        // The chapter's file has no OPERATING_SYSTEM or EVENT label and never names Google,
        // Android or I/O: what it can teach about the issue's sentence is that none of it is one
        // of the entities it has seen. `WordTaggerTrainingTests.headlines` tags the same sentence
        // with a model trained on rows that have those labels.
        let tags = tagger.tags(for: TaggerFixtures.newSentence)
        #expect(tags.count == 8)
        #expect(tags.allSatisfy { tagger.labels.contains($0.label) })
    }

    @Test("A tagger trained on labels.json tags the README's WWDC sentence")
    func wwdc() throws {
        let rows = try TaggedTokens.validatedForTraining(try DatasetReader().readTaggedTokens(contentsOf: SeedArtifacts.url("labels.json")))
        let tagger = try WordTagger(trainingData: rows)
        let text = "Apple announced iOS 14 and Xcode 12 at WWDC 2020"
        let tags = tagger.tags(for: text)
        #expect(tags.map(\.token) == ["Apple", "announced", "iOS", "14", "and", "Xcode", "12", "at", "WWDC", "2020"])
        #expect(tags.allSatisfy { String(text[$0.range]) == $0.token })
        let labels = Dictionary(tags.map { ($0.token, $0.label) }, uniquingKeysWith: { first, _ in first })
        // Apple is a company in the file, and the words and numbers around the names are NONE,
        // as they are throughout it. The names it has never seen (iOS, Xcode, WWDC) get one of its
        // labels: its only OS is tvOS, and it has no event at all.
        #expect(labels["Apple"] == "COMPANY")
        #expect(["announced", "14", "and", "12", "at", "2020"].allSatisfy { labels[$0] == "NONE" }, "\(tags.map(\.label))")
        #expect(tags.allSatisfy { tagger.labels.contains($0.label) })
        #expect(tagger.predictedLabels(for: tags.map(\.token)) == tags.map(\.label))
    }
}

@Suite("Word tagger: a trained segmenter as a tokenizer", .onOwnThreads)
struct SegmenterTokenizerTests {
    @Test("Tokenizer(segmenter:) finds words, skips punctuation, and keeps text apart at spaces and lines")
    func words() throws {
        let segmenter = try WordTagger(trainingData: try TaggerFixtures.segmentation(), parameters: .init(algorithm: .crf))
        #expect(segmenter.isSegmenter)
        let tokenizer = try Tokenizer(segmenter: segmenter)
        #expect(tokenizer.segmentation == .model)
        try tokenizer.validate()
        #expect(tokenizer.tokens(for: "我们明天去北京学习。") == ["我们", "明天", "去", "北京", "学习"])
        // A space splits what the segmenter would join (我们), and each line is tagged apart.
        let text = "我 们在上海开会。\n老师喜欢喝咖啡。"
        let words = tokenizer.tokenRanges(for: text).map { String(text[$0]) }
        #expect(words == ["我", "们", "在", "上海", "开会", "老师", "喜欢", "喝", "咖啡"])
        #expect(tokenizer == tokenizer)
        #expect(try Tokenizer(segmenter: segmenter) != tokenizer)
    }

    @Test("A tagger that is not a segmenter is refused, and a decoded 'model' tokenizer has no segmenter")
    func refusals() throws {
        let tagger = try WordTagger(trainingData: try TaggerFixtures.headlines(), parameters: .init(algorithm: .perceptron))
        #expect(!tagger.isSegmenter)
        #expect(mlkitError { try Tokenizer(segmenter: tagger) }?.location?.field == "segmenter")
        let segmenter = try WordTagger(trainingData: try TaggerFixtures.segmentation(), parameters: .init(algorithm: .perceptron))
        let encoded = try JSONEncoder().encode(try Tokenizer(segmenter: segmenter))
        #expect(String(decoding: encoded, as: UTF8.self).contains("\"segmentation\":\"model\""))
        let decoded = try JSONDecoder().decode(Tokenizer.self, from: encoded)
        #expect(decoded.segmenter == nil)
        #expect(mlkitError { try decoded.validate() }?.code == .unavailable)
    }
}

@Suite("Word tagger: model files", .onOwnThreads)
struct TaggerModelFileTests {
    static func trained() throws -> WordTagger {
        try WordTagger(trainingData: try TaggerFixtures.headlines(), parameters: .init(algorithm: .crf, threads: 2))
    }

    @Test("A written tagger reads back with the same weights, labels, tokenizer and metadata")
    func roundTrip() throws {
        let tagger = try Self.trained()
        let metadata = ModelMetadata(author: "tests", version: "7", additional: ["k": "v"])
        let data = tagger.modelFileData(metadata: metadata)
        #expect(data.prefix(8) == Data("MLKITMOD".utf8))
        #expect(data[8] == 4)
        let loaded = try WordTagger(modelFileData: data, source: "t.mlkit")
        #expect(loaded.formatVersion == 4)
        #expect(loaded.labels == tagger.labels)
        #expect(loaded.metadata == metadata)
        #expect(loaded.tokenizer == tagger.tokenizer)
        // Dates are stored to the second.
        var summary = try #require(tagger.trainingSummary)
        summary.date = try #require(loaded.trainingSummary?.date)
        #expect(loaded.trainingSummary == summary)
        #expect(abs(tagger.trainingSummary!.date.timeIntervalSince(summary.date)) < 1)
        #expect(loaded.validationMetrics == tagger.validationMetrics)
        #expect(loaded.storage.model.pairWeights == tagger.storage.model.pairWeights)
        #expect(loaded.storage.model.features == tagger.storage.model.features)
        #expect(loaded.predictedLabels(for: ["Apple", "ships", "macOS"]) == tagger.predictedLabels(for: ["Apple", "ships", "macOS"]))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mlkit-tagger-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("t.mlkit")
        try tagger.write(to: url)
        #expect(try WordTagger(contentsOf: url).labels == tagger.labels)
        guard case .wordTagger(let any) = try AnyModel(contentsOf: url) else { Issue.record("not a tagger"); return }
        #expect(any.labels == tagger.labels)
    }

    @Test("The golden tagger file of format version 4 keeps loading and tagging")
    func golden() throws {
        let tagger = try WordTagger(contentsOf: TaggerFixtures.golden)
        #expect(tagger.formatVersion == 4)
        #expect(tagger.metadata.author == "mlkit tests")
        #expect(tagger.metadata.version == "golden-4")
        #expect(tagger.labels == ["COMPANY", "EVENT", "NONE", "OS", "PRODUCT"])
        #expect(tagger.tags(for: TaggerFixtures.newSentence).map(\.label) == TaggerFixtures.newSentenceLabels)
        #expect(try TaggerFixtures.headlines().allSatisfy { tagger.predictedLabels(for: $0.tokens) == $0.labels })
        let any = try AnyModel(contentsOf: TaggerFixtures.golden)
        #expect(any.kindName == "word tagger")
        #expect(any.algorithm == "crf")
    }

    @Test("A file of the other kind is refused by each loader, naming the kind")
    func wrongKind() throws {
        let tagger = try Data(contentsOf: TaggerFixtures.golden)
        let classifier = try Data(contentsOf: Reference.models.appendingPathComponent("v3-headlines-svm.mlkit"))
        let asClassifier = mlkitError { try TextClassifier(modelFileData: tagger, source: "tagger.mlkit") }
        #expect(asClassifier?.code == .wrongType)
        #expect(asClassifier?.description.hasPrefix(#"tagger.mlkit: field "kind": this is a word tagger's model file"#) == true)
        let asTagger = mlkitError { try WordTagger(modelFileData: classifier, source: "classifier.mlkit") }
        #expect(asTagger?.code == .wrongType)
        #expect(asTagger?.description.hasPrefix(#"classifier.mlkit: field "kind": this is a text classifier's model file"#) == true)
        guard case .textClassifier = try AnyModel(modelFileData: classifier) else { Issue.record("not a classifier"); return }
    }

    @Test("Truncated, flipped and inconsistent tagger files give clear errors")
    func damaged() throws {
        let golden = try Data(contentsOf: TaggerFixtures.golden)
        for length in [0, 8, 40, golden.count / 2, golden.count - 1] {
            let error = mlkitError { try WordTagger(modelFileData: golden.prefix(length), source: "t.mlkit") }
            #expect(error?.code == .malformedData, "cut at \(length)")
        }
        for offset in stride(from: 12, to: golden.count - 16, by: 251) {
            var data = golden
            data[offset] ^= 0x20
            #expect(mlkitError { try WordTagger(modelFileData: data, source: "t.mlkit") }?.description
                .hasPrefix("t.mlkit: checksum mismatch") == true, "byte \(offset)")
        }
        // A change that keeps the checksum valid: the header's pair count.
        let pairs = try #require(golden.range(of: Data(#""pairs":"#.utf8)))
        var data = golden
        let offset = pairs.upperBound
        data[offset] = data[offset] == UInt8(ascii: "9") ? UInt8(ascii: "8") : data[offset] + 1
        let error = mlkitError { try WordTagger(modelFileData: DamagedModelFileTests.resealed(data), source: "t.mlkit") }
        #expect(error?.code == .malformedData)
        #expect(error?.description.hasPrefix("t.mlkit: inconsistent model:") == true)
        // A tagger marked as format version 3, which had no taggers.
        var older = golden
        older[8] = 3
        #expect(mlkitError { try WordTagger(modelFileData: DamagedModelFileTests.resealed(older), source: "t.mlkit") }?.description
                == "t.mlkit: inconsistent model: a word tagger in a format version 3 file (taggers start at version 4)")
        // Two attributes with the same hash: a lookup would find only the first.
        var parts = try ModelFileParts(golden, knownSections: WordTaggerFile.sections)
        let section = try #require(parts.sections.first { $0.name == WordTaggerFile.attributes })
        var hashes = section.bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt64.self)) }
        hashes[3] = hashes[1]
        parts.set(WordTaggerFile.attributes, section.type, ModelFileParts.bytes(of: hashes))
        #expect(mlkitError { try WordTagger(modelFileData: try parts.encoded(), source: "t.mlkit") }?.description
                == "t.mlkit: inconsistent model: attributes 1 and 3 have the same hash")
    }
}
