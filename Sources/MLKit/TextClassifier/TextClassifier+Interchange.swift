/// The weights of a classifier, for the package's own modules that write other model formats
/// (`MLKitCoreML`): not public API.
extension TextClassifier {
    /// A linear model's weights and how its scores become probabilities.
    package struct LinearWeights: Sendable {
        /// How scores become probabilities.
        package enum Probability: Sendable {
            /// `softmax(scores / temperature)`.
            case softmax(temperature: Float)
            /// One-vs-rest Platt scaling: `p_c ∝ 1 / (1 + exp(a_c · score_c + b_c))`, normalized.
            case platt(a: [Float], b: [Float])
        }

        /// The number of feature rows: the featurizer's dimension.
        package let features: Int
        /// The number of classes, in the order of ``TextClassifier/labels``.
        package let classes: Int
        /// `features × classes` weights, feature-major: `weights[feature * classes + class]`.
        package let weights: [Float]
        /// One bias per class.
        package let bias: [Float]
        package let probability: Probability
    }

    /// The weights of a linear model (naive Bayes, maximum entropy, SVM), or `nil` for the
    /// embedding classifier.
    package var linearWeights: LinearWeights? {
        guard case .linear(let model) = model else { return nil }
        let probability: LinearWeights.Probability
        switch model.probability {
        case .softmax(let temperature): probability = .softmax(temperature: temperature)
        case .platt(let a, let b): probability = .platt(a: a, b: b)
        }
        return LinearWeights(features: model.features, classes: model.classes, weights: model.denseWeights, bias: model.bias,
                             probability: probability)
    }

    /// The number of weights of a linear model's whole matrix (`features × classes`, `Int.max`
    /// when that overflows), or `nil` for the embedding classifier: what ``linearWeights``
    /// allocates for a model that keeps only its stored rows, to check before asking for it.
    package var linearWeightCount: Int? {
        guard case .linear(let model) = model else { return nil }
        let (count, overflow) = model.features.multipliedReportingOverflow(by: model.classes)
        return overflow ? .max : count
    }

    /// The inverse document frequency of each feature, with TF-IDF weighting.
    package var inverseDocumentFrequencies: [Float]? { featurizer.inverseDocumentFrequency }

    /// The vocabulary's keys by feature index, or `nil` when features are hashed.
    package var vocabularyTerms: [String]? { featurizer.vocabularyTerms }
}
