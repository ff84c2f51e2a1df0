/// A model's type, by the name of its field in the format (`glmClassifier`, `pipeline`), and
/// what mlkit does with it.
struct ModelType: Sendable, Hashable {
    /// How mlkit treats a type.
    enum Support: Sendable, Hashable {
        /// A pipeline, whose stages mlkit evaluates in turn.
        case pipeline
        /// A stage mlkit evaluates.
        case evaluated
        /// One of Apple's natural-language models: described, not evaluated.
        case appleNaturalLanguage
        /// Anything else: named, not evaluated.
        case unsupported
    }

    /// The type's field name, as the format spells it.
    let name: String
    let support: Support

    init(_ type: SpecModel.OneOf_Type?) {
        switch type {
        case nil: (name, support) = ("no model type", .unsupported)
        case .pipelineClassifier: (name, support) = ("pipelineClassifier", .pipeline)
        case .pipelineRegressor: (name, support) = ("pipelineRegressor", .pipeline)
        case .pipeline: (name, support) = ("pipeline", .pipeline)
        case .glmRegressor: (name, support) = ("glmRegressor", .evaluated)
        case .glmClassifier: (name, support) = ("glmClassifier", .evaluated)
        case .oneHotEncoder: (name, support) = ("oneHotEncoder", .evaluated)
        case .imputer: (name, support) = ("imputer", .evaluated)
        case .featureVectorizer: (name, support) = ("featureVectorizer", .evaluated)
        case .dictVectorizer: (name, support) = ("dictVectorizer", .evaluated)
        case .scaler: (name, support) = ("scaler", .evaluated)
        case .categoricalMapping: (name, support) = ("categoricalMapping", .evaluated)
        case .normalizer: (name, support) = ("normalizer", .evaluated)
        case .arrayFeatureExtractor: (name, support) = ("arrayFeatureExtractor", .evaluated)
        case .identity: (name, support) = ("identity", .evaluated)
        case .textClassifier: (name, support) = ("textClassifier", .appleNaturalLanguage)
        case .wordTagger: (name, support) = ("wordTagger", .appleNaturalLanguage)
        case .gazetteer: (name, support) = ("gazetteer", .appleNaturalLanguage)
        case .wordEmbedding: (name, support) = ("wordEmbedding", .appleNaturalLanguage)
        case .supportVectorRegressor: (name, support) = ("supportVectorRegressor", .unsupported)
        case .treeEnsembleRegressor: (name, support) = ("treeEnsembleRegressor", .unsupported)
        case .neuralNetworkRegressor: (name, support) = ("neuralNetworkRegressor", .unsupported)
        case .bayesianProbitRegressor: (name, support) = ("bayesianProbitRegressor", .unsupported)
        case .supportVectorClassifier: (name, support) = ("supportVectorClassifier", .unsupported)
        case .treeEnsembleClassifier: (name, support) = ("treeEnsembleClassifier", .unsupported)
        case .neuralNetworkClassifier: (name, support) = ("neuralNetworkClassifier", .unsupported)
        case .kNearestNeighborsClassifier: (name, support) = ("kNearestNeighborsClassifier", .unsupported)
        case .neuralNetwork: (name, support) = ("neuralNetwork", .unsupported)
        case .itemSimilarityRecommender: (name, support) = ("itemSimilarityRecommender", .unsupported)
        case .mlProgram: (name, support) = ("mlProgram", .unsupported)
        case .customModel: (name, support) = ("customModel", .unsupported)
        case .linkedModel: (name, support) = ("linkedModel", .unsupported)
        case .classConfidenceThresholding: (name, support) = ("classConfidenceThresholding", .unsupported)
        case .nonMaximumSuppression: (name, support) = ("nonMaximumSuppression", .unsupported)
        case .visionFeaturePrint: (name, support) = ("visionFeaturePrint", .unsupported)
        case .soundAnalysisPreprocessing: (name, support) = ("soundAnalysisPreprocessing", .unsupported)
        case .audioFeaturePrint: (name, support) = ("audioFeaturePrint", .unsupported)
        case .serializedModel: (name, support) = ("serializedModel", .unsupported)
        }
    }

    /// The error that refuses to evaluate a stage of this type, saying why.
    func refusal(stage: String) -> CoreMLError {
        switch support {
        case .appleNaturalLanguage:
            return CoreMLError(.unsupportedModelType, "\(stage): Apple's \(name) keeps its weights in a blob whose "
                               + "layout Apple has not published, so mlkit cannot run it; `mlkit info` shows its "
                               + "description, labels, language and revision")
        case .unsupported where name == "no model type":
            return CoreMLError(.malformedModel, "\(stage): not a Core ML model: it names no model type")
        case .unsupported:
            return CoreMLError(.unsupportedModelType, "\(stage): mlkit does not evaluate \(name) models; it evaluates "
                               + "pipelines, glmClassifier, glmRegressor, dictVectorizer, featureVectorizer, scaler, "
                               + "normalizer, oneHotEncoder, imputer, categoricalMapping, arrayFeatureExtractor and identity")
        case .pipeline, .evaluated:
            return CoreMLError(.invalidModel, "\(stage): cannot be evaluated here")
        }
    }
}
