public import Foundation
public import MLKit
import SwiftProtobuf

/// Writes mlkit's linear classifiers as Core ML models (`.mlmodel`), for apps on Apple's
/// systems.
///
/// The model is a `pipelineClassifier` of specification version 1, which every Core ML version
/// reads (iOS 11, macOS 10.13 and later):
///
///     input ([String: Double], or [Int64: Double] for a hashed model)
///       → dictVectorizer (the vocabulary, or the 2^bits buckets)
///       → featureVectorizer (to an array)
///       → scaler (the inverse document frequencies, with TF-IDF weighting)
///       → normalizer (L2, when the model normalizes)
///       → glmClassifier → classLabel (String), classProbability ([String: Double])
///
/// The input is what ``MLKit/FeaturizerConfiguration/termFrequencies(for:)`` gives: each
/// feature key of the text (words, word n-grams such as `new york`, character n-grams such as
/// `#<lo`) with its count, `1 + ln(count)` with sublinear TF, or 1 with binary weighting. The
/// featurizer's configuration is in the model's user-defined metadata, as JSON under
/// `mlkit.featurizer`, so that an app can build the keys (`docs/coreml.md`).
///
/// The classifier's weights become the linear model's rows:
///
/// - softmax probabilities (naive Bayes, maximum entropy, an SVM with a softmax temperature):
///   `ReferenceClass` rows `(W_k − W_0) / T` and offsets `(b_k − b_0) / T`, exactly;
/// - Platt scaling with more than two labels (the SVM): `OneVsRest` rows `−a_k W_k` and offsets
///   `−a_k b_k − B_k`, exactly;
/// - Platt scaling with two labels: one row, the average of the two sigmoids' log-odds; exact
///   when the two sigmoids mirror each other, as a binary SVM's do up to the fit's tolerance
///   (`docs/coreml.md` gives the measured difference).
extension TextClassifier {
    /// The classifier as the bytes of a Core ML model (`.mlmodel`).
    /// - Parameter metadata: Metadata to store instead of the classifier's own.
    /// - Returns: The protobuf bytes.
    /// - Throws: ``CoreMLError`` (`notExportable`) for a model Core ML cannot express (the
    ///   embedding classifier), or one too large for the format, saying why.
    public func coreMLModelData(metadata: ModelMetadata? = nil) throws -> Data {
        let specification = try CoreMLExporter(self, metadata: metadata ?? self.metadata).specification()
        do {
            return try specification.serializedBytes()
        } catch {
            throw CoreMLError(.notExportable, "the model cannot be encoded as a Core ML model: \(error)")
        }
    }

    /// Writes the classifier as a Core ML model (`.mlmodel`), atomically.
    /// - Parameters:
    ///   - url: Where to write.
    ///   - metadata: Metadata to store instead of the classifier's own.
    /// - Throws: As ``coreMLModelData(metadata:)``; ``CoreMLError`` (`io`) when writing fails.
    public func writeCoreMLModel(to url: URL, metadata: ModelMetadata? = nil) throws {
        let data = try coreMLModelData(metadata: metadata)
        do {
            try AtomicFile.write(data, to: url)
        } catch {
            throw CoreMLError(.io, "cannot write the file: \(error)", file: url.path)
        }
    }
}

/// Builds the specification of an exported classifier.
struct CoreMLExporter {
    /// The names of the features between the stages.
    enum Feature {
        static let input = "input"
        static let sparse = "__sparse_vector_features__"
        static let vector = "__feature_vector__"
        static let weighted = "__tfidf_features__"
        static let normalized = "__normalized_features__"
        static let label = "classLabel"
        static let probabilities = "classProbability"
    }

    let classifier: TextClassifier
    let metadata: ModelMetadata
    let weights: TextClassifier.LinearWeights
    let configuration: FeaturizerConfiguration

