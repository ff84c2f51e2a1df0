/// The columns that a training matrix actually uses, renumbered `0..<k` in increasing order.
///
/// A hashed featurizer has `2^bits` columns, but a training set touches only a few of them:
/// 12,000 short texts use about 10^5 of 2^20 buckets. Trainers work on the compact columns
/// (`k × classes` weights instead of `2^bits × classes`: less memory, better cache use, shorter
/// optimizer vectors) and ``expand(_:classes:fill:)`` puts the weights back in the full,
/// feature-major layout at the end.
///
/// The map from full to compact index is a rank query on a bitmap of the used columns:
/// `compact(f) = prefix[f / 64] + popcount(word[f / 64] & (2^(f mod 64) − 1))`, which needs
/// `columns / 8 + columns / 16` bytes instead of a 4-byte table entry per column.
struct ColumnCompaction: Sendable {
    /// The number of columns of the full matrix.
    let fullColumns: Int
    /// The used columns, sorted: compact column `j` is full column `usedColumns[j]`.
    let usedColumns: [Int32]
    /// One bit per full column, set when the column is used.
    private let bitmap: [UInt64]
    /// The number of used columns before each bitmap word.
    private let rankBefore: [Int32]

    /// Finds the columns that `matrix` uses.
    /// - Complexity: O(nonzeros + columns / 64).
    init(matrix: SparseMatrix) {
        var bitmap = [UInt64](repeating: 0, count: (matrix.columns + 63) / 64)
        bitmap.withUnsafeMutableBufferPointer { bitmap in
            for index in matrix.indices { bitmap[Int(index) >> 6] |= 1 << UInt64(index & 63) }
        }
        var rankBefore = [Int32](repeating: 0, count: bitmap.count)
        var used: [Int32] = []
        var running: Int32 = 0
        for (wordIndex, word) in bitmap.enumerated() {
            rankBefore[wordIndex] = running
            running += Int32(word.nonzeroBitCount)
            var bits = word
            while bits != 0 {
                used.append(Int32(wordIndex * 64 + bits.trailingZeroBitCount))
                bits &= bits - 1
            }
        }
        self.fullColumns = matrix.columns
        self.usedColumns = used
        self.bitmap = bitmap
        self.rankBefore = rankBefore
    }

    /// The number of compact columns, `k`.
    var compactColumns: Int { usedColumns.count }

    /// Whether every column is used, so that compacting would change nothing.
    var isIdentity: Bool { usedColumns.count == fullColumns }

    /// The compact index of full column `column`, or `nil` if the training matrix never uses it.
    func compactIndex(of column: Int32) -> Int32? {
        let word = bitmap[Int(column) >> 6]
        let bit = UInt64(column & 63)
        guard word & (1 << bit) != 0 else { return nil }
        return rankBefore[Int(column) >> 6] + Int32((word & ((1 << bit) - 1)).nonzeroBitCount)
    }

    /// `matrix` with its columns renumbered to the compact range; entries in unused columns
    /// (possible only for a matrix other than the training one) are dropped.
    func compact(_ matrix: SparseMatrix) -> SparseMatrix {
        precondition(matrix.columns == fullColumns, "the matrix must have the featurizer's columns")
        if isIdentity { return matrix }
        var result = SparseMatrix(columns: compactColumns)
        var indices: [Int32] = []
        var values: [Float] = []
        matrix.forEachRow(in: 0..<matrix.rows) { _, rowIndices, rowValues in
            indices.removeAll(keepingCapacity: true)
            values.removeAll(keepingCapacity: true)
            for position in rowIndices.indices {
                guard let index = compactIndex(of: rowIndices[position]) else { continue }
                indices.append(index)
                values.append(rowValues[position])
            }
            result.appendRow(indices: indices, values: values)
        }
        return result
    }

    /// Feature-major weights over the full columns, from `compact` (`k × classes`, feature-major).
    /// - Parameters:
    ///   - compact: The trained weights of the compact columns.
    ///   - classes: The number of classes (the row length).
    ///   - fill: The weights of every unused column (one per class); zeros when `nil`.
    func expand(_ compact: [Float], classes: Int, fill: [Float]? = nil) -> [Float] {
        precondition(compact.count == compactColumns * classes)
        if isIdentity { return compact }
        var full: [Float]
        if let fill {
            precondition(fill.count == classes)
            full = []
            full.reserveCapacity(fullColumns * classes)
            for _ in 0..<fullColumns { full.append(contentsOf: fill) }
        } else {
            full = [Float](repeating: 0, count: fullColumns * classes)
        }
        full.withUnsafeMutableBufferPointer { full in
            compact.withUnsafeBufferPointer { compact in
                for (row, column) in usedColumns.enumerated() {
                    let target = full.baseAddress! + Int(column) * classes
                    target.update(from: compact.baseAddress! + row * classes, count: classes)
                }
            }
        }
        return full
    }
}
