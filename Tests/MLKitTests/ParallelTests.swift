import TestSupport
import Testing
@testable import MLKit

@Suite("Parallel work", .onOwnThreads)
struct ParallelTests {
    @Test("Balancing chunks cover every row once, in order, on any thread count",
          arguments: [0, 1, 2, 5, 129, 10_000])
    func balancingChunksCoverEveryRow(count: Int) {
        for threads in [1, 2, 3, 8] {
            let parts = Parallel.balancedMap(count, threads: threads) { rows in Array(rows) }
            #expect(parts.flatMap { $0 } == Array(0..<count), "threads: \(threads)")
            #expect(parts.count <= max(1, threads * Parallel.balancingChunksPerThread))
        }
    }

    @Test("Balancing chunks give the results of fixed chunks")
    func balancingChunksMatchFixedChunks() {
        let squares = { @Sendable (rows: Range<Int>) in rows.map { $0 * $0 } }
        let fixed = Parallel.map(5_000, threads: 2, squares).flatMap { $0 }
        let balanced = Parallel.balancedMap(5_000, threads: 2, squares).flatMap { $0 }
        #expect(balanced == fixed)
    }
}
