/// The dual coordinate descent solver of L2-regularized L2-loss SVMs with a bias feature:
/// LIBLINEAR's `-s 1 -B 1` (Hsieh, Chang, Lin, Keerthi & Sundararajan, "A dual coordinate
/// descent method for large-scale linear SVM", ICML 2008, Algorithm 1 with the shrinking of
/// Section 3.2), run for several binary problems ("lanes") over the same rows at once.
///
/// Each lane `l` solves, over `w` and the bias `w_b` (the regularized weight of a constant
/// feature 1), with labels `yᵢ = ±1` (positive when row `i` has the lane's class) and costs `Cᵢ`
/// (`C₊` or `C₋`):
///
///     min ½(‖w‖² + w_b²) + Σᵢ Cᵢ max(0, 1 − yᵢ(w·xᵢ + w_b))²
///
/// through its dual `min_α ½ αᵀ Q̄ α − eᵀα` subject to `α ≥ 0`, with `Q̄ = Q + D`,
/// `Qᵢⱼ = yᵢyⱼ(xᵢ·xⱼ + 1)`, `Dᵢᵢ = 1/(2Cᵢ)`, keeping `w = Σᵢ αᵢ yᵢ xᵢ` up to date. Each outer
/// iteration visits the rows in a fresh random order (a forward Fisher–Yates pass of
/// ``SplitMix64``, as LIBLINEAR's `j = i + rand() % (l − i)`). For each row still active in a
/// lane it computes `G = yᵢ(w·xᵢ + w_b) − 1 + αᵢ Dᵢᵢ` and the projected gradient `PG`
/// (`min(G, 0)` at `αᵢ = 0`, else `G`), then sets `αᵢ ← max(αᵢ − G/Q̄ᵢᵢ, 0)` and updates `w`.
/// A row at `αᵢ = 0` with `G` above the lane's largest `PG` of the previous pass is shrunk
/// (skipped by that lane). A lane stops when `max PG − min PG ≤ ε` over a pass in which no row
/// was shrunk (if rows were shrunk, they are all reactivated first, as LIBLINEAR does), or after
/// `maxIterations` passes.
///
/// Why lanes: one-vs-rest problems share their rows, and the weights are stored feature-major
/// (`(features + 1) × lanes`, the last row the bias). Visiting a row computes the margins of all
/// lanes with one SIMD pass over contiguous weight rows (``SparseKernels/accumulateRows``) and
/// updates them the same way, instead of one cache miss per lane and feature. A lane's
/// iterates depend only on its own data and on the sequence of visiting orders, which every
/// lane shares: so each lane follows exactly the algorithm above (its visiting order is a
/// uniformly random order of its active rows), and its result does not depend on which other
/// lanes run beside it. Only the random stream differs from LIBLINEAR's.
///
/// Columns that one row alone has a value in (a vocabulary's rare n-grams) never enter the
/// passes. Their weight is `w_jl = αᵢₗ yᵢₗ xᵢⱼ`, since only row `i` contributes to it, so their
/// part of row `i`'s margin is `αᵢₗ yᵢₗ sᵢ` with `sᵢ = Σⱼ xᵢⱼ²` over those columns, and `G` becomes
/// `yᵢ(w'·xᵢ + w_b) − 1 + αᵢ(Dᵢᵢ + sᵢ)` over the other columns `w'`: the same iterates, without
/// their weight rows. On fortunes-topic's training split they are 77% of the columns and 27% of
/// the entries, so the passes fetch 27% fewer weight rows from a matrix a quarter the size
/// (debian-sections: 67% and 13%). ``Solution/weights`` puts them back at the end. Columns no
/// row uses get weight 0.
///
/// Weights and dual variables are single precision; margins are accumulated in single
/// precision too, far below the `ε = 0.1` scale of the stopping rule.
struct DualCoordinateDescent: Sendable {
    /// The training rows over the columns that two rows or more have values in, renumbered
    /// `0..<k` in order (``sharedIndex``): what the passes read.
    let matrix: SparseMatrix
    /// The training matrix as given, whose other columns ``Solution/weights`` fills from the
    /// dual variables (its storage is shared, not copied).
    let training: SparseMatrix
    /// For each column of ``training``, its column in ``matrix``, or −1 if fewer than two rows
    /// use it.
    let sharedIndex: [Int32]
    /// `sᵢ`: the sum of the squares of row `i`'s values in columns no other row has.
    let soleSquares: [Float]
    /// The class of each row.
    let labels: [Int32]
    /// `xᵢ·xᵢ + 1` per row over all its columns (the 1 is the bias feature).
    let squaredNorms: [Float]
    /// The stopping tolerance `ε` on `max PG − min PG`.
    let tolerance: Float
    /// The largest number of outer iterations per lane.
    let maxIterations: Int
    /// The most lanes a row may be active in for a pass to visit it lane by lane rather than with
    /// a SIMD pass over all the run's lanes (`nil`: ``defaultLaneListLimit(lanes:)`` of each run;
    /// a negative limit always takes the SIMD pass). Either way gives the same iterates bit for
    /// bit; only the time differs.
    let laneListLimit: Int?

