/// A featurized training set: one sparse row per example, a class index per row, and a
/// weight per class.
struct TrainingProblem: Sendable {
    /// The examples' feature vectors.
    let matrix: SparseMatrix
    /// The class of each row, in `0..<classCount`.
    let labels: [Int32]
    /// The number of classes.
    let classCount: Int
    /// The weight of each class's examples in the loss (all 1 unless class weights are asked for).
    let classWeights: [Float]

    /// Creates a problem.
    /// - Precondition: one label per row, each in `0..<classCount`, and one weight per class.
    init(matrix: SparseMatrix, labels: [Int32], classCount: Int, classWeights: [Float]? = nil) {
        precondition(matrix.rows == labels.count, "one label per row")
        precondition(labels.allSatisfy { $0 >= 0 && Int($0) < classCount }, "labels in 0..<classCount")
        self.matrix = matrix
        self.labels = labels
        self.classCount = classCount
        self.classWeights = classWeights ?? Array(repeating: 1, count: classCount)
        precondition(self.classWeights.count == classCount, "one weight per class")
    }

    /// Weights that make every class count as much in total: `n / (classes × n_class)`, as
    /// scikit-learn's `class_weight="balanced"` computes them.
    static func balancedClassWeights(labels: [Int32], classCount: Int) -> [Float] {
        var counts = [Int](repeating: 0, count: classCount)
        for label in labels { counts[Int(label)] += 1 }
        return counts.map { $0 == 0 ? 0 : Float(labels.count) / Float(classCount * $0) }
    }
}
