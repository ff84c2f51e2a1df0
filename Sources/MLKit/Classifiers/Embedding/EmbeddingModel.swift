import Foundation

/// A trained embedding classifier in the manner of fastText (Joulin et al., "Bag of Tricks
/// for Efficient Text Classification", 2016): a document is the weighted mean of its
/// features' embeddings, followed by a linear layer and a softmax.
///
/// For a document with feature indices `f_i` and values `v_i` (counts), keeping only the
/// features the model has a row for (`K`, the known features):
///
///     h = Σ_{i∈K} v_i · E[row(f_i), :] / Σ_{i∈K} v_i        (h = 0 when K is empty)
///     s_c = b_c + Σ_k h_k · W[k, c]                          (the scores, c < classes)
///     p_c = exp(s_c) / Σ_j exp(s_j)                          (the probabilities)
///
/// Storage is compact: E holds rows only for the features seen in training (at least
/// `minCount` documents), so its size depends on the training vocabulary, not on the
/// featurizer's `2^bits` buckets. Every array is plain `[Float]` or `[Int32]`, ready to be
/// written as little-endian sections of a model file:
///
/// | field | count | layout |
/// |---|---|---|
/// | ``featureIDs`` | n | `Int32`, strictly increasing; row r of E belongs to feature `featureIDs[r]` |
/// | ``embeddings`` | n × d | `Float`, row-major: `E[r, k] = embeddings[r * d + k]` |
/// | ``output`` | d × C | `Float`, row-major: `W[k, c] = output[k * C + c]` |
/// | ``bias`` | C | `Float` |
///
/// The feature-to-row lookup (``EmbeddingRowTable``) is rebuilt from ``featureIDs`` by the
/// initializer and is not part of the stored form.
struct EmbeddingModel: Sendable, Equatable {
    /// The embedding dimension d.
    let dimension: Int
    /// The number of classes C.
    let classes: Int
    /// The featurizer's dimension: every feature index lies in `0..<buckets`.
    let buckets: Int
    /// The feature index of each embedding row, strictly increasing.
    let featureIDs: [Int32]
    /// E: `featureIDs.count × dimension` floats, row-major; in place in the file's bytes for a
    /// model read from a file (``FlatArray``).
    let embeddings: FlatArray<Float>
    /// W: `dimension × classes` floats, row-major.
    let output: [Float]
    /// b: one bias per class.
    let bias: [Float]
    /// Feature index → row.
    let table: EmbeddingRowTable

    /// Creates a model from its stored arrays.
    /// - Precondition: the array sizes match the layout above, and `featureIDs` is strictly
    ///   increasing inside `0..<buckets`.
    init(dimension: Int, classes: Int, buckets: Int, featureIDs: [Int32], embeddings: [Float],
         output: [Float], bias: [Float]) {
        self.init(dimension: dimension, classes: classes, buckets: buckets, featureIDs: featureIDs,
                  embeddings: FlatArray(embeddings), output: output, bias: bias)
    }

    /// Creates a model from its stored arrays, E given in place.
    init(dimension: Int, classes: Int, buckets: Int, featureIDs: [Int32], embeddings: FlatArray<Float>,
         output: [Float], bias: [Float]) {
        precondition(dimension > 0 && classes > 0, "a positive dimension and class count")
        precondition(embeddings.count == featureIDs.count * dimension, "n × d embeddings")
        precondition(output.count == dimension * classes && bias.count == classes, "d × C output and C biases")
        precondition(zip(featureIDs, featureIDs.dropFirst()).allSatisfy { $0 < $1 }, "feature indices increase")
        precondition(featureIDs.allSatisfy { $0 >= 0 && Int($0) < buckets }, "feature indices lie in 0..<buckets")
        self.dimension = dimension
        self.classes = classes
        self.buckets = buckets
        self.featureIDs = featureIDs
        self.embeddings = embeddings
        self.output = output
        self.bias = bias
        self.table = EmbeddingRowTable(features: featureIDs)
    }

    /// The number of embedding rows n.
    var rowCount: Int { featureIDs.count }

    /// The size of the stored arrays in bytes: `4 · (n + n·d + d·C + C)`.
    var storedByteCount: Int { 4 * (featureIDs.count + embeddings.count + output.count + bias.count) }

    // MARK: - One document

    /// Writes the document's hidden vector `h` (the weighted mean of its known features'
    /// embeddings) into `hidden`, `dimension` floats.
    /// - Returns: `Σ v_i` over the known features (0 if the model knows none, and then `h = 0`).
    func hidden(indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>,
                into hidden: UnsafeMutablePointer<Float>) -> Float {
        let dimension = self.dimension
        hidden.update(repeating: 0, count: dimension)
        var total: Float = 0
        table.withLookup { row in
            embeddings.withUnsafeBufferPointer { embeddings in
                let base = embeddings.baseAddress!
                for position in 0..<indices.count {
                    let found = row(indices[position])
                    if found < 0 { continue }
                    let value = values[position]
                    total += value
                    SparseKernels.addScaled(value, base + Int(found) &* dimension, to: hidden, count: dimension)
                }
            }
        }
        if total > 0 {
            let inverse = 1 / total
            for lane in 0..<dimension { hidden[lane] *= inverse }
        }
        return total
    }

