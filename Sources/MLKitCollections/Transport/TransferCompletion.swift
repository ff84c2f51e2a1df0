import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The outcome of one transfer, handed to the task that waits for it in whichever order the
/// two arrive. The first outcome wins: a cancellation, or the transfer's end.
final class TransferCompletion<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Value, any Error>?
    private var outcome: Result<Value, any Error>?

    /// Resumes `continuation` with the outcome, now if it has come (a cancellation before the
    /// transfer started) and otherwise when it comes.
    /// - Returns: Whether the outcome is still to come, and the transfer should start.
    func wait(_ continuation: CheckedContinuation<Value, any Error>) -> Bool {
        let arrived: Result<Value, any Error>? = lock.withLock {
            if outcome == nil { self.continuation = continuation }
            return outcome
        }
        guard let arrived else { return true }
        continuation.resume(with: arrived)
        return false
    }

    /// Records the outcome and resumes the waiting task, if any, unless an outcome came
    /// before. The task is resumed outside the lock: a cancellation handler may call this
    /// under the Swift task's status lock, which resuming also takes.
    func finish(_ outcome: Result<Value, any Error>) {
        let continuation: CheckedContinuation<Value, any Error>? = lock.withLock {
            guard self.outcome == nil else { return nil }
            self.outcome = outcome
            defer { self.continuation = nil }
            return self.continuation
        }
        continuation?.resume(with: outcome)
    }

    /// Starts `task` and waits for the outcome: whichever of the transfer's end, the Swift
    /// task's cancellation and the watchdog's expiry comes first. A cancellation resumes at
    /// once, without waiting for the transfer to end: on Linux a cancelled transfer sometimes
    /// never reports its end (CancellationTests).
    /// - Parameters:
    ///   - watchdog: Ends a transfer that makes no progress, if any: `onStall`, then the task is
    ///     cancelled.
    ///   - onStall: Finishes with the outcome of a stalled transfer.
    ///   - onCancel: Finishes with the outcome of a cancellation, and stops the transfer if it
    ///     is worth stopping. It runs under the Swift task's status lock, so it may stop the
    ///     task only with ``URLSessionTask/cancelLater()``.
    func run(_ task: URLSessionTask, watchdog: Watchdog?, onStall: @escaping @Sendable () -> Void,
             onCancel: @Sendable () -> Void) async throws -> Value {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard wait(continuation) else { return }
                watchdog?.start {
                    onStall()
                    task.cancelLater()
                }
                task.resume()
            }
        } onCancel: {
            onCancel()
        }
    }
}

extension URLSessionTask {
    /// Cancels the task from another thread.
    ///
    /// For a task cancellation handler, which runs under the Swift task's status lock:
    /// `cancel()` waits for the session's queue, whose thread may be waiting for that lock.
    func cancelLater() {
        DispatchQueue.global().async { self.cancel() }
    }
}