    init(_ classifier: TextClassifier, metadata: ModelMetadata) throws {
        // Core ML stores a weight in 8 bytes, at least half as many rows as classes: a matrix of
        // more than a quarter of the limit's bytes cannot fit, and is not built to find out.
        if let count = classifier.linearWeightCount, count > Limits.maximumModelSize / 4 {
            throw CoreMLError(.notExportable, "the model has \(count) weights, more than the \(Limits.maximumModelSize) bytes "
                              + "of a Core ML model can hold; train with a smaller vocabulary (--min-count) or fewer hash bits")
        }
        guard let weights = classifier.linearWeights else {
            throw CoreMLError(.notExportable, "the embedding classifier cannot be exported to Core ML: it averages "
                              + "embedding vectors of its features, which no classic Core ML model type expresses "
                              + "(it would take a neural network); train with --algorithm nb, cnb, maxent or svm")
        }
        guard weights.features > 0, weights.classes >= 2 else {
            throw CoreMLError(.notExportable, "the model has \(weights.features) features and \(weights.classes) labels; "
                              + "a Core ML classifier needs at least one feature and two labels")
        }
        self.classifier = classifier
        self.metadata = metadata
        self.weights = weights
        configuration = classifier.featurizerConfiguration
    }

    func specification() throws -> SpecModel {
        let features = weights.features, classes = weights.classes
        // The file's size, roughly: the weights, and the keys of the dictionary vectorizer.
        let rows = classes == 2 ? 1 : (isSoftmax ? classes - 1 : classes)
        let keyBytes: Int
        let keys: SpecDictVectorizer.OneOf_Map
        let inputType: SpecFeatureType
        switch configuration.indexing {
        case .vocabulary:
            guard let terms = classifier.vocabularyTerms, terms.count == features else {
                throw CoreMLError(.notExportable, "the model's vocabulary has no key strings to export")
            }
            // A Core ML dictionary vectorizer maps each key to one index; a damaged file's
            // vocabulary may list a term twice (prediction looks features up by hash).
            var firstIndex: [String: Int] = [:]
            for (index, term) in terms.enumerated() {
                if let first = firstIndex.updateValue(index, forKey: term) {
                    throw CoreMLError(.notExportable, "the model's vocabulary lists the key \"\(term)\" twice (features "
                                      + "\(first) and \(index)), which Core ML's dictionary vectorizer cannot hold")
                }
            }
            keyBytes = terms.reduce(0) { $0 + $1.utf8.count + 3 }
            try checkSize(features * rows * 8 + keyBytes)
            var vector = SpecStringVector()
            vector.vector = terms
            keys = .stringToIndex(vector)
            inputType = Self.dictionaryType(stringKeys: true)
        case .hashed:
            try checkSize(features * rows * 8 + features * 4)
            var vector = SpecInt64Vector()
            vector.vector = (0..<Int64(features)).map { $0 }
            keys = .int64ToIndex(vector)
            inputType = Self.dictionaryType(stringKeys: false)
        }

        var stages: [SpecModel] = []
        var dictionary = SpecDictVectorizer()
        dictionary.map = keys
        stages.append(Self.stage(.dictVectorizer(dictionary), inputs: [(Feature.input, inputType)],
                                 outputs: [(Feature.sparse, Self.dictionaryType(stringKeys: false))]))
        var vectorizer = SpecFeatureVectorizer()
        var column = SpecFeatureVectorizer.InputColumn()
        column.inputColumn = Feature.sparse
        column.inputDimensions = UInt64(features)
        vectorizer.inputList = [column]
        stages.append(Self.stage(.featureVectorizer(vectorizer), inputs: [(Feature.sparse, Self.dictionaryType(stringKeys: false))],
                                 outputs: [(Feature.vector, Self.arrayType(features))]))
        var current = Feature.vector
        if configuration.weighting == .tfidf {
            guard let idf = classifier.inverseDocumentFrequencies, idf.count == features else {
                throw CoreMLError(.notExportable, "the model's TF-IDF weighting has no inverse document frequencies to export")
            }
            // Core ML's scaler, and mlkit's reader of it, take finite numbers only.
            if let position = idf.firstIndex(where: { !$0.isFinite }) {
                throw CoreMLError(.notExportable, "the model's inverse document frequency of feature \(position) is "
                                  + "\(idf[position]), not a finite number, which Core ML's scaler cannot hold")
            }
            var scaler = SpecScaler()
            scaler.scaleValue = idf.map(Double.init)
            stages.append(Self.stage(.scaler(scaler), inputs: [(current, Self.arrayType(features))],
                                     outputs: [(Feature.weighted, Self.arrayType(features))]))
            current = Feature.weighted
        }
        if configuration.l2Normalize {
            var normalizer = SpecNormalizer()
            normalizer.normType = .l2
            stages.append(Self.stage(.normalizer(normalizer), inputs: [(current, Self.arrayType(features))],
                                     outputs: [(Feature.normalized, Self.arrayType(features))]))
            current = Feature.normalized
        }
        var glm = try linearModel()
        var labels = SpecStringVector()
        labels.vector = classifier.labels
        glm.classLabels = .stringClassLabels(labels)
        var classifierStage = Self.stage(.glmClassifier(glm), inputs: [(current, Self.arrayType(features))],
                                         outputs: [(Feature.label, Self.stringType), (Feature.probabilities, Self.dictionaryType(stringKeys: true))])
        classifierStage.description_p.predictedFeatureName = Feature.label
        classifierStage.description_p.predictedProbabilitiesName = Feature.probabilities
        stages.append(classifierStage)

        var pipeline = SpecPipeline()
        pipeline.models = stages
        var pipelineClassifier = SpecPipelineClassifier()
        pipelineClassifier.pipeline = pipeline
        var model = SpecModel()
        model.specificationVersion = 1
        model.type = .pipelineClassifier(pipelineClassifier)
        var description = SpecModelDescription()
        description.input = [Self.feature(Feature.input, inputType, inputDescription)]
        description.output = [
            Self.feature(Feature.label, Self.stringType, "The most likely label."),
            Self.feature(Feature.probabilities, Self.dictionaryType(stringKeys: true), "The probability of each label."),
        ]
        description.predictedFeatureName = Feature.label
        description.predictedProbabilitiesName = Feature.probabilities
        description.metadata = try specificationMetadata()
        model.description_p = description
        return model
    }

