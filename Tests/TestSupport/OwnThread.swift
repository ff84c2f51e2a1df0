import Foundation
public import Testing

/// A trait that runs a test, or every test of a suite, on the tests' own threads
/// (``TestExecutor``) instead of the Swift concurrency pool's. Every suite carries it.
///
/// The pool has one thread per core: two on a two-core machine. Tests that block there
/// (waiting for a child process, socket calls on a busy server) or compute for seconds hold
/// it from everything else, measured at over 60 s at the start of a run; and the code under
/// test needs that pool too: the server's HTTP and database clients run their own tasks there,
/// so that a database call in one test waited past its 10 s lease timeout behind the others.
/// Under this trait the test runs with ``TestExecutor`` as its task executor preference, which
/// its child tasks inherit, and leaves the pool to the code under test.
public struct OwnThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(TestExecutor.shared) {
            try await function()
        }
    }
}

extension Trait where Self == OwnThreadsTrait {
    /// Runs the test, or each test of the suite, on the tests' own threads (``OwnThreadsTrait``).
    public static var onOwnThreads: Self { OwnThreadsTrait() }
}

/// The task executor of the tests: up to ``maximumThreads`` threads, each started when a job
/// finds none idle, so that a job that blocks holds its own thread and no other job's. Its
/// threads stay, idle, once started: `Process.run()` attaches the child's exit to the run loop
/// of the thread that called it, which must outlive the child.
public final class TestExecutor: TaskExecutor, @unchecked Sendable {
    /// The one executor the trait uses.
    public static let shared = TestExecutor()

    /// The most threads: enough for every test that blocks at once, few enough that the tests
    /// that compute do not all hold their memory at once.
    public static let maximumThreads = 32

    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    /// Threads started, and threads waiting for a job; guarded by `condition`.
    private var threads = 0, idle = 0

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        let start = jobs.count > idle && threads < Self.maximumThreads
        if start { threads += 1 }
        condition.signal()
        condition.unlock()
        if start { Thread.detachNewThread { [self] in work() } }
    }

    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while jobs.isEmpty {
                idle += 1
                condition.wait()
                idle -= 1
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
