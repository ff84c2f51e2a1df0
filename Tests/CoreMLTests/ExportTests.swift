import Foundation
@testable import MLKit
@testable import MLKitCoreML
import TestSupport
import Testing

/// How the probabilities of an exported model compare with those of the mlkit model.
struct ExportComparison {
    /// The largest difference from mlkit's own probabilities (computed in single precision).
    var fromModel = 0.0
    /// The largest difference from the model's formulas evaluated in double precision.
    var fromFormulas = 0.0
    /// Texts whose labels differ.
    var differentLabels: [String] = []
    /// Texts whose probabilities through the sparse text path differ, in any bit, from those of
    /// the general evaluation of the stages (`prediction(from:)`).
    var pathDifferences: [String] = []
    /// The texts whose probabilities differ from mlkit's by more than 1e-6 plus the rounding
    /// of mlkit's single-precision scores (``roundingBound(_:_:)``).
    var pastRounding: [String] = []

    init(_ classifier: TextClassifier, _ exported: CoreMLModel, _ texts: [String]) throws {
        let labels = classifier.labels
        for text in texts {
            let original = classifier.predictedLabelHypotheses(for: text, maximumCount: labels.count)
            let converted = try exported.predictedLabelHypotheses(for: text, maximumCount: labels.count)
            let formulas = Self.probabilities(classifier, text)
            var largest = 0.0
            for (index, label) in labels.enumerated() {
                largest = max(largest, abs(original[label]! - converted[label]!))
                fromFormulas = max(fromFormulas, abs(formulas[index] - converted[label]!))
            }
            fromModel = max(fromModel, largest)
            let general = try exported.prediction(from: try exported.input(for: text))["classProbability"]
            let generalProbabilities: [String: Double]
            switch general {
            case .stringDictionary(let dictionary)?: generalProbabilities = dictionary
            default: generalProbabilities = [:]
            }
            if generalProbabilities != converted { pathDifferences.append(text) }
            if largest > 1e-6 + Self.roundingBound(classifier, text) { pastRounding.append(text) }
            if classifier.predictedLabel(for: text) != (try exported.predictedLabel(for: text)) { differentLabels.append(text) }
        }
    }

    /// How far mlkit's single-precision rounding may move the probabilities of `text`: each
    /// score is a sum of n + 1 terms (the bias and one per feature), whose float sum is within
    /// n · 2⁻²⁴ · Σ|term| of the exact one, and a probability moves by at most the largest
    /// score error divided by the temperature (times |a| for Platt's sigmoids).
    static func roundingBound(_ classifier: TextClassifier, _ text: String) -> Double {
        let weights = classifier.linearWeights!
        let x = features(classifier, text)
        let classes = weights.classes
        var largest = 0.0
        for label in 0..<classes {
            var total = abs(Double(weights.bias[label]))
            for (index, value) in x { total += abs(value * Double(weights.weights[index * classes + label])) }
            largest = max(largest, total)
        }
        let error = Double(x.count + 1) * 0x1p-24 * largest
        switch weights.probability {
        case .softmax(let temperature): return error / Double(temperature)
        case .platt(let a, _): return error * Double(a.map(abs).max()!)
        }
    }

    /// The weighted features of `text`, by index, in double precision: term frequencies, IDF,
    /// L2 normalization.
    static func features(_ classifier: TextClassifier, _ text: String) -> [Int: Double] {
        let configuration = classifier.featurizerConfiguration
        var x: [Int: Double] = [:]
        switch configuration.indexing {
        case .hashed:
            for (bucket, value) in configuration.hashedTermFrequencies(for: text) { x[Int(bucket)] = value }
        case .vocabulary:
            for (key, value) in configuration.termFrequencies(for: text) {
                if let index = classifier.featurizer.index(ofKey: key) { x[index, default: 0] += value }
            }
        }
        if let idf = classifier.inverseDocumentFrequencies { for index in x.keys { x[index]! *= Double(idf[index]) } }
        if configuration.l2Normalize {
            let norm = x.values.reduce(0) { $0 + $1 * $1 }.squareRoot()
            if norm > 0 { for index in x.keys { x[index]! /= norm } }
        }
        return x
    }

