import Dispatch
import Foundation
import Synchronization

/// Runs work on several threads with fixed, contiguous chunks, so that results depend only on
/// the thread count and never on scheduling.
enum Parallel {
    /// The number of threads to use when the caller asks for 0 ("all cores").
    static var defaultThreadCount: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// Splits `0..<count` into `threads` contiguous chunks of near-equal size.
    static func chunks(of count: Int, threads: Int) -> [Range<Int>] {
        let parts = max(1, min(threads, count))
        return (0..<parts).map { part in (part * count / parts)..<((part + 1) * count / parts) }
    }

    /// Calls `body` once per chunk of `0..<count`, concurrently, and returns the results in
    /// chunk order.
    static func map<T: Sendable>(_ count: Int, threads: Int, _ body: @Sendable (Range<Int>) -> T) -> [T] {
        let ranges = chunks(of: count, threads: threads)
        guard ranges.count > 1 else { return ranges.map(body) }
        let results = ResultSlots<T>(count: ranges.count)
        DispatchQueue.concurrentPerform(iterations: ranges.count) { part in
            results.store(body(ranges[part]), at: part)
        }
        return results.values
    }

    /// The number of chunks per thread of ``balancedMap(_:threads:_:)``.
    static let balancingChunksPerThread = 64

    /// Like ``map(_:threads:_:)``, for work whose rows are independent: `0..<count` is split into
    /// many small chunks, ``balancingChunksPerThread`` per thread, that `threads` workers claim
    /// one after another. A worker that the machine slows down (another process, a noisy
    /// neighbour of a virtual machine) then holds up the others by one small chunk, not by its
    /// whole share. The chunks depend only on `count` and `threads`, so neither do the results.
    /// - Parameter threads: The number of workers (0: all cores).
    static func balancedMap<T: Sendable>(_ count: Int, threads: Int, _ body: @Sendable (Range<Int>) -> T) -> [T] {
        let threads = threads == 0 ? defaultThreadCount : threads
        guard threads > 1, count > threads else { return map(count, threads: threads, body) }
        let ranges = chunks(of: count, threads: threads * balancingChunksPerThread)
        let results = ResultSlots<T>(count: ranges.count)
        let claimed = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            while true {
                let part = claimed.add(1, ordering: .relaxed).oldValue
                guard part < ranges.count else { return }
                results.store(body(ranges[part]), at: part)
            }
        }
        return results.values
    }
}

/// Slots that concurrent workers each fill once, at their own index.
private final class ResultSlots<T: Sendable>: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<T?>
    private let count: Int

    init(count: Int) {
        self.count = count
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil, count: count)
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    /// Each index is written by exactly one worker, and read only after all have finished.
    func store(_ value: T, at index: Int) { slots[index] = value }

    var values: [T] { (0..<count).map { slots[$0]! } }
}
