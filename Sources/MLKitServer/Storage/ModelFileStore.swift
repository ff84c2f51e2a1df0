import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the server keeps the model files' bytes, content-addressed by SHA-256: in the data
/// folder (``LocalModelFileStore``, beside SQLite), or in the shared database with a verified
/// read cache on each replica (``SharedModelFileStore``).
///
/// An upload always streams to a temporary file of the replica's own, hashed on the way; it is
/// handed to the store only once it is complete and valid. Downloads are served from a local
/// file, so that ranges and `sendfile`-like streaming work the same with either store.
protocol ModelFileStore: Sendable {
    /// Starts an upload: a new temporary file, hashed as it is written.
    func beginUpload() throws -> Upload

    /// Whether the bytes of `sha256` are stored whole (`size` bytes).
    func contains(_ sha256: String, size: Int64) async throws -> Bool

    /// Keeps a finished, validated upload as the bytes of `sha256`. The upload's temporary file
    /// is gone afterwards, whether this succeeds or not.
    func commit(_ upload: Upload, sha256: String) async throws

    /// A local file with the bytes of a model file, whole and verified, or `nil` when the
    /// server has no such model file. `record` reads the model file's record from the
    /// collection store, when the store needs it.
    func localFile(_ sha256: String, record: @Sendable () async throws -> ModelFileRecord?) async throws -> LocalModelFile?

    /// Whether a file may be answered without reaching the database (for the header that says
    /// the answer came from the replica's caches).
    var servesFromCache: Bool { get }
}

/// A local file holding a model file's bytes.
struct LocalModelFile: Sendable {
    let path: String
    let size: Int64
}

/// The model files' bytes in the data folder, content-addressed: `models/<sha256>`.
///
/// An upload goes to a temporary file in `uploads/` (same file system, so the final rename is
/// atomic) while its SHA-256 is computed; it is fsynced, then renamed into `models/` only once
/// it is complete and valid. A crash leaves at most a temporary file, which the next start-up
/// removes, and never a partial model under `models/`.
struct LocalModelFileStore: ModelFileStore {
    let modelsFolder: URL
    let uploadsFolder: URL

    /// Creates the folders and removes the temporary files a crash left behind.
    /// - Returns: The store, and how many leftovers were removed.
    static func prepare(dataFolder: URL) throws -> (store: LocalModelFileStore, removedUploads: Int) {
        let store = LocalModelFileStore(modelsFolder: dataFolder.appendingPathComponent("models"),
                                        uploadsFolder: dataFolder.appendingPathComponent("uploads"))
        let removed = try prepareFolders(dataFolder: dataFolder, files: store.modelsFolder, uploads: store.uploadsFolder)
        return (store, removed)
    }

    /// Creates `files` and `uploads`, and empties `uploads`.
    /// - Returns: How many leftovers were removed from `uploads`.
    static func prepareFolders(dataFolder: URL, files: URL, uploads: URL) throws -> Int {
        let manager = FileManager.default
        do {
            try manager.createDirectory(at: files, withIntermediateDirectories: true)
            try manager.createDirectory(at: uploads, withIntermediateDirectories: true)
            let leftovers = try manager.contentsOfDirectory(atPath: uploads.path)
            for name in leftovers {
                try manager.removeItem(at: uploads.appendingPathComponent(name))
            }
            return leftovers.count
        } catch {
            throw CollectionServerError.storage("\(dataFolder.path): cannot prepare the data folder: \(error.localizedDescription)")
        }
    }

    /// The path of a stored model; `sha256` must already be validated as 64 lowercase hex digits.
    func path(of sha256: String) -> String { modelsFolder.appendingPathComponent(sha256).path }

    /// The size of a stored model file, or `nil` when there is none.
    func size(of sha256: String) -> Int64? { Self.regularFileSize(path(of: sha256)) }

    /// The size of a regular file, or `nil` when there is none.
    static func regularFileSize(_ path: String) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(status.st_size)
    }

    func beginUpload() throws -> Upload { try Upload.begin(in: uploadsFolder) }

    func contains(_ sha256: String, size: Int64) async throws -> Bool { self.size(of: sha256) == size }

    /// Moves a finished upload into place as `models/<sha256>` and makes the rename durable.
    func commit(_ upload: Upload, sha256: String) async throws {
        do {
            try upload.move(to: path(of: sha256), folder: modelsFolder)
        } catch {
            upload.discard()
            throw error
        }
    }

    func localFile(_ sha256: String, record: @Sendable () async throws -> ModelFileRecord?) async throws -> LocalModelFile? {
        guard try await record() != nil, let size = size(of: sha256) else { return nil }
        return LocalModelFile(path: path(of: sha256), size: size)
    }

    var servesFromCache: Bool { false }
}

/// A model file being received: its temporary file, its running SHA-256 and its size.
final class Upload {
    let path: String
    private var descriptor: Int32
    private var hasher = SHA256()
    private(set) var size: Int64 = 0

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// A new temporary file in `folder`.
    static func begin(in folder: URL) throws -> Upload {
        let path = folder.appendingPathComponent("\(UUID().uuidString).part").path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CollectionServerError.fileSystem(path, "cannot create the upload file", errno: errno) }
        return Upload(path: path, descriptor: descriptor)
    }

    /// Renames the finished file to `target` (in `folder`, on the same file system) and makes
    /// the rename durable.
    func move(to target: String, folder: URL) throws {
        guard rename(path, target) == 0 else {
            throw CollectionServerError.fileSystem(target, "cannot move the upload into place", errno: errno)
        }
        let descriptor = open(folder.path, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
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