    /// The classifier's probabilities for `text`, from its weights and featurizer's settings,
    /// in double precision: term frequencies, IDF, L2 normalization, scores, then softmax or
    /// Platt's sigmoids as mlkit defines them.
    static func probabilities(_ classifier: TextClassifier, _ text: String) -> [Double] {
        let weights = classifier.linearWeights!
        let x = features(classifier, text)
        let classes = weights.classes
        var scores = weights.bias.map(Double.init)
        for (index, value) in x {
            for label in 0..<classes { scores[label] += value * Double(weights.weights[index * classes + label]) }
        }
        switch weights.probability {
        case .softmax(let temperature):
            let largest = scores.max()!
            let exponentials = scores.map { exp(($0 - largest) / Double(temperature)) }
            let total = exponentials.reduce(0, +)
            return exponentials.map { $0 / total }
        case .platt(let a, let b):
            let sigmoids = (0..<classes).map { 1 / (1 + exp(Double(a[$0]) * scores[$0] + Double(b[$0]))) }
            let total = sigmoids.reduce(0, +)
            return sigmoids.map { $0 / total }
        }
    }
}

/// A hashed multinomial naive Bayes model trained on `data`: `mlkit train` builds vocabularies,
/// so the library's internals make this one.
func hashedNaiveBayes(_ data: TextDataset, bits: Int = 12, weighting: FeaturizerConfiguration.Weighting = .counts,
                      sublinear: Bool = false, l2: Bool = false) throws -> TextClassifier {
    let configuration = FeaturizerConfiguration(maxWordNGram: 2, characterNGrams: 3...4, wordParts: true, punctuation: true,
                                                indexing: .hashed(bits: bits), weighting: weighting, sublinearTF: sublinear,
                                                l2Normalize: l2)
    let featurizer = try Featurizer(fitting: data.examples.map(\.text), configuration: configuration)
    let labels = data.labels
    let problem = TrainingProblem(matrix: featurizer.matrix(for: data.examples.map(\.text)),
                                  labels: data.examples.map { Int32(labels.firstIndex(of: $0.label)!) }, classCount: labels.count)
    let model = try MultinomialNaiveBayes(smoothing: 0.5).train(problem)
    return TextClassifier(labels: labels, featurizer: featurizer, model: .linear(model),
                          metadata: ModelMetadata(author: "mlkit tests"), trainingSummary: nil, trainingMetrics: nil,
                          validationMetrics: nil, formatVersion: nil)
}

@Suite("Exporting mlkit models to Core ML", .onOwnThreads)
struct ExportTests {
    static let algorithms: [TextClassifierParameters.Algorithm] = [.naiveBayes, .complementNaiveBayes, .maxEnt, .linearSVM]

    /// Checks an export: the same labels; the model's formulas exactly; mlkit's own
    /// probabilities within 1e-6 for maximum entropy and the SVM. Naive Bayes' scores are sums
    /// of log-probabilities, tens to hundreds in size, which mlkit adds in single precision:
    /// their rounding, not the export, moves its probabilities by up to a few 1e-5
    /// (`docs/coreml.md`), so naive Bayes is held to 1e-6 plus that rounding.
    static func expectFaithful(_ comparison: ExportComparison, _ algorithm: TextClassifierParameters.Algorithm?) {
        #expect(comparison.differentLabels.isEmpty, "labels differ on \(comparison.differentLabels)")
        #expect(comparison.pathDifferences.isEmpty, "the sparse path differs on \(comparison.pathDifferences)")
        #expect(comparison.fromFormulas < 1e-12, "\(comparison.fromFormulas)")
        #expect(comparison.pastRounding.isEmpty, "past mlkit's rounding on \(comparison.pastRounding)")
        if algorithm == .maxEnt || algorithm == .linearSVM {
            #expect(comparison.fromModel <= 1e-6, "\(comparison.fromModel)")
        }
    }

