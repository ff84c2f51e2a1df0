import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The model files' bytes, content-addressed: `models/<sha256>` under the data folder.
///
/// An upload goes to a temporary file in `uploads/` (same file system, so the final rename is
/// atomic) while its SHA-256 is computed; it is fsynced, then renamed into `models/` only once
/// it is complete and valid. A crash leaves at most a temporary file, which the next start-up
/// removes, and never a partial model under `models/`.
struct ModelFileStore: Sendable {
    let modelsFolder: URL
    let uploadsFolder: URL

    /// Creates the folders and removes the temporary files a crash left behind.
    /// - Returns: The store, and how many leftovers were removed.
    static func prepare(dataFolder: URL) throws -> (store: ModelFileStore, removedUploads: Int) {
        let store = ModelFileStore(modelsFolder: dataFolder.appendingPathComponent("models"),
                                   uploadsFolder: dataFolder.appendingPathComponent("uploads"))
        let manager = FileManager.default
        do {
            try manager.createDirectory(at: store.modelsFolder, withIntermediateDirectories: true)
            try manager.createDirectory(at: store.uploadsFolder, withIntermediateDirectories: true)
            let leftovers = try manager.contentsOfDirectory(atPath: store.uploadsFolder.path)
            for name in leftovers {
                try manager.removeItem(at: store.uploadsFolder.appendingPathComponent(name))
            }
            return (store, leftovers.count)
        } catch {
            throw CollectionServerError.storage("\(dataFolder.path): cannot prepare the data folder: \(error.localizedDescription)")
        }
    }

    /// The path of a stored model; `sha256` must already be validated as 64 lowercase hex digits.
    func path(of sha256: String) -> String { modelsFolder.appendingPathComponent(sha256).path }

    /// The size of a stored model file, or `nil` when there is none.
    func size(of sha256: String) -> Int64? {
        var status = stat()
        guard stat(path(of: sha256), &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(status.st_size)
    }

    /// Starts an upload: a new temporary file under `uploads/`.
    func beginUpload() throws -> Upload {
        let path = uploadsFolder.appendingPathComponent("\(UUID().uuidString).part").path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CollectionServerError.fileSystem(path, "cannot create the upload file", errno: errno) }
        return Upload(path: path, descriptor: descriptor)
    }

    /// Moves a finished upload into place as `models/<sha256>` and makes the rename durable.
    func commit(_ upload: Upload, sha256: String) throws {
        let target = path(of: sha256)
        guard rename(upload.path, target) == 0 else {
            throw CollectionServerError.fileSystem(target, "cannot move the upload into place", errno: errno)
        }
        let folder = open(modelsFolder.path, O_RDONLY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }
}

/// A model file being received: its temporary file, its running SHA-256 and its size.
final class Upload {
    let path: String
    private var descriptor: Int32
    private var hasher = SHA256()
    private(set) var size: Int64 = 0

    fileprivate init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Appends bytes to the file and the hash.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        hasher.update(bufferPointer: bytes)
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, base + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw CollectionServerError.fileSystem(path, "cannot write the upload", errno: errno) }
            offset += written
        }
        size += Int64(bytes.count)
    }

    /// Flushes the file to disk and closes it.
    /// - Returns: The hex SHA-256 of everything appended.
    func finish() throws -> String {
        let synced = fsync(descriptor) == 0
        let failure = errno
        close(descriptor)
        descriptor = -1
        guard synced else { throw CollectionServerError.fileSystem(path, "cannot flush the upload", errno: failure) }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// Removes the temporary file (after a failure or a rejected file).
    func discard() {
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        unlink(path)
    }
}
