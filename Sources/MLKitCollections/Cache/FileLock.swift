import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive advisory lock (`flock`) on a lock file, shared by the tasks of this process and
/// by other processes that use the same cache folder. The kernel releases it if the process
/// dies, so a crash never leaves a cache locked.
///
/// ```swift
/// let lock = try await FileLock(file)
/// defer { lock.release() }
/// ```
struct FileLock {
    private let descriptor: Int32

    /// Takes the lock on `file` (created if missing), waiting without blocking a thread.
    /// - Parameter file: The lock file; its folder must exist.
    /// - Throws: ``ModelCollectionError`` with code `io` when the file cannot be opened, or
    ///   `CancellationError` when the task is cancelled while waiting.
    init(_ file: URL) async throws {
        let descriptor = open(file.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw ModelCollectionError(.io, "\(file.path): cannot create the lock file (\(String(cString: strerror(errno))))")
        }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            do { try await Task.sleep(for: .milliseconds(10)) } catch {
                close(descriptor)
                throw error
            }
        }
        self.descriptor = descriptor
    }

    /// Releases the lock (by closing its descriptor); call it once.
    func release() { close(descriptor) }
}