    /// Whether the probabilities are a softmax of the scores.
    private var isSoftmax: Bool {
        if case .softmax = weights.probability { return true }
        return false
    }

    /// The `glmClassifier` that gives the classifier's probabilities, as the extension on `TextClassifier` describes.
    private func linearModel() throws -> SpecGLMClassifier {
        let features = weights.features, classes = weights.classes
        let w = weights.weights, bias = weights.bias
        func weight(_ feature: Int, _ label: Int) -> Double { Double(w[feature * classes + label]) }
        var glm = SpecGLMClassifier()
        glm.postEvaluationTransform = .logit
        var rows: [[Double]] = []
        var offsets: [Double] = []
        switch weights.probability {
        case .softmax(let temperature):
            guard temperature.isFinite, temperature > 0 else {
                throw CoreMLError(.notExportable, "the model's softmax temperature is \(temperature), not a positive number")
            }
            let t = Double(temperature)
            glm.classEncoding = .referenceClass
            for label in 1..<classes {
                rows.append((0..<features).map { (weight($0, label) - weight($0, 0)) / t })
                offsets.append((Double(bias[label]) - Double(bias[0])) / t)
            }
        case .platt(let a, let b) where classes == 2:
            // p₁ ∝ σ(z₁), p₀ ∝ σ(z₀) with z_c = −(a_c s_c + b_c): one sigmoid of (z₁ − z₀) / 2,
            // which equals p₁ when the two sigmoids mirror each other (z₀ = −z₁).
            glm.classEncoding = .oneVsRest
            let (a0, a1) = (Double(a[0]), Double(a[1])), (b0, b1) = (Double(b[0]), Double(b[1]))
            rows.append((0..<features).map { (-a1 * weight($0, 1) + a0 * weight($0, 0)) / 2 })
            offsets.append((-a1 * Double(bias[1]) - b1 + a0 * Double(bias[0]) + b0) / 2)
        case .platt(let a, let b):
            // p_c ∝ σ(−(a_c s_c + b_c)): Core ML's OneVsRest normalization, exactly.
            glm.classEncoding = .oneVsRest
            for label in 0..<classes {
                let slope = Double(a[label])
                rows.append((0..<features).map { -slope * weight($0, label) })
                offsets.append(-slope * Double(bias[label]) - Double(b[label]))
            }
        }
        for (index, row) in rows.enumerated() where !row.allSatisfy(\.isFinite) || !offsets[index].isFinite {
            throw CoreMLError(.notExportable, "the model's weights for label '\(classifier.labels[index])' are not all finite")
        }
        glm.weights = rows.map { row in
            var array = SpecGLMClassifier.DoubleArray()
            array.value = row
            return array
        }
        glm.offset = offsets
        return glm
    }