    /// One binary problem: the rows of `positiveClass` against all others.
    struct Lane: Sendable {
        /// The class whose rows are positive.
        let positiveClass: Int32
        /// `C₊`, the cost of positive rows.
        let positiveCost: Double
        /// `C₋`, the cost of negative rows.
        let negativeCost: Double
    }

    /// The solutions of a run of lanes.
    struct Solution: Sendable {
        /// `w` of every lane over the training matrix's columns, feature-major (`columns × lanes`).
        let weights: [Float]
        /// `w_b` of every lane.
        let bias: [Float]
        /// The dual variables `α`, row-major (`rows × lanes`): a start for a nearby problem.
        let alpha: [Float]
        /// Outer iterations run, per lane.
        let iterations: [Int]
    }

    /// The default ``laneListLimit`` for a run of `lanes` lanes: an eighth of them. A row's SIMD
    /// pass reads each of its features' weight rows whole, `lanes` floats (`lanes / 16` cache
    /// lines) each, and takes a step in every lane; the lane-by-lane visit reads one weight per
    /// feature and active lane, each from its own cache line at worst, and skips the other lanes.
    /// On wordnet-hypernyms (249 classes, two runs of 124 and 125 lanes) training took 0.82× the
    /// time with an eighth, against never visiting lane by lane; a fourth or a sixteenth were
    /// within the noise of an eighth.
    static func defaultLaneListLimit(lanes: Int) -> Int { lanes / 8 }

    /// Prepares the solver for the rows of `matrix` and their classes.
    init(matrix: SparseMatrix, labels: [Int32], tolerance: Double, maxIterations: Int, laneListLimit: Int? = nil) {
        // How many rows use each column (2 standing for "two or more"), then the new number
        // of each shared column.
        var uses = [UInt8](repeating: 0, count: matrix.columns)
        for column in matrix.indices where uses[Int(column)] < 2 { uses[Int(column)] += 1 }
        var sharedIndex = [Int32](repeating: -1, count: matrix.columns)
        var shared: Int32 = 0
        for column in 0..<matrix.columns where uses[column] == 2 {
            sharedIndex[column] = shared
            shared += 1
        }
        var reduced = SparseMatrix(columns: Int(shared))
        var norms = [Float](repeating: 1, count: matrix.rows)
        var soleSquares = [Float](repeating: 0, count: matrix.rows)
        var rowIndices: [Int32] = [], rowValues: [Float] = []
        matrix.forEachRow(in: 0..<matrix.rows) { row, indices, values in
            var total: Double = 1, sole: Double = 0
            rowIndices.removeAll(keepingCapacity: true)
            rowValues.removeAll(keepingCapacity: true)
            for (column, value) in zip(indices, values) {
                total += Double(value) * Double(value)
                if sharedIndex[Int(column)] >= 0 {
                    rowIndices.append(sharedIndex[Int(column)])
                    rowValues.append(value)
                } else {
                    sole += Double(value) * Double(value)
                }
            }
            reduced.appendRow(indices: rowIndices, values: rowValues)
            norms[row] = Float(total)
            soleSquares[row] = Float(sole)
        }
        self.matrix = reduced
        training = matrix
        self.sharedIndex = sharedIndex
        self.soleSquares = soleSquares
        self.labels = labels
        squaredNorms = norms
        self.tolerance = Float(tolerance)
        self.maxIterations = maxIterations
        self.laneListLimit = laneListLimit
    }

