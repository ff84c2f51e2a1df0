import Dispatch
import Foundation
import MLKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Streams an input through three stages that run at once: a reader that cuts the input into
/// batches of lines (``LineBatchReader``), workers on every core that turn each batch into its
/// output, and a writer (or another consumer, such as `evaluate`'s sum of metrics), on the calling
/// thread, that takes the outputs in the input's order.
///
/// Between them, at most ``inFlightPerWorker`` batches per worker are read and not yet written:
/// the reader waits for the writer beyond that, so memory is bounded by those batches whatever
/// the input's size.
enum StreamingPipeline {
    /// Batches read and not yet written, per worker.
    static let inFlightPerWorker = 4

    /// Runs the pipeline to the end of the input, writing each batch's output.
    /// - Parameters:
    ///   - reader: The input, closed at the end.
    ///   - workers: Worker threads (0: one per core).
    ///   - transform: A batch's output; runs on the workers, several batches at once.
    ///   - write: Writes one batch's output; called on this thread, in the input's order.
    /// - Throws: The first error, in the input's order, of the reader, of `transform` or of
    ///   `write`; the outputs of the batches before it have been written, and so has the part
    ///   of its own that a ``Failure`` carries.
    static func run(_ reader: LineBatchReader, workers: Int = 0,
                    transform: @escaping @Sendable (LineBatch) throws -> [UInt8],
                    write: (UnsafeRawBufferPointer) throws -> Void) throws {
        try run(reader, workers: workers, transform: { batch -> (output: [UInt8], error: (any Error)?) in
            do {
                return (try transform(batch), nil)
            } catch let failure as Failure {
                return (failure.output, failure.error)
            }
        }, consume: { part in
            try part.output.withUnsafeBytes { try write($0) }
            if let error = part.error { throw error }
        })
    }

    /// Runs the pipeline to the end of the input, handing each batch's result to `consume`.
    /// - Parameters:
    ///   - reader: The input, closed at the end.
    ///   - workers: Worker threads (0: one per core).
    ///   - transform: A batch's result; runs on the workers, several batches at once.
    ///   - consume: Takes one batch's result; called on this thread, in the input's order.
    /// - Throws: The first error, in the input's order, of the reader, of `transform` or of
    ///   `consume`; the results of the batches before it have been consumed.
    static func run<Output: Sendable>(_ reader: LineBatchReader, workers: Int = 0,
                                      transform: @escaping @Sendable (LineBatch) throws -> Output,
                                      consume: (Output) throws -> Void) throws {
        let workers = workers > 0 ? workers : max(1, ProcessInfo.processInfo.activeProcessorCount)
        let state = PipelineState<Output>(reader: reader, inFlight: inFlightPerWorker * workers)
        defer { state.stop() }
        startThread { state.read() }
        for _ in 0..<workers {
            startThread {
                while let batch = state.work.pop() {
                    let output = Result { try transform(batch) }
                    state.results.put(batch, output)
                }
            }
        }
        var index = 0
        while let (batch, output) = state.results.take(index) {
            try consume(output.get())
            batch?.written()
            state.slots.signal()
            index += 1
        }
    }

    /// What a transform throws when a batch fails part way: the output of its lines before the
    /// failure, written before `error` is thrown.
    struct Failure: Error {
        let output: [UInt8]
        let error: any Error
    }