    /// Writes the `classes` scores `s = b + Wᵀh` of one sparse document into `scores`.
    ///
    /// The product `Wᵀh` goes through the SIMD kernel
    /// ``EmbeddingKernels/multiplyTransposed(x:a:rows:width:into:)`` up to 16 classes and through
    /// `cblas_sgemv` above: measured per document at d = 64, the SIMD kernel took 145 ns against
    /// 194 ns for 2 classes and 155 against 192 for 8, while for 39 classes sgemv took 605 ns
    /// against 1,152 (OpenBLAS picks AVX kernels at run time; this module is compiled for the
    /// baseline SSE2 target).
    func scores(indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>,
                into scores: UnsafeMutableBufferPointer<Float>) {
        self.scores(indices: indices, values: values, into: scores, usingGEMV: classes > 16)
    }

    /// ``scores(indices:values:into:)`` with the product chosen by the caller: `cblas_sgemv`
    /// when `usingGEMV`, the SIMD kernel otherwise. Both are kept so tests and measurements can
    /// compare them.
    func scores(indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>,
                into scores: UnsafeMutableBufferPointer<Float>, usingGEMV: Bool) {
        precondition(scores.count >= classes, "room for one score per class")
        withUnsafeTemporaryAllocation(of: Float.self, capacity: dimension) { hidden in
            _ = self.hidden(indices: indices, values: values, into: hidden.baseAddress!)
            let target = scores.baseAddress!
            for lane in 0..<classes { target[lane] = bias[lane] }
            output.withUnsafeBufferPointer { output in
                if usingGEMV {
                    DenseMath.gemv(transpose: true, m: dimension, n: classes, a: output.baseAddress!, lda: classes,
                                   x: hidden.baseAddress!, beta: 1, y: target)
                } else {
                    EmbeddingKernels.multiplyTransposed(x: hidden.baseAddress!, a: output.baseAddress!,
                                                        rows: dimension, width: classes, into: target)
                }
            }
        }
    }

    /// Turns the scores in `values` into probabilities, in place: `p = softmax(s)`.
    func probabilities(fromScores values: UnsafeMutableBufferPointer<Float>) {
        EmbeddingKernels.softmax(values.baseAddress!, count: values.count)
    }

    /// The class probabilities of one sparse document.
    func probabilities(indices: UnsafeBufferPointer<Int32>, values: UnsafeBufferPointer<Float>) -> [Float] {
        var result = [Float](repeating: 0, count: classes)
        result.withUnsafeMutableBufferPointer { result in
            scores(indices: indices, values: values, into: result)
            probabilities(fromScores: result)
        }
        return result
    }

    /// The class probabilities of a feature vector.
    func probabilities(of vector: SparseVector) -> [Float] {
        vector.indices.withUnsafeBufferPointer { indices in
            vector.values.withUnsafeBufferPointer { values in probabilities(indices: indices, values: values) }
        }
    }

    // MARK: - Many documents

    /// The scores of `rows` of `matrix`, `rows.count × classes` floats, row-major.
    ///
    /// Documents go in blocks of `blockSize`: the block's hidden vectors are gathered into a
    /// `B × d` matrix H, then one `cblas_sgemm` computes `S = H·W + 1bᵀ` (B×d · d×C). The
    /// results equal ``scores(indices:values:into:)`` up to float rounding (the products sum
    /// in a different order), and so do a row's scores in blocks that start elsewhere: BLAS may
    /// sum a row differently with its place in the block.
    func scores(of matrix: SparseMatrix, rows: Range<Int>? = nil, blockSize: Int = 256) -> [Float] {
        let rows = rows ?? 0..<matrix.rows
        let classes = self.classes
        let dimension = self.dimension
        var result = [Float](repeating: 0, count: rows.count * classes)
        var hidden = [Float](repeating: 0, count: max(1, blockSize) * dimension)
        result.withUnsafeMutableBufferPointer { result in
            hidden.withUnsafeMutableBufferPointer { hidden in
                output.withUnsafeBufferPointer { output in
                    var start = rows.lowerBound
                    while start < rows.upperBound {
                        let end = min(rows.upperBound, start + max(1, blockSize))
                        matrix.forEachRow(in: start..<end) { row, indices, values in
                            _ = self.hidden(indices: indices, values: values,
                                            into: hidden.baseAddress! + (row - start) * dimension)
                        }
                        let block = result.baseAddress! + (start - rows.lowerBound) * classes
                        for offset in 0..<(end - start) {
                            for lane in 0..<classes { block[offset * classes + lane] = bias[lane] }
                        }
                        DenseMath.gemm(m: end - start, n: classes, k: dimension, a: hidden.baseAddress!, lda: dimension,
                                       b: output.baseAddress!, ldb: classes, beta: 1, c: block, ldc: classes)
                        start = end
                    }
                }
            }
        }
        return result
    }

    /// The most probable class of each of `rows` of `matrix` (the first on ties).
    func predictedClasses(of matrix: SparseMatrix, rows: Range<Int>? = nil) -> [Int] {
        let scores = scores(of: matrix, rows: rows)
        return stride(from: 0, to: scores.count, by: classes).map { start in
            var best = start
            for lane in start..<(start + classes) where scores[lane] > scores[best] { best = lane }
            return best - start
        }
    }
}