    /// Where a run of lanes writes its weights and dual variables: the columns
    /// `offset ..< offset + lanes` of row-major arrays `width` columns wide, so that the runs of
    /// several threads fill one array each, side by side, without merging them afterwards.
    struct Destination {
        /// `training.columns × width` weights, feature-major, uninitialized until written.
        let weights: UnsafeMutablePointer<Float>
        /// `rows × width` dual variables, uninitialized until written.
        let alpha: UnsafeMutablePointer<Float>
        /// The lanes of all the runs.
        let width: Int
        /// The first lane of this run.
        let offset: Int
    }

    /// Solves `lanes` together, visiting rows in the orders drawn from `SplitMix64(seed)`.
    /// - Parameter start: Dual variables to start from instead of 0, row-major (`rows × lanes`);
    ///   rows past its end start at 0. Any `α ≥ 0` is feasible, and the solution of a nearby
    ///   problem (another `C`, fewer columns, or a subset of the rows) is close to this one's, so
    ///   the solver needs fewer passes; the result is another point within the tolerance.
    func solve(lanes: [Lane], seed: UInt64, start: [Float]? = nil) -> Solution {
        var run: (bias: [Float], iterations: [Int]) = ([], [])
        let (weights, alpha) = [Float].filled(training.columns * lanes.count, matrix.rows * lanes.count) {
            run = solve(lanes: lanes, seed: seed, start: start,
                        into: Destination(weights: $0, alpha: $1, width: lanes.count, offset: 0))
        }
        return Solution(weights: weights, bias: run.bias, alpha: alpha, iterations: run.iterations)
    }

    /// ``solve(lanes:seed:start:)``, writing the weights over all the training matrix's columns
    /// and the dual variables into `destination`; returns the biases and the iterations of each
    /// lane.
    /// - Parameter start: Dual variables to start from, laid out as `destination`'s: row-major,
    ///   `destination.width` wide, this run's lanes from column `destination.offset`.
    func solve(lanes: [Lane], seed: UInt64, start: [Float]?, into destination: Destination)
        -> (bias: [Float], iterations: [Int]) {
        let state = LaneState(solver: self, lanes: lanes)
        if let start { state.start(from: start, width: destination.width, offset: destination.offset) }
        var generator = SplitMix64(seed: seed)
        let order = SharedBuffer<Int32>(count: matrix.rows, repeating: 0)
        for row in 0..<matrix.rows { order.base[row] = Int32(row) }
        matrix.rowStarts.withUnsafeBufferPointer { starts in
            matrix.indices.withUnsafeBufferPointer { indices in
                matrix.values.withUnsafeBufferPointer { values in
                    let rows = RowPointers(starts: starts.baseAddress!, indices: indices.baseAddress!,
                                           values: values.baseAddress!)
                    while state.hasRunningLanes {
                        Self.shuffle(order, with: &generator)
                        state.pass(rows, order: order)
                        state.finishPass(tolerance: tolerance, maxIterations: maxIterations)
                    }
                }
            }
        }
        state.write(into: destination)
        return (state.bias, state.iterations)
    }

    /// A forward Fisher–Yates shuffle: for each `i`, swap with `j` uniform in `i..<n`.
    private static func shuffle(_ order: SharedBuffer<Int32>, with generator: inout SplitMix64) {
        let count = order.count
        for position in 0..<count {
            let pick = position + Int(generator.next(below: UInt64(count - position)))
            let kept = order.base[position]
            order.base[position] = order.base[pick]
            order.base[pick] = kept
        }
    }
}