    @Test("Acceptance: every exportable algorithm's export gives its probabilities and labels on held-out texts",
          arguments: algorithms, [4, 2])
    func everyAlgorithm(algorithm: TextClassifierParameters.Algorithm, labelCount: Int) throws {
        let labels = Array(Corpus.allLabels.prefix(labelCount))
        let classifier = try TextClassifier(trainingData: Corpus.training(labels: labels), parameters: .init(algorithm: algorithm))
        let exported = try CoreMLModel(fileData: try classifier.coreMLModelData())
        #expect(exported.isTextClassifier)
        #expect(exported.labels == classifier.labels)
        let comparison = try ExportComparison(classifier, exported, Corpus.test(labels: labels).examples.map(\.text))
        Self.expectFaithful(comparison, algorithm)
        // A binary SVM's two Platt sigmoids mirror each other, which makes its one-row export exact.
        if case .platt(let a, let b)? = classifier.linearWeights?.probability, labelCount == 2 {
            #expect(a[0] == a[1] && b[0] == -b[1], "\(a) \(b)")
        }
    }

    @Test("Hashed models take an int64-keyed dictionary of buckets, and export exactly",
          arguments: [(FeaturizerConfiguration.Weighting.counts, false, false), (.tfidf, true, true), (.binary, false, true)])
    func hashed(weighting: FeaturizerConfiguration.Weighting, sublinear: Bool, l2: Bool) throws {
        let classifier = try hashedNaiveBayes(Corpus.training(), weighting: weighting, sublinear: sublinear, l2: l2)
        let exported = try CoreMLModel(fileData: try classifier.coreMLModelData())
        #expect(exported.info.inputs.map(\.type) == [.int64Dictionary])
        #expect(exported.info.vocabularySize == 1 << 12)
        #expect(exported.info.stages.contains { $0.type == "scaler" } == (weighting == .tfidf))
        #expect(exported.isTextClassifier)
        let comparison = try ExportComparison(classifier, exported, Corpus.test().examples.map(\.text))
        Self.expectFaithful(comparison, .naiveBayes)
        // The buckets are the input, as the app computes them.
        let text = "The storm and the rain!!!"
        let input = try exported.input(for: text)
        #expect(input["input"] == .int64Dictionary(classifier.featurizerConfiguration.hashedTermFrequencies(for: text)))
    }

