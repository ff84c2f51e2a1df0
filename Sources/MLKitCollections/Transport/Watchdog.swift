import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Ends a transfer that makes no progress for ``interval`` seconds, on a timer of its own.
///
/// URLSession times out an idle request itself (`timeoutIntervalForRequest`), but on Linux it
/// once did not: after a thousand cancelled transfers in one process (CancellationStress), a
/// socket was missing from libdispatch's epoll set, its request never ended, and no timeout
/// fired. The watchdog bounds such a transfer. Its interval is longer than the session's
/// timeout, so that an ordinary timeout is still the session's own.
final class Watchdog: @unchecked Sendable {
    /// Seconds without progress after which the transfer is ended.
    let interval: TimeInterval
    private let lock = NSLock()
    /// When progress was last seen, in uptime nanoseconds.
    private var lastProgress: UInt64 = 0
    /// What ends the transfer, until the watch ends: dropped then, so that nothing the transfer
    /// holds outlives it in a pending check.
    private var expire: (@Sendable () -> Void)?

    /// A watchdog that ends a transfer after `interval` seconds without progress.
    init(interval: TimeInterval) {
        self.interval = interval
    }

    /// The interval for transfers of a session with `configuration`: its request timeout, plus
    /// as much again up to 5 seconds, for the session's own timer to fire first. An infinite
    /// timeout gives an infinite interval (no watch); one that is not positive counts as the
    /// default 60 s.
    static func interval(for configuration: URLSessionConfiguration) -> TimeInterval {
        var timeout = configuration.timeoutIntervalForRequest
        if timeout.isNaN || timeout <= 0 { timeout = 60 }
        return timeout + min(timeout, 5)
    }

    /// Starts watching: `expire` runs once, on ``timers``, if ``interval`` seconds pass
    /// without ``progressed()`` before ``stop()``. An infinite interval watches nothing.
    func start(_ expire: @escaping @Sendable () -> Void) {
        guard interval.isFinite else { return }
        lock.withLock {
            lastProgress = DispatchTime.now().uptimeNanoseconds
            self.expire = expire
        }
        schedule(after: interval)
    }

    /// Records progress: bytes came.
    func progressed() {
        lock.withLock { lastProgress = DispatchTime.now().uptimeNanoseconds }
    }

    /// Stops watching: the transfer has ended.
    func stop() {
        lock.withLock { expire = nil }
    }

    /// The queue of every watchdog's checks. A serial queue has a thread of its own; a global
    /// queue has one per core, and a check there waits behind whatever else runs on them (seen:
    /// over 5 s late for a 0.2 s interval while other work kept both cores busy).
    private static let timers = DispatchQueue(label: "mlkit.collections.watchdog")

    /// Checks after `delay` seconds, and again as long as progress keeps coming. The check
    /// holds the watchdog weakly, so a finished transfer's watchdog is freed at once.
    private func schedule(after delay: TimeInterval) {
        Self.timers.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self else { return }
            let (expired, remaining): ((@Sendable () -> Void)?, TimeInterval?) = lock.withLock {
                guard let expire else { return (nil, nil) }
                let idle = TimeInterval(DispatchTime.now().uptimeNanoseconds - lastProgress) / 1e9
                guard idle >= interval else { return (nil, interval - idle) }
                self.expire = nil
                return (expire, nil)
            }
            if let expired { expired() }
            if let remaining { schedule(after: remaining) }
        }
    }
}

/// The failure of a transfer that the ``Watchdog`` ended.
struct TransferStalled: LocalizedError {
    /// The watchdog's interval.
    let seconds: TimeInterval

    var errorDescription: String? {
        "no progress for \(seconds.formatted(.number.precision(.fractionLength(0...1)))) s"
    }
}