/// The rows of a CSR matrix as raw pointers, for the solver's inner loop.
private struct RowPointers {
    let starts: UnsafePointer<Int>
    let indices: UnsafePointer<Int32>
    let values: UnsafePointer<Float>
}

/// The variables of a run of lanes, in buffers that the inner loop reaches through plain pointers.
private final class LaneState {
    let solver: DualCoordinateDescent
    let lanes: [DualCoordinateDescent.Lane]
    let laneCount: Int
    let rows: Int
    let features: Int
    /// `(features + 1) × lanes` weights, feature-major; the last row is the bias.
    let weights: SharedBuffer<Float>
    /// `rows × lanes` dual variables.
    let alpha: SharedBuffer<Float>
    /// `rows × lanes` flags: 1 while the row is active in the lane.
    let active: SharedBuffer<UInt8>
    /// The number of lanes in which each row is active (0: the row is skipped).
    let activeLanes: SharedBuffer<Int32>
    /// `D` for positive and negative rows, per lane.
    let positiveDiagonal: SharedBuffer<Float>
    let negativeDiagonal: SharedBuffer<Float>
    /// The class, `xᵢ·xᵢ + 1` and `sᵢ` of each row.
    let labels: SharedBuffer<Int32>
    let squaredNorms: SharedBuffer<Float>
    let soleSquares: SharedBuffer<Float>
    /// Per lane: active rows, `max PG` of the previous pass, this pass's extremes, passes run,
    /// and whether the lane has stopped.
    let activeRows: SharedBuffer<Int>
    let previousMax: SharedBuffer<Float>
    let passMax: SharedBuffer<Float>
    let passMin: SharedBuffer<Float>
    /// The positive class of each lane.
    let positiveClasses: SharedBuffer<Int32>
    var iterations: [Int]
    var stopped: [Bool]
    /// Scratch: the margins and the steps of the current row.
    let margins: SharedBuffer<Float>
    let steps: SharedBuffer<Float>
    /// The most lanes a row may be active in to be visited lane by lane
    /// (``DualCoordinateDescent/laneListLimit``), and scratch for the list of those lanes.
    let laneListLimit: Int
    let laneList: SharedBuffer<Int32>

    /// Starts every lane at `α = 0`, `w = 0`, with every row active.
    init(solver: DualCoordinateDescent, lanes: [DualCoordinateDescent.Lane]) {
        self.solver = solver
        self.lanes = lanes
        laneCount = lanes.count
        rows = solver.matrix.rows
        features = solver.matrix.columns
        weights = SharedBuffer(count: (features + 1) * laneCount, repeating: 0)
        alpha = SharedBuffer(count: rows * laneCount, repeating: 0)
        active = SharedBuffer(count: rows * laneCount, repeating: 1)
        activeLanes = SharedBuffer(count: rows, repeating: Int32(laneCount))
        positiveDiagonal = SharedBuffer(copying: lanes.map { Float(0.5 / $0.positiveCost) })
        negativeDiagonal = SharedBuffer(copying: lanes.map { Float(0.5 / $0.negativeCost) })
        labels = SharedBuffer(copying: solver.labels)
        squaredNorms = SharedBuffer(copying: solver.squaredNorms)
        soleSquares = SharedBuffer(copying: solver.soleSquares)
        activeRows = SharedBuffer(count: laneCount, repeating: rows)
        previousMax = SharedBuffer(count: laneCount, repeating: .infinity)
        passMax = SharedBuffer(count: laneCount, repeating: -.infinity)
        passMin = SharedBuffer(count: laneCount, repeating: .infinity)
        positiveClasses = SharedBuffer(copying: lanes.map(\.positiveClass))
        iterations = Array(repeating: 0, count: laneCount)
        stopped = Array(repeating: false, count: laneCount)
        margins = SharedBuffer(count: laneCount, repeating: 0)
        steps = SharedBuffer(count: laneCount, repeating: 0)
        laneListLimit = solver.laneListLimit ?? DualCoordinateDescent.defaultLaneListLimit(lanes: laneCount)
        laneList = SharedBuffer(count: laneCount, repeating: 0)
    }