    @Test("A model whose inverse document frequencies are not all finite is not exported, naming the feature")
    func nonFiniteIDF() throws {
        // Found by the coreml-model fuzzer: its export held a NaN scale value, which the Core ML
        // reader refuses. The loader refuses such a file now; a model made in memory still meets
        // the exporter's check.
        let trained = try hashedNaiveBayes(Corpus.training(), bits: 8, weighting: .tfidf)
        var idf = try #require(trained.featurizer.inverseDocumentFrequency)
        idf[3] = .nan
        let classifier = TextClassifier(
            labels: trained.labels,
            featurizer: Featurizer(configuration: trained.featurizerConfiguration, vocabulary: nil, inverseDocumentFrequency: idf),
            model: trained.model, metadata: ModelMetadata(), trainingSummary: nil, trainingMetrics: nil,
            validationMetrics: nil, formatVersion: nil)
        #expect(throws: CoreMLError(.notExportable, "the model's inverse document frequency of feature 3 is nan, not a finite "
                                    + "number, which Core ML's scaler cannot hold")) {
            try classifier.coreMLModelData()
        }
        #expect(throws: MLKitError.self) { try TextClassifier(modelFileData: classifier.modelFileData()) }
    }

    @Test("A model whose vocabulary lists a term twice is not exported, naming the term")
    func duplicateTerm() throws {
        // Found by the coreml-model fuzzer: mlkit looks features up by hash and loads such a
        // file, and its export had a dictionary vectorizer that the Core ML reader refuses.
        let trained = try TextClassifier(trainingData: Corpus.training(), parameters: .init(algorithm: .naiveBayes, validation: .none))
        let terms = try #require(trained.vocabularyTerms)
        let container = try ModelContainer.decode(trained.modelFileData(), file: nil, knownSections: ModelFileSection.all)
        let sections = container.sections.values.sorted { $0.name < $1.name }.map { section in
            guard section.name == ModelFileSection.vocabularyTerms else {
                return ModelContainer.OutputSection(name: section.name, type: section.type, count: section.bytes.count) { emit in
                    try Data(section.bytes).withUnsafeBytes { try emit($0) }
                }
            }
            return ModelContainer.section(ModelFileSection.vocabularyTerms, strings: PackedStrings([terms[0], terms[0]] + terms.dropFirst(2)))
        }
        let classifier = try TextClassifier(modelFileData: ModelContainer.encode(header: container.header, sections: sections),
                                            source: "duplicate-term.mlkit")
        #expect(throws: CoreMLError(.notExportable, "the model's vocabulary lists the key \"\(terms[0])\" twice (features 0 "
                                    + "and 1), which Core ML's dictionary vectorizer cannot hold")) {
            try classifier.coreMLModelData()
        }
    }

    @Test("An exported model whose featurizer metadata mlkit refuses does not load, naming the setting")
    func refusedFeaturizerMetadata() throws {
        // Found by the coreml-model fuzzer: an export whose mlkit.featurizer said maxWordNGram 0
        // loaded, and its first prediction trapped in the featurizer (an empty n-gram range).
        let trained = try TextClassifier(trainingData: Corpus.training(), parameters: .init(algorithm: .naiveBayes, validation: .none))
        let exported = try trained.coreMLModelData()
        _ = try CoreMLModel(fileData: exported, source: "Topics.mlmodel")
        // The same bytes with one setting changed, so that the protobuf's lengths still hold.
        func changed(_ key: String, to value: String) throws -> Data {
            let range = try #require(exported.range(of: Data(key.utf8)))
            var data = exported
            data.replaceSubrange(range.upperBound..<range.upperBound + value.utf8.count, with: Data(value.utf8))
            return data
        }
        for value in ["0", "9"] {
            let data = try changed("\"maxWordNGram\":", to: value)
            #expect(throws: CoreMLError(.invalidModel, "metadata mlkit.featurizer: maxWordNGram: must be 1 to 5, not \(value)",
                                        file: "Topics.mlmodel")) {
                try CoreMLModel(fileData: data, source: "Topics.mlmodel")
            }
        }
        let undecodable = try changed("\"weighting\":", to: "7")
        #expect(throws: CoreMLError.self) { try CoreMLModel(fileData: undecodable, source: "Topics.mlmodel") }
        do {
            _ = try CoreMLModel(fileData: undecodable, source: "Topics.mlmodel")
        } catch let error as CoreMLError {
            #expect(error.code == .invalidModel && error.reason.hasPrefix("metadata mlkit.featurizer: not a featurizer configuration"))
        }
    }

    @Test("The pipeline has the documented stages, types and metadata", arguments: [TextClassifierParameters.Algorithm.linearSVM, .naiveBayes])
    func layout(algorithm: TextClassifierParameters.Algorithm) throws {
        let trained = try TextClassifier(trainingData: Corpus.training(), parameters: .init(algorithm: algorithm))
        let metadata = ModelMetadata(author: "Ada", shortDescription: "Topics of short texts", license: "MIT", version: "2.1",
                                     additional: ["source": "tests"])
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("Topics.mlmodel")
        try trained.writeCoreMLModel(to: url, metadata: metadata)
        let model = try CoreMLModel(contentsOf: url)
        let info = model.info
        #expect(info.specificationVersion == 1)
        #expect(info.modelType == "pipelineClassifier")
        let expected = algorithm == .naiveBayes
            ? ["pipelineClassifier", "dictVectorizer", "featureVectorizer", "glmClassifier"]
            : ["pipelineClassifier", "dictVectorizer", "featureVectorizer", "scaler", "normalizer", "glmClassifier"]
        #expect(info.stages.map(\.type) == expected)
        #expect(info.inputs.map(\.name) == ["input"])
        #expect(info.inputs.map(\.type) == [.stringDictionary])
        #expect(info.outputs.map(\.name) == ["classLabel", "classProbability"])
        #expect(info.outputs.map(\.type) == [.string, .stringDictionary])
        #expect(info.predictedFeatureName == "classLabel")
        #expect(info.predictedProbabilitiesName == "classProbability")
        #expect(info.labels == trained.labels)
        #expect(info.vocabularySize == trained.vocabularySize)
        #expect(info.metadata.author == "Ada")
        #expect(info.metadata.license == "MIT")
        #expect(info.metadata.version == "2.1")
        #expect(info.metadata.shortDescription == "Topics of short texts")
        #expect(info.metadata.additional["source"] == "tests")
        #expect(info.metadata.additional["mlkit.algorithm"] == algorithm.rawValue)
        let configuration = try JSONDecoder().decode(FeaturizerConfiguration.self,
                                                     from: Data(try #require(info.metadata.additional["mlkit.featurizer"]).utf8))
        #expect(configuration == trained.featurizerConfiguration)
        // The input of a text is its feature keys with their term frequencies.
        let input = try model.input(for: "Rain, rain and the new forecast")
        #expect(input["input"] == .stringDictionary(trained.featurizerConfiguration.termFrequencies(for: "Rain, rain and the new forecast")))
    }

    @Test("The keys an app sends are words, word n-grams, word parts, punctuation and character n-grams")
    func keys() throws {
        let configuration = FeaturizerConfiguration(maxWordNGram: 2, characterNGrams: 3...3, wordParts: true, punctuation: true,
                                                    indexing: .vocabulary(.init()), weighting: .tfidf, sublinearTF: true)
        let frequencies = configuration.termFrequencies(for: "New York, new-york!!! York")
        #expect(frequencies["new"] == 1 + log(2.0))  // the word, and the part of new-york
        #expect(frequencies["york"] == 1 + log(3.0))
        #expect(frequencies["new york"] == 1)
        #expect(frequencies["new-york"] == 1)
        #expect(frequencies["!!!"] == 1)
        #expect(frequencies["new-york !!!"] == 1)
        #expect(frequencies["#<ne"] == 1 + log(2.0))  // New and new-york; a word part has no character n-grams
        #expect(frequencies[","] == nil)  // a lone comma is not a token
    }

    @Test("The embedding classifier is refused, saying why")
    func embeddingRefused() throws {
        let classifier = try TextClassifier(trainingData: Corpus.training(), parameters: .init(algorithm: .embedding))
        let error = try #require(throws: CoreMLError.self) { try classifier.coreMLModelData() }
        #expect(error.code == .notExportable)
        #expect(error.reason.hasPrefix("the embedding classifier cannot be exported to Core ML: it averages embedding vectors"))
    }

    @Test("The chapter's headlines: every algorithm's export labels them as the model does",
          .needsSeedArtifacts("texts.json"), arguments: algorithms)
    func headlines(algorithm: TextClassifierParameters.Algorithm) throws {
        let data = try DatasetReader().read(contentsOf: SeedArtifacts.url("texts.json"))
        let classifier = try TextClassifier(trainingData: data, parameters: .init(algorithm: algorithm))
        let exported = try CoreMLModel(fileData: try classifier.coreMLModelData())
        let texts = data.examples.map(\.text) + ["President Donald Trump is approving a new law",
                                                 "Snap users drop for first time, but revenue climbs"]
        let comparison = try ExportComparison(classifier, exported, texts)
        Self.expectFaithful(comparison, algorithm)
    }
}
