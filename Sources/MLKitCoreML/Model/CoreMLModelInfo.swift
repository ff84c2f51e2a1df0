public import MLKit

/// What a Core ML model file says about itself, as `mlkit info` shows it: read for any model
/// type, Apple's natural-language models and types mlkit does not evaluate included.
public struct CoreMLModelInfo: Sendable {
    /// One stage of a model: a pipeline's stages, depth first, or the model itself.
    public struct Stage: Sendable, Hashable {
        /// Where the stage sits: `1`, `1.2` (the second stage of the first); empty for a model
        /// that is not a pipeline.
        public let path: String
        /// The model type's field name in the format: `dictVectorizer`, `glmClassifier`, ….
        public let type: String
        /// The names of the features it reads.
        public let inputs: [String]
        /// The names of the features it writes.
        public let outputs: [String]
        /// Its parameters in a few words: `16043 string keys`, `2 labels, Logit, OneVsRest`.
        public let summary: String
    }

    /// An Apple natural-language model (`textClassifier`, `wordTagger`, `gazetteer`,
    /// `wordEmbedding`): what it says besides its weights, which are in an unpublished layout.
    public struct NaturalLanguageModel: Sendable, Hashable {
        /// The type's field name.
        public let type: String
        /// The model's revision of the type.
        public let revision: Int
        /// Its language, as a BCP 47 code.
        public let language: String
        /// Its labels or tags.
        public let labels: [String]
        /// The size of its weight blob in bytes.
        public let parameterBytes: Int
    }

    /// The specification version: the oldest Core ML that reads the file (1: iOS 11, macOS 10.13).
    public let specificationVersion: Int
    /// The top model's type: `pipelineClassifier`, `glmClassifier`, `textClassifier`, ….
    public let modelType: String
    /// The features it takes.
    public let inputs: [CoreMLFeatureDescription]
    /// The features it returns.
    public let outputs: [CoreMLFeatureDescription]
    /// The output that holds the prediction, for a classifier or regressor.
    public let predictedFeatureName: String?
    /// The output that holds the probability of each label, for a classifier.
    public let predictedProbabilitiesName: String?
    /// Author, licence, version, short description and user-defined keys.
    public let metadata: ModelMetadata
    /// Whether the model declares itself updatable on device.
    public let isUpdatable: Bool
    /// The stages, depth first; the model itself when it is not a pipeline.
    public let stages: [Stage]
    /// The labels of the classifier that gives the prediction, when there is one.
    public let labels: [String]?
    /// The number of keys of the first dictionary vectorizer: the vocabulary.
    public let vocabularySize: Int?
    /// The natural-language model, when the model is one of Apple's.
    public let naturalLanguage: NaturalLanguageModel?

    /// Reads what a specification says.
    init(_ model: SpecModel) {
        let description = model.description_p
        specificationVersion = Int(model.specificationVersion)
        modelType = ModelType(model.type).name
        inputs = description.input.map(CoreMLFeatureDescription.init)
        outputs = description.output.map(CoreMLFeatureDescription.init)
        predictedFeatureName = description.predictedFeatureName.isEmpty ? nil : description.predictedFeatureName
        predictedProbabilitiesName = description.predictedProbabilitiesName.isEmpty ? nil : description.predictedProbabilitiesName
        let spec = description.metadata
        metadata = ModelMetadata(author: spec.author.isEmpty ? nil : spec.author,
                                 shortDescription: spec.shortDescription.isEmpty ? nil : spec.shortDescription,
                                 license: spec.license.isEmpty ? nil : spec.license,
                                 version: spec.versionString.isEmpty ? nil : spec.versionString,
                                 additional: spec.userDefined)
        isUpdatable = model.isUpdatable
        var stages: [Stage] = []
        Self.collect(model, path: [], into: &stages)
        self.stages = stages
        var labels: [String]?
        var vocabularySize: Int?
        var naturalLanguage: NaturalLanguageModel?
        Self.visit(model) { stage in
            switch stage.type {
            case .glmClassifier(let glm):
                let names: [String]
                switch glm.classLabels {
                case .stringClassLabels(let vector): names = vector.vector
                case .int64ClassLabels(let vector): names = vector.vector.map(String.init)
                case nil: names = []
                }
                if stage.description_p.output.contains(where: { $0.name == description.predictedFeatureName })
                    || labels == nil {
                    labels = names
                }
            case .dictVectorizer(let vectorizer) where vocabularySize == nil:
                switch vectorizer.map {
                case .stringToIndex(let keys): vocabularySize = keys.vector.count
                case .int64ToIndex(let keys): vocabularySize = keys.vector.count
                case nil: break
                }
            case .textClassifier(let nl), .gazetteer(let nl), .wordEmbedding(let nl):
                naturalLanguage = NaturalLanguageModel(type: ModelType(stage.type).name, revision: Int(nl.revision),
                                                       language: nl.language, labels: nl.stringClassLabels.vector,
                                                       parameterBytes: nl.modelParameterData.count)
                if !nl.stringClassLabels.vector.isEmpty { labels = nl.stringClassLabels.vector }
            case .wordTagger(let tagger):
                naturalLanguage = NaturalLanguageModel(type: "wordTagger", revision: Int(tagger.revision),
                                                       language: tagger.language, labels: tagger.stringTags.vector,
                                                       parameterBytes: tagger.modelParameterData.count)
                labels = tagger.stringTags.vector
            default: break
            }
        }
        self.labels = labels
        self.vocabularySize = vocabularySize
        self.naturalLanguage = naturalLanguage
    }

