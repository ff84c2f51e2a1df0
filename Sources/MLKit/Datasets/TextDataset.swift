/// A text-classification dataset: labelled examples in the order they were read.
///
/// Read one with ``DatasetReader``, check it with ``validatedForTraining(source:)``, and divide it
/// with ``split(validationFraction:testFraction:seed:)``.
public struct TextDataset: Sendable {
    /// The examples, in the order of the input.
    public let examples: [LabeledText]
    /// The distinct labels of ``examples``, sorted.
    public let labels: [String]

    /// Creates a dataset from examples, keeping their order.
    /// - Parameter examples: The labelled examples.
    /// - Complexity: O(*n* log *n*) in the number of examples, to collect the labels.
    public init(_ examples: [LabeledText]) {
        self.examples = examples
        self.labels = Set(examples.map(\.label)).sorted()
    }

    /// Creates a dataset from examples whose distinct labels a reader has already collected.
    /// - Parameter distinctLabels: Every label of `examples`, each at least once, in any order.
    init(_ examples: [LabeledText], distinctLabels: [String]) {
        self.examples = examples
        self.labels = Set(distinctLabels).sorted()
    }

    /// The number of examples.
    public var count: Int { examples.count }

    /// Returns this dataset if a classifier can be trained on it: it must hold at least one
    /// example and at least two labels.
    /// - Parameter source: The file or folder the dataset came from, named in the error.
    /// - Returns: This dataset, unchanged.
    /// - Throws: ``MLKitError/Code/invalidDataset`` if the dataset is empty or has only one label,
    ///   as in `texts.json: only one label ("Tech") — training needs at least two`.
    public func validatedForTraining(source: String? = nil) throws -> TextDataset {
        let location = source.map { MLKitError.Location(file: $0) }
        if examples.isEmpty {
            throw MLKitError(.invalidDataset, "the dataset is empty", at: location)
        }
        if labels.count == 1, let only = labels.first {
            throw MLKitError(.invalidDataset,
                             "only one label (\"\(only)\") — training needs at least two",
                             at: location)
        }
        return self
    }
}