    var hasRunningLanes: Bool { stopped.contains(false) }

    /// `w_b` of every lane: the last row of the weights.
    var bias: [Float] { Array(UnsafeBufferPointer(start: weights.base + features * laneCount, count: laneCount)) }

    /// Sets `α` to the columns `offset ..< offset + lanes` of `start`, row-major and `width`
    /// wide (clamped at 0; rows past its end stay at 0), and `w = Σᵢ αᵢ yᵢ xᵢ`,
    /// `w_b = Σᵢ αᵢ yᵢ` to match.
    func start(from start: [Float], width: Int, offset: Int) {
        let lanes = laneCount, startRows = min(rows, start.count / max(1, width))
        let alpha = alpha.base, labels = labels.base, positiveClasses = positiveClasses.base, steps = steps.base
        let biasRow = weights.base + features * lanes
        start.withUnsafeBufferPointer { start in
            solver.matrix.forEachRow(in: 0..<startRows) { row, indices, values in
                var moved = false
                for lane in 0..<lanes {
                    let value = max(0, start[row * width + offset + lane])
                    alpha[row * lanes + lane] = value
                    steps[lane] = positiveClasses[lane] == labels[row] ? value : -value
                    moved = moved || value > 0
                }
                // Most rows are outside the margin of every lane, with α = 0: nothing to add.
                if moved { update(indices, values, biasRow: biasRow) }
            }
        }
    }

    /// One pass over the rows in `order`, updating every lane in which a row is active.
    ///
    /// A row active in all its lanes, or most, is visited with SIMD passes over every lane: its
    /// margins, its step, its update. Once shrinking has taken a row out of all but a few lanes
    /// (``laneListLimit``), as it does for most rows in the last passes of a one-vs-rest run with
    /// many classes, it is visited lane by lane: only its active lanes' margins are computed and
    /// only their weights updated. Each lane's arithmetic is the same, in the same order (a
    /// lane's margin adds the features in row order, one multiply and one add each; adding a step
    /// of 0 leaves a weight as it is, since the weights start at +0 and a sum is −0 only when
    /// both its terms are), so the iterates are bit-identical.
    func pass(_ rowPointers: RowPointers, order: SharedBuffer<Int32>) {
        let lanes = laneCount, weights = weights.base, alpha = alpha.base, active = active.base
        let previousMax = previousMax.base, passMax = passMax.base, passMin = passMin.base
        let positiveClasses = positiveClasses.base, labels = labels.base, squaredNorms = squaredNorms.base
        let positiveDiagonal = positiveDiagonal.base, negativeDiagonal = negativeDiagonal.base
        let margins = margins.base, steps = steps.base, activeLanes = activeLanes.base, soleSquares = soleSquares.base
        let biasRow = weights + features * lanes
        // Weights far larger than the cache: fetch the next row's weight rows while this row is
        // worked on, so that their misses overlap with the work instead of following it.
        let prefetches = features * lanes >= LinearModel.prefetchThreshold
        let step = LaneStep(lanes: lanes, margins: margins, positiveClasses: positiveClasses,
                            positiveDiagonal: positiveDiagonal, negativeDiagonal: negativeDiagonal,
                            previousMax: previousMax, passMax: passMax, passMin: passMin, steps: steps,
                            activeRows: activeRows.base)
        for position in 0..<rows {
            let row = Int(order.base[position])
            if prefetches {
                // Further ahead, the entries of the row whose weight rows will be prefetched then:
                // the rows are visited in random order, so its indices would miss the cache just
                // when their weight rows are wanted.
                if position + 8 < rows {
                    let ahead = Int(order.base[position + 8])
                    let aheadStart = rowPointers.starts[ahead]
                    let aheadLast = max(aheadStart, rowPointers.starts[ahead + 1] - 1)
                    prefetchForReading(rowPointers.indices + aheadStart)
                    prefetchForReading(rowPointers.values + aheadStart)
                    prefetchForReading(rowPointers.indices + aheadLast)
                    prefetchForReading(rowPointers.values + aheadLast)
                }
                if position + 2 < rows {
                    let next = Int(order.base[position + 2])
                    prefetchWeights(of: next, rowPointers)
                }
            }
            guard activeLanes[row] > 0 else { continue }
            let start = rowPointers.starts[row], end = rowPointers.starts[row + 1]
            let indices = UnsafeBufferPointer(start: rowPointers.indices + start, count: end - start)
            let values = UnsafeBufferPointer(start: rowPointers.values + start, count: end - start)
            if Int(activeLanes[row]) <= laneListLimit {
                visitLaneByLane(row, indices, values, step: step, biasRow: biasRow)
                continue
            }
            margins.update(from: biasRow, count: lanes)
            SparseKernels.accumulateRows(indices: indices, values: values, weights: weights, classes: lanes,
                                         into: margins)
            let slots = row * lanes
            if step.run(label: labels[row], curvatureBase: squaredNorms[row], sole: soleSquares[row],
                        alpha: alpha + slots, active: active + slots, activeLanes: activeLanes + row) {
                update(indices, values, biasRow: biasRow)
            }
        }
    }