    /// The stages of a pipeline, children of a pipeline after its own entry.
    private static func collect(_ model: SpecModel, path: [Int], into stages: inout [Stage]) {
        let description = model.description_p
        stages.append(Stage(path: path.map(String.init).joined(separator: "."), type: ModelType(model.type).name,
                            inputs: description.input.map(\.name), outputs: description.output.map(\.name),
                            summary: summary(model)))
        if let children = pipelineModels(model) {
            for (index, child) in children.enumerated() { collect(child, path: path + [index + 1], into: &stages) }
        }
    }

    /// Calls `body` with every model in the tree, depth first, pipelines included.
    private static func visit(_ model: SpecModel, _ body: (SpecModel) -> Void) {
        body(model)
        for child in pipelineModels(model) ?? [] { visit(child, body) }
    }

    /// A pipeline's models, or `nil` for another type.
    static func pipelineModels(_ model: SpecModel) -> [SpecModel]? {
        switch model.type {
        case .pipeline(let pipeline): return pipeline.models
        case .pipelineClassifier(let classifier): return classifier.pipeline.models
        case .pipelineRegressor(let regressor): return regressor.pipeline.models
        default: return nil
        }
    }

    /// A stage's parameters in a few words.
    private static func summary(_ model: SpecModel) -> String {
        func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
        switch model.type {
        case .pipeline(let pipeline): return plural(pipeline.models.count, "stage")
        case .pipelineClassifier(let classifier): return plural(classifier.pipeline.models.count, "stage")
        case .pipelineRegressor(let regressor): return plural(regressor.pipeline.models.count, "stage")
        case .dictVectorizer(let vectorizer):
            switch vectorizer.map {
            case .stringToIndex(let keys): return plural(keys.vector.count, "string key")
            case .int64ToIndex(let keys): return plural(keys.vector.count, "int64 key")
            case nil: return "no keys"
            }
        case .featureVectorizer(let vectorizer):
            let total = vectorizer.inputList.reduce(UInt64(0)) { $0 &+ $1.inputDimensions }
            return "\(plural(vectorizer.inputList.count, "input")) into \(total) elements"
        case .glmClassifier(let glm):
            let labels: Int
            switch glm.classLabels {
            case .stringClassLabels(let vector): labels = vector.vector.count
            case .int64ClassLabels(let vector): labels = vector.vector.count
            case nil: labels = 0
            }
            return "\(plural(labels, "label")), \(plural(glm.weights.count, "row")) of \(glm.weights.first?.value.count ?? 0) weights, "
                + "\(glm.postEvaluationTransform == .probit ? "Probit" : "Logit"), "
                + (glm.classEncoding == .oneVsRest ? "OneVsRest" : "ReferenceClass")
        case .glmRegressor(let glm):
            return "\(plural(glm.weights.count, "row")) of \(glm.weights.first?.value.count ?? 0) weights"
        case .scaler(let scaler):
            return "\(plural(scaler.scaleValue.count, "scale")), \(plural(scaler.shiftValue.count, "shift"))"
        case .normalizer(let normalizer):
            switch normalizer.normType {
            case .l1: return "L1"
            case .l2: return "L2"
            case .lmax: return "LMax"
            case .UNRECOGNIZED(let code): return "norm \(code)"
            }
        case .oneHotEncoder(let encoder):
            switch encoder.categoryType {
            case .stringCategories(let vector): return plural(vector.vector.count, "category")
            case .int64Categories(let vector): return plural(vector.vector.count, "category")
            case nil: return "no categories"
            }
        case .categoricalMapping(let mapping):
            switch mapping.mappingType {
            case .stringToInt64Map(let map): return "\(plural(map.map.count, "string")) to int64"
            case .int64ToStringMap(let map): return "\(plural(map.map.count, "int64")) to strings"
            case nil: return "no mapping"
            }
        case .arrayFeatureExtractor(let extractor): return plural(extractor.extractIndex.count, "position")
        case .textClassifier(let nl), .gazetteer(let nl), .wordEmbedding(let nl):
            return "revision \(nl.revision), language \(nl.language.isEmpty ? "-" : nl.language), "
                + "\(nl.modelParameterData.count) bytes of weights in Apple's unpublished layout"
        case .wordTagger(let tagger):
            return "revision \(tagger.revision), language \(tagger.language.isEmpty ? "-" : tagger.language), "
                + "\(plural(tagger.stringTags.vector.count, "tag")), \(tagger.modelParameterData.count) bytes of weights in Apple's unpublished layout"
        case .imputer, .identity: return ""
        default: return "not evaluated by mlkit"
        }
    }
}
