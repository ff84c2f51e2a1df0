package import Foundation
#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif

/// Writes files so that a crash never leaves a half-written one: the bytes go to a temporary
/// file in the same folder (`.NAME.PID.UUID.tmp`), are flushed to disk, and the file is renamed
/// over the target. A writer killed before the rename leaves its temporary file; the next write
/// of the same target removes those whose process is gone.
/// `package`, so that the modules on top of the core (key files, encrypted models) write the same way.
package enum AtomicFile {
    /// The size of the blocks that small pieces are gathered into.
    private static let blockSize = 1 << 20

    /// Writes `data` to `url` atomically.
    /// - Throws: ``MLKitError`` with code `io`, naming the file.
    package static func write(_ data: Data, to url: URL, permissions: Int = 0o644) throws {
        try write(to: url, permissions: permissions) { emit in try data.withUnsafeBytes { try emit($0) } }
    }

    /// Writes the bytes that `produce` hands to its argument, piece after piece, to `url`
    /// atomically, so that a large file need not be assembled in memory first.
    /// - Throws: ``MLKitError`` with code `io`, naming the file; or what `produce` throws, in
    ///   which case nothing is written.
    package static func write(to url: URL, permissions: Int = 0o644,
                              _ produce: (_ emit: (UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        let target = url.path
        removeAbandonedTemporaries(of: url)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(UUID().uuidString).tmp").path
        func failure(_ what: String) -> MLKitError {
            MLKitError(.io, "cannot write the file: \(what) (\(String(cString: strerror(errno))))", at: .init(file: target))
        }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode_t(permissions))
        guard descriptor >= 0 else { throw failure("cannot create a temporary file beside it") }
        var succeeded = false
        defer {
            if !succeeded { unlink(temporary) }
        }
        func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
            var offset = 0
            while offset < bytes.count {
                let count = systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { throw failure("writing failed") }
                offset += count
            }
        }
        // Small pieces (a model's weight rows, one by one) are gathered into blocks, so that
        // they do not cost a system call each; large ones are written as they are.
        var pending: [UInt8] = []
        pending.reserveCapacity(Self.blockSize)
        do {
            try produce { bytes in
                if pending.count + bytes.count > Self.blockSize {
                    try pending.withUnsafeBytes { try writeAll($0) }
                    pending.removeAll(keepingCapacity: true)
                }
                if bytes.count >= Self.blockSize { try writeAll(bytes) } else { pending.append(contentsOf: bytes) }
            }
            try pending.withUnsafeBytes { try writeAll($0) }
        } catch {
            close(descriptor)
            throw error
        }
        guard fsync(descriptor) == 0 else {
            close(descriptor)
            throw failure("writing failed")
        }
        close(descriptor)
        guard rename(temporary, target) == 0 else { throw failure("cannot move the temporary file into place") }
        succeeded = true
        // Make the rename itself durable.
        let folder = open(url.deletingLastPathComponent().path, O_RDONLY)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }

    /// Removes the temporary files that writers of `url` left when they were killed: those
    /// named after a process that no longer exists.
    private static func removeAbandonedTemporaries(of url: URL) {
        let folder = url.deletingLastPathComponent().path
        let prefix = ".\(url.lastPathComponent)."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            let parts = name.dropFirst(prefix.count).dropLast(".tmp".count).split(separator: ".")
            guard parts.count == 2, let pid = pid_t(parts[0]), pid > 0, kill(pid, 0) != 0, errno == ESRCH else { continue }
            unlink(folder + "/" + name)
        }
    }
}
