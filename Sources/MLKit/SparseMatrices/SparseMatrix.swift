/// Sparse rows in compressed sparse row (CSR) form: the layout of a featurized training set.
///
/// Row `r` holds `indices[rowStarts[r]..<rowStarts[r + 1]]` and the matching `values`, with
/// indices strictly increasing inside each row.
struct SparseMatrix: Sendable {
    /// Where each row starts in ``indices`` and ``values``, plus the end of the last row.
    private(set) var rowStarts: [Int] = [0]
    /// Column indices, row after row.
    private(set) var indices: [Int32] = []
    /// Values, row after row.
    private(set) var values: [Float] = []
    /// The number of columns (the featurizer's dimension).
    let columns: Int

    /// Creates an empty matrix with `columns` columns.
    init(columns: Int) { self.columns = columns }

    /// The number of rows.
    var rows: Int { rowStarts.count - 1 }

    /// The number of stored entries.
    var nonzeros: Int { indices.count }

    /// Appends a row of sorted, distinct indices and their values.
    mutating func appendRow<I: Collection<Int32>, V: Collection<Float>>(indices rowIndices: I, values rowValues: V) {
        indices.append(contentsOf: rowIndices)
        values.append(contentsOf: rowValues)
        rowStarts.append(indices.count)
    }

    /// Appends every row of `other`, which must have the same number of columns.
    mutating func appendRows(of other: SparseMatrix) {
        precondition(other.columns == columns)
        let offset = indices.count
        indices.append(contentsOf: other.indices)
        values.append(contentsOf: other.values)
        rowStarts.append(contentsOf: other.rowStarts.dropFirst().map { $0 + offset })
    }

    /// A row as a vector.
    func vector(at row: Int) -> SparseVector {
        let range = rowStarts[row]..<rowStarts[row + 1]
        return SparseVector(indices: Array(indices[range]), values: Array(values[range]))
    }

    /// The rows `selection`, in that order.
    func selecting(rows selection: [Int]) -> SparseMatrix {
        var result = SparseMatrix(columns: columns)
        for row in selection {
            let range = rowStarts[row]..<rowStarts[row + 1]
            result.appendRow(indices: indices[range], values: values[range])
        }
        return result
    }

    /// The same rows without the entries of columns `columns` and above, in a matrix of
    /// `columns` columns.
    func keepingColumns(below columns: Int) -> SparseMatrix {
        precondition(columns <= self.columns)
        var result = SparseMatrix(columns: columns)
        result.indices.reserveCapacity(indices.count)
        result.values.reserveCapacity(values.count)
        result.rowStarts.reserveCapacity(rowStarts.count)
        for row in 0..<rows {
            // A row's indices ascend, so the entries kept are its first ones.
            let range = rowStarts[row]..<rowStarts[row + 1]
            let end = indices[range].firstIndex { $0 >= columns } ?? range.upperBound
            result.appendRow(indices: indices[range.lowerBound..<end], values: values[range.lowerBound..<end])
        }
        return result
    }

    /// The same rows with each column `c` renamed `renaming[c]`, its entries dropped where that
    /// is negative, in a matrix of `columns` columns; each row's entries are sorted by their new
    /// index. Done in place, on `threads` threads (0: all cores), with the same result on any
    /// count: a training set's matrix is renamed without a second copy of it.
    consuming func renamingColumns(_ renaming: [Int32], columns: Int, threads: Int) -> SparseMatrix {
        precondition(renaming.count == self.columns)
        var result = SparseMatrix(columns: columns)
        swap(&result.rowStarts, &rowStarts)
        swap(&result.indices, &indices)
        swap(&result.values, &values)
        let rowStarts = result.rowStarts
        let kept = result.indices.withUnsafeMutableBufferPointer { indices in
            result.values.withUnsafeMutableBufferPointer { values in
                let shared = (indices: SharedPointer(indices.baseAddress!), values: SharedPointer(values.baseAddress!))
                return Parallel.balancedMap(rowStarts.count - 1, threads: threads) { rows in
                    // An entry as one key: the new index above the value's bits, so that sorting a
                    // row's keys sorts its entries, the dropped ones (index -1, all ones) last.
                    var keys: [UInt64] = []
                    var kept: [Int] = []
                    kept.reserveCapacity(rows.count)
                    for row in rows {
                        let range = rowStarts[row]..<rowStarts[row + 1]
                        keys.removeAll(keepingCapacity: true)
                        var count = 0
                        for position in range {
                            let renamed = renaming[Int(shared.indices.base[position])]
                            keys.append(UInt64(UInt32(bitPattern: renamed)) << 32
                                        | UInt64(shared.values.base[position].bitPattern))
                            count += renamed >= 0 ? 1 : 0
                        }
                        keys.withUnsafeMutableBufferPointer { Sorting.sortInPlace($0) }
                        for (offset, key) in keys.prefix(count).enumerated() {
                            shared.indices.base[range.lowerBound + offset] = Int32(truncatingIfNeeded: key >> 32)
                            shared.values.base[range.lowerBound + offset] = Float(bitPattern: UInt32(truncatingIfNeeded: key))
                        }
                        kept.append(count)
                    }
                    return kept
                }.flatMap { $0 }
            }
        }
        // Close the gaps the dropped entries left, row after row.
        var end = 0
        for row in kept.indices {
            let start = rowStarts[row]
            if start != end {
                for offset in 0..<kept[row] {
                    result.indices[end + offset] = result.indices[start + offset]
                    result.values[end + offset] = result.values[start + offset]
                }
            }
            end += kept[row]
            result.rowStarts[row + 1] = end
        }
        result.indices.removeLast(result.indices.count - end)
        result.values.removeLast(result.values.count - end)
        return result
    }

    /// Calls `body` with the indices and values of each row in `rows`, without copying.
    func forEachRow(in rows: Range<Int>, _ body: (_ row: Int, _ indices: UnsafeBufferPointer<Int32>,
                                                _ values: UnsafeBufferPointer<Float>) throws -> Void) rethrows {
        try indices.withUnsafeBufferPointer { allIndices in
            try values.withUnsafeBufferPointer { allValues in
                for row in rows {
                    let range = rowStarts[row]..<rowStarts[row + 1]
                    try body(row, UnsafeBufferPointer(rebasing: allIndices[range]),
                             UnsafeBufferPointer(rebasing: allValues[range]))
                }
            }
        }
    }

    /// A copy whose values `transform` rewrites row by row, in place; the indices stay.
    func mappingRows(_ transform: (_ indices: UnsafeBufferPointer<Int32>, _ values: UnsafeMutableBufferPointer<Float>) -> Void)
        -> SparseMatrix {
        var result = self
        indices.withUnsafeBufferPointer { allIndices in
            result.values.withUnsafeMutableBufferPointer { allValues in
                for row in 0..<rows {
                    let range = rowStarts[row]..<rowStarts[row + 1]
                    transform(UnsafeBufferPointer(rebasing: allIndices[range]), UnsafeMutableBufferPointer(rebasing: allValues[range]))
                }
            }
        }
        return result
    }
}