    /// Starts a detached thread with a stack large enough for the featurizer's work.
    private static func startThread(_ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// What the stages share.
private final class PipelineState<Output: Sendable>: @unchecked Sendable {
    /// Owned by the reading thread only.
    private var reader: LineBatchReader
    let work = BatchQueue()
    let results = OrderedResults<Output>()
    /// One per batch that may be read and not yet written.
    let slots: DispatchSemaphore
    private let inFlight: Int
    private let stopped = NSLock()
    private var isStopped = false

    init(reader: LineBatchReader, inFlight: Int) {
        self.reader = reader
        self.inFlight = inFlight
        slots = DispatchSemaphore(value: inFlight)
    }

    /// The reading thread: batches go to the workers until the input ends or fails.
    func read() {
        var count = 0
        defer { reader.close() }
        while true {
            slots.wait()
            if stoppedYet() { break }
            do {
                guard let batch = try reader.next() else { break }
                count += 1
                work.push(batch)
            } catch {
                results.put(index: count, nil, .failure(error))
                count += 1
                break
            }
        }
        work.close()
        results.finish(count: count)
    }

    /// Ends the reader and the workers early (after an error), or lets them go at the end.
    func stop() {
        stopped.lock()
        let first = !isStopped
        isStopped = true
        stopped.unlock()
        guard first else { return }
        work.close(discarding: true)
        for _ in 0..<inFlight { slots.signal() }
    }

    private func stoppedYet() -> Bool {
        stopped.lock()
        defer { stopped.unlock() }
        return isStopped
    }
}

/// Batches waiting for a worker, first in first out.
private final class BatchQueue: @unchecked Sendable {
    private let condition = NSCondition()
    /// Taken batches are cleared at once, so that a batch's memory goes back when its worker is done.
    private var items: [LineBatch?] = []
    private var head = 0
    private var closed = false

    func push(_ batch: LineBatch) {
        condition.lock()
        items.append(batch)
        condition.signal()
        condition.unlock()
    }

    /// No more batches will come; with `discarding`, those waiting are dropped.
    func close(discarding: Bool = false) {
        condition.lock()
        closed = true
        if discarding {
            items = []
            head = 0
        }
        condition.broadcast()
        condition.unlock()
    }

    /// The next batch, waiting for one, or `nil` once the queue is closed and empty.
    func pop() -> LineBatch? {
        condition.lock()
        defer { condition.unlock() }
        while head == items.count && !closed { condition.wait() }
        guard head < items.count else { return nil }
        let batch = items[head]
        items[head] = nil
        head += 1
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return batch
    }
}

/// The workers' outputs, handed to the writer in the batches' order.
private final class OrderedResults<Output: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var results: [Int: (LineBatch?, Result<Output, any Error>)] = [:]
    private var count: Int?

    func put(_ batch: LineBatch, _ result: Result<Output, any Error>) {
        put(index: batch.index, batch, result)
    }

    /// Batch `index`'s output; the batch is kept until its output is written.
    func put(index: Int, _ batch: LineBatch?, _ result: Result<Output, any Error>) {
        condition.lock()
        results[index] = (batch, result)
        condition.broadcast()
        condition.unlock()
    }

    /// The input has ended after `count` batches.
    func finish(count: Int) {
        condition.lock()
        self.count = count
        condition.broadcast()
        condition.unlock()
    }

    /// Batch `index`'s output, waiting for it, or `nil` when the input had fewer batches.
    func take(_ index: Int) -> (LineBatch?, Result<Output, any Error>)? {
        condition.lock()
        defer { condition.unlock() }
        while results[index] == nil {
            if let count, index >= count { return nil }
            condition.wait()
        }
        return results.removeValue(forKey: index)
    }
}

/// Runs `body` with a function that writes to `path` (a temporary file beside it, renamed over
/// it only once everything is written), or to standard output when `path` is nil.
func withOutput(_ path: String?, _ body: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
    guard let path else {
        return try body { try writeAll($0, to: STDOUT_FILENO, name: "standard output") }
    }
    try AtomicFile.write(to: URL(fileURLWithPath: path)) { emit in
        try withoutActuallyEscaping(emit) { emit in try body(emit) }
    }
}

/// Writes all of `bytes` to a file descriptor.
/// - Throws: ``MLKitError`` (`io`) naming `name`.
func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, name: String) throws {
    var offset = 0
    while offset < bytes.count {
        let count = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else {
            throw MLKitError(.io, "cannot write (\(String(cString: strerror(errno))))", at: .init(file: name))
        }
        offset += count
    }
}