    /// Prefetches the weights that visiting `row` will read: its features' whole weight rows, or
    /// only its active lanes' weights when it will be visited lane by lane; nothing when it is
    /// active in no lane.
    @inline(__always)
    private func prefetchWeights(of row: Int, _ rowPointers: RowPointers) {
        let lanes = laneCount, weights = weights.base, activeLanes = Int(activeLanes.base[row])
        guard activeLanes > 0 else { return }
        let start = rowPointers.starts[row]
        let indices = UnsafeBufferPointer(start: rowPointers.indices + start, count: rowPointers.starts[row + 1] - start)
        if activeLanes > laneListLimit {
            SparseKernels.prefetchRows(indices: indices, weights: weights, classes: lanes)
        } else {
            forEachActiveLane(of: row) { lane in
                for index in indices { prefetchForReading(weights + (Int(index) &* lanes &+ lane)) }
            }
        }
    }

    /// Calls `body` with each lane in which `row` is active, in increasing order.
    @inline(__always)
    private func forEachActiveLane(of row: Int, _ body: (Int) -> Void) {
        let lanes = laneCount, flags = active.base + row * lanes
        var lane = 0
        // Eight flags (each 0 or 1) at a time, skipping groups where the row is inactive.
        while lane + 8 <= lanes {
            var group = UnsafeRawPointer(flags + lane).loadUnaligned(as: UInt64.self)
            while group != 0 {
                let byte = group.trailingZeroBitCount / 8
                body(lane + byte)
                group &= ~(0xff << UInt64(byte * 8))
            }
            lane += 8
        }
        while lane < lanes {
            if flags[lane] != 0 { body(lane) }
            lane += 1
        }
    }

    /// Visits `row` lane by lane, in the lanes where it is active only (see ``pass(_:order:)``):
    /// each lane's margin `w·x + w_b`, step, and update of `w` and `w_b`.
    @inline(__always)
    private func visitLaneByLane(_ row: Int, _ indices: UnsafeBufferPointer<Int32>,
                                 _ values: UnsafeBufferPointer<Float>, step: LaneStep,
                                 biasRow: UnsafeMutablePointer<Float>) {
        let lanes = laneCount, weights = weights.base, list = laneList.base
        var count = 0
        forEachActiveLane(of: row) { lane in
            list[count] = Int32(lane)
            count += 1
        }
        for entry in 0..<count {
            let lane = Int(list[entry])
            margins.base[lane] = SparseKernels.accumulateLane(lane, indices: indices, values: values, weights: weights,
                                                              classes: lanes, onto: biasRow[lane])
        }
        let slots = row * lanes
        var moved = false
        for entry in 0..<count {
            if step.runLane(Int(list[entry]), label: labels.base[row], curvatureBase: squaredNorms.base[row],
                            sole: soleSquares.base[row], alpha: alpha.base + slots, active: active.base + slots,
                            activeLanes: activeLanes.base + row) {
                moved = true
            }
        }
        guard moved else { return }
        for entry in 0..<count {
            let lane = Int(list[entry]), change = steps.base[lane]
            guard change != 0 else { continue }
            SparseKernels.scatterLane(lane, indices: indices, values: values, step: change, classes: lanes,
                                      weights: weights)
            biasRow[lane] += change
        }
    }

