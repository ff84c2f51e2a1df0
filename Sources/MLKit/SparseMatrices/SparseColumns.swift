/// A sparse matrix stored column by column (compressed sparse column, CSC): the transpose of a
/// ``SparseMatrix``, with the rows of each column in increasing order.
///
/// Logistic regression computes its gradient `Xᵀ R` column by column from this layout: each
/// feature's gradient row is a sum over the documents that contain it, taken in document order,
/// so one worker owns each feature and the sum never depends on how the work was split.
struct SparseColumns: Sendable {
    /// Where each column starts in ``rows`` and ``values``, plus the end of the last column.
    let columnStarts: [Int]
    /// Row indices, column after column.
    let rows: [Int32]
    /// Values, column after column.
    let values: [Float]

    /// Transposes `matrix` by a counting sort on the column index.
    /// - Complexity: O(nonzeros + columns).
    init(transposing matrix: SparseMatrix) {
        var starts = [Int](repeating: 0, count: matrix.columns + 1)
        for index in matrix.indices { starts[Int(index) + 1] += 1 }
        for column in 0..<matrix.columns { starts[column + 1] += starts[column] }
        var next = starts
        var rows = [Int32](repeating: 0, count: matrix.nonzeros)
        var values = [Float](repeating: 0, count: matrix.nonzeros)
        next.withUnsafeMutableBufferPointer { next in
            rows.withUnsafeMutableBufferPointer { rows in
                values.withUnsafeMutableBufferPointer { columnValues in
                    matrix.forEachRow(in: 0..<matrix.rows) { row, indices, rowValues in
                        for position in indices.indices {
                            let slot = next[Int(indices[position])]
                            rows[slot] = Int32(row)
                            columnValues[slot] = rowValues[position]
                            next[Int(indices[position])] = slot + 1
                        }
                    }
                }
            }
        }
        self.columnStarts = starts
        self.rows = rows
        self.values = values
    }

    /// The number of columns.
    var columns: Int { columnStarts.count - 1 }

    /// Splits the columns into at most `parts` contiguous ranges of about equal work, where a
    /// column costs its non-zeros plus one (for the dense part of its row).
    func balancedRanges(parts: Int) -> [Range<Int>] {
        let parts = max(1, min(parts, columns))
        let total = columnStarts[columns] + columns
        var ranges: [Range<Int>] = []
        var start = 0
        for part in 1...parts {
            let target = total * part / parts
            var end = start
            while end < columns && columnStarts[end] + end < target { end += 1 }
            if part == parts { end = columns }
            ranges.append(start..<end)
            start = end
        }
        return ranges
    }
}
