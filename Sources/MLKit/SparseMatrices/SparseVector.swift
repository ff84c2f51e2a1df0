/// A sparse feature vector: sorted, distinct indices and their values.
///
/// Every classifier takes this one type. Indices are `Int32` and values `Float` to halve the
/// memory of a training set, the same layout LIBLINEAR and fastText use.
public struct SparseVector: Sendable, Hashable {
    /// The indices of the non-zero entries, strictly increasing.
    public private(set) var indices: [Int32]
    /// The value of each entry, in the order of ``indices``.
    public private(set) var values: [Float]

    /// Creates a vector from sorted, distinct indices and their values.
    /// - Parameters:
    ///   - indices: Strictly increasing indices.
    ///   - values: One value per index.
    /// - Precondition: `indices.count == values.count`, and the indices strictly increase.
    public init(indices: [Int32], values: [Float]) {
        precondition(indices.count == values.count, "SparseVector needs one value per index")
        precondition(zip(indices, indices.dropFirst()).allSatisfy { $0 < $1 }, "SparseVector indices must strictly increase")
        self.indices = indices
        self.values = values
    }

    /// Creates a vector from indices that the caller guarantees are sorted and distinct, as the
    /// featurizer's counting produces them, without checking them again.
    init(uncheckedIndices indices: [Int32], values: [Float]) {
        self.indices = indices
        self.values = values
    }

    /// The empty vector.
    public init() {
        indices = []
        values = []
    }

    /// The number of non-zero entries.
    public var count: Int { indices.count }

    /// The value at `index`, or 0.
    /// - Complexity: O(log n).
    public subscript(index: Int32) -> Float {
        var low = 0
        var high = indices.count
        while low < high {
            let mid = (low + high) / 2
            if indices[mid] < index { low = mid + 1 } else { high = mid }
        }
        return low < indices.count && indices[low] == index ? values[low] : 0
    }
}