    /// `w ← w + step·x` and `w_b ← w_b + step` in every lane at once.
    @inline(__always)
    private func update(_ indices: UnsafeBufferPointer<Int32>, _ values: UnsafeBufferPointer<Float>,
                        biasRow: UnsafeMutablePointer<Float>) {
        SparseKernels.scatterUpdate(indices: indices, values: values, gradient: steps.base, scale: 1,
                                    classes: laneCount, weights: weights.base)
        for lane in 0..<laneCount { biasRow[lane] += steps.base[lane] }
    }

    /// Applies each running lane's stopping rule after a pass: stop, reactivate shrunk rows, or
    /// carry `max PG` over to the next pass's shrinking test.
    func finishPass(tolerance: Float, maxIterations: Int) {
        let passMax = passMax.base, passMin = passMin.base, previousMax = previousMax.base
        for lane in 0..<laneCount where !stopped[lane] {
            iterations[lane] += 1
            if passMax[lane] - passMin[lane] <= tolerance {
                if activeRows.base[lane] == rows {
                    stop(lane)
                } else {
                    setAllRows(lane, active: true)
                    previousMax[lane] = .infinity
                }
            } else {
                previousMax[lane] = passMax[lane] <= 0 ? .infinity : passMax[lane]
            }
            if !stopped[lane] && iterations[lane] >= maxIterations { stop(lane) }
            passMax[lane] = -.infinity
            passMin[lane] = .infinity
        }
    }

    /// Stops `lane`: its rows become inactive, so rows active in no lane are skipped.
    private func stop(_ lane: Int) {
        stopped[lane] = true
        setAllRows(lane, active: false)
    }

    /// Marks every row active (or inactive) in `lane`, keeping the counts right.
    private func setAllRows(_ lane: Int, active isActive: Bool) {
        let flag: UInt8 = isActive ? 1 : 0
        for row in 0..<rows where active.base[row * laneCount + lane] != flag {
            active.base[row * laneCount + lane] = flag
            activeLanes.base[row] += isActive ? 1 : -1
        }
        activeRows.base[lane] = isActive ? rows : 0
    }

    /// Writes the weights over all the training matrix's columns (the shared columns' from the
    /// passes, the others' `αᵢₗ yᵢₗ xᵢⱼ`, 0 for columns no row uses) and the dual variables of
    /// all lanes into their columns of `destination`.
    func write(into destination: DualCoordinateDescent.Destination) {
        let lanes = laneCount, weights = weights.base, alpha = alpha.base
        let labels = labels.base, positiveClasses = positiveClasses.base
        let width = destination.width, full = destination.weights + destination.offset
        for row in 0..<rows {
            (destination.alpha + row * width + destination.offset).initialize(from: alpha + row * lanes, count: lanes)
        }
        solver.sharedIndex.withUnsafeBufferPointer { sharedIndex in
            for (column, compact) in sharedIndex.enumerated() {
                if compact >= 0 {
                    (full + column * width).initialize(from: weights + Int(compact) * lanes, count: lanes)
                } else {
                    (full + column * width).initialize(repeating: 0, count: lanes)
                }
            }
            solver.training.forEachRow(in: 0..<rows) { row, indices, values in
                var signed = false
                for (column, value) in zip(indices, values) where sharedIndex[Int(column)] < 0 {
                    if !signed {
                        // `steps` as scratch: αᵢₗ yᵢₗ of the row, per lane.
                        for lane in 0..<lanes {
                            steps.base[lane] = positiveClasses[lane] == labels[row] ? alpha[row * lanes + lane]
                                : -alpha[row * lanes + lane]
                        }
                        signed = true
                    }
                    let target = full + Int(column) * width
                    for lane in 0..<lanes { target[lane] = steps.base[lane] * value }
                }
            }
        }
    }
}