    /// What the input holds, in words.
    private var inputDescription: String {
        let values: String
        if configuration.weighting == .binary {
            values = "1 for each key present"
        } else if configuration.sublinearTF {
            values = "1 + ln(count) of each key"
        } else {
            values = "the count of each key"
        }
        if case .hashed(let bits) = configuration.indexing {
            return "The text's feature keys hashed into 2^\(bits) buckets (FNV-1a 64), with \(values) added up per bucket; "
                + "see mlkit.featurizer in the metadata."
        }
        return "The text's feature keys (words, word n-grams, …) with \(values); see mlkit.featurizer in the metadata."
    }

    /// The metadata: the classifier's, and mlkit's keys.
    private func specificationMetadata() throws -> SpecMetadata {
        var spec = SpecMetadata()
        spec.author = metadata.author ?? ""
        spec.shortDescription = metadata.shortDescription ?? ""
        spec.license = metadata.license ?? ""
        spec.versionString = metadata.version ?? ""
        var userDefined = metadata.additional
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        userDefined[TextInput.featurizerKey] = String(decoding: try encoder.encode(configuration), as: UTF8.self)
        userDefined["mlkit.version"] = MLKitVersion.current
        if let algorithm = classifier.trainingSummary?.algorithm { userDefined["mlkit.algorithm"] = algorithm.rawValue }
        spec.userDefined = userDefined
        return spec
    }

    private func checkSize(_ bytes: Int) throws {
        guard bytes < Limits.maximumModelSize else {
            throw CoreMLError(.notExportable, "the model would take about \(bytes) bytes as a Core ML model, more than the "
                              + "\(Limits.maximumModelSize) the format can hold; train with a smaller vocabulary "
                              + "(--min-count) or fewer hash bits")
        }
    }

    // MARK: Building blocks

    static let stringType: SpecFeatureType = {
        var type = SpecFeatureType()
        type.type = .stringType(SpecEmpty())
        return type
    }()

    static func dictionaryType(stringKeys: Bool) -> SpecFeatureType {
        var dictionary = SpecDictionaryFeatureType()
        dictionary.keyType = stringKeys ? .stringKeyType(SpecEmpty()) : .int64KeyType(SpecEmpty())
        var type = SpecFeatureType()
        type.type = .dictionaryType(dictionary)
        return type
    }

    static func arrayType(_ count: Int) -> SpecFeatureType {
        var array = SpecArrayFeatureType()
        array.shape = [Int64(count)]
        array.dataType = .double
        var type = SpecFeatureType()
        type.type = .multiArrayType(array)
        return type
    }

    static func feature(_ name: String, _ type: SpecFeatureType, _ description: String = "") -> SpecFeatureDescription {
        var feature = SpecFeatureDescription()
        feature.name = name
        feature.type = type
        feature.shortDescription = description
        return feature
    }

    /// A pipeline stage of specification version 1.
    static func stage(_ type: SpecModel.OneOf_Type, inputs: [(String, SpecFeatureType)],
                      outputs: [(String, SpecFeatureType)]) -> SpecModel {
        var model = SpecModel()
        model.specificationVersion = 1
        model.type = type
        var description = SpecModelDescription()
        description.input = inputs.map { feature($0.0, $0.1) }
        description.output = outputs.map { feature($0.0, $0.1) }
        model.description_p = description
        return model
    }
}