/// One row's coordinate step in every lane of a ``DualCoordinateDescent`` pass: each lane's
/// projected gradient, its shrinking test, its pass extremes, and its new dual variable. The
/// per-lane buffers are fixed for a pass; ``run(label:curvatureBase:sole:alpha:active:activeLanes:)``
/// takes the row's own.
struct LaneStep {
    let lanes: Int
    /// The row's margins `w·x + w_b`, per lane.
    let margins: UnsafeMutablePointer<Float>
    let positiveClasses: UnsafeMutablePointer<Int32>
    let positiveDiagonal: UnsafeMutablePointer<Float>
    let negativeDiagonal: UnsafeMutablePointer<Float>
    /// `max PG` of the previous pass (the shrinking threshold), and this pass's extremes.
    let previousMax: UnsafeMutablePointer<Float>
    let passMax: UnsafeMutablePointer<Float>
    let passMin: UnsafeMutablePointer<Float>
    /// Written: each lane's change of `αᵢ yᵢ`, 0 where nothing moved.
    let steps: UnsafeMutablePointer<Float>
    /// The active rows of each lane, one fewer for each lane the row leaves.
    let activeRows: UnsafeMutablePointer<Int>

    /// Takes the row's step in every lane in which it is active, removing it from the lanes
    /// where it is shrunk.
    /// - Parameters:
    ///   - label: The row's class.
    ///   - curvatureBase: `xᵢ·xᵢ + 1`.
    ///   - sole: `sᵢ`, the squares of the row's values in columns no other row uses.
    ///   - alpha: The row's dual variable in each lane.
    ///   - active: The row's flag in each lane.
    ///   - activeLanes: The number of lanes in which the row is active.
    /// - Returns: Whether some lane's dual variable moved.
    @inline(__always)
    func run(label: Int32, curvatureBase: Float, sole: Float, alpha: UnsafeMutablePointer<Float>,
             active: UnsafeMutablePointer<UInt8>, activeLanes: UnsafeMutablePointer<Int32>) -> Bool {
        var moved = false
        for lane in 0..<lanes {
            if runLane(lane, label: label, curvatureBase: curvatureBase, sole: sole, alpha: alpha, active: active,
                       activeLanes: activeLanes) {
                moved = true
            }
        }
        return moved
    }

    /// The step of one lane, `lane`, with the arguments of
    /// ``run(label:curvatureBase:sole:alpha:active:activeLanes:)``: its `steps` entry is written
    /// (0 where nothing moved). Returns whether the lane's dual variable moved.
    @inline(__always)
    func runLane(_ lane: Int, label: Int32, curvatureBase: Float, sole: Float, alpha: UnsafeMutablePointer<Float>,
                 active: UnsafeMutablePointer<UInt8>, activeLanes: UnsafeMutablePointer<Int32>) -> Bool {
        steps[lane] = 0
        guard active[lane] != 0 else { return false }
        let positive = positiveClasses[lane] == label
        let sign: Float = positive ? 1 : -1
        let diagonal = positive ? positiveDiagonal[lane] : negativeDiagonal[lane]
        let gradient = sign * margins[lane] - 1 + alpha[lane] * (diagonal + sole)
        var projected = gradient
        if alpha[lane] == 0 {
            if gradient > previousMax[lane] {
                // Shrinking: the row leaves this lane's active set.
                active[lane] = 0
                activeLanes.pointee -= 1
                activeRows[lane] -= 1
                return false
            }
            projected = min(gradient, 0)
        }
        passMax[lane] = max(passMax[lane], projected)
        passMin[lane] = min(passMin[lane], projected)
        guard abs(projected) > 1e-12 else { return false }
        let old = alpha[lane]
        alpha[lane] = max(old - gradient / (curvatureBase + diagonal), 0)
        steps[lane] = (alpha[lane] - old) * sign
        return true
    }
}
