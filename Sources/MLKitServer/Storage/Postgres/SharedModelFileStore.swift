import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The model files' bytes in the shared database, with a verified read cache on each replica.
///
/// In the database, a model file is a `model_blob` row (SHA-256, size, number of chunks) and its
/// bytes in `model_chunk` rows of 1 MiB (``PostgresSchema/chunkSize``), written in one
/// transaction: a file is there whole or not at all. Bytes move in and out one chunk at a time,
/// so no file is ever held whole in memory.
///
/// The cache is `cache/<sha256>` in the replica's data folder. A file enters it only whole and
/// with the SHA-256 its name says: an upload that this replica received and hashed, or a copy
/// read from the database into a temporary file in `uploads/`, hashed on the way, fsynced and
/// renamed. So a cached file is served without asking the database, even while it is
/// unreachable, and a download of a file not yet cached costs one copy from the database,
/// shared by every request that waits for it. Any cached file may be deleted at any time; it is
/// read again when it is next asked for.
final class SharedModelFileStore: ModelFileStore {
    let database: SharedDatabase
    let cacheFolder: URL
    let uploadsFolder: URL
    private let copies = NIOLockedValueBox<[String: Task<LocalModelFile, any Error>]>([:])
    private var logger: Logger { database.queryLogger }

    private init(database: SharedDatabase, cacheFolder: URL, uploadsFolder: URL) {
        self.database = database
        self.cacheFolder = cacheFolder
        self.uploadsFolder = uploadsFolder
    }

    /// Creates `cache/` and `uploads/` in the data folder and removes what a crash left in
    /// `uploads/`.
    /// - Returns: The store, and how many leftovers were removed.
    static func prepare(dataFolder: URL, database: SharedDatabase) throws -> (store: SharedModelFileStore, removedUploads: Int) {
        let store = SharedModelFileStore(database: database, cacheFolder: dataFolder.appendingPathComponent("cache"),
                                         uploadsFolder: dataFolder.appendingPathComponent("uploads"))
        let removed = try LocalModelFileStore.prepareFolders(dataFolder: dataFolder, files: store.cacheFolder,
                                                             uploads: store.uploadsFolder)
        return (store, removed)
    }

    var servesFromCache: Bool { true }

    /// The cached copy of `sha256`.
    func cachePath(_ sha256: String) -> String { cacheFolder.appendingPathComponent(sha256).path }

    func beginUpload() throws -> Upload { try Upload.begin(in: uploadsFolder) }

    func contains(_ sha256: String, size: Int64) async throws -> Bool {
        let logger = self.logger
        return try await database.withConnection { connection in
            let rows = try await connection.query("SELECT size FROM model_blob WHERE sha256 = \(sha256)", logger: logger)
            for try await stored in rows.decode(Int64.self) { return stored == size }
            return false
        }
    }

    /// Copies the upload into the database, one chunk at a time in one transaction, then moves
    /// it into this replica's cache.
    func commit(_ upload: Upload, sha256: String) async throws {
        do {
            try await Self.store(fileAt: upload.path, size: upload.size, sha256: sha256, in: database)
            try upload.move(to: cachePath(sha256), folder: cacheFolder)
        } catch {
            upload.discard()
            throw error
        }
    }

    /// Writes the file at `path` (`size` bytes, whose SHA-256 is `sha256`) into the database in
    /// one transaction, unless its bytes are there already.
    static func store(fileAt path: String, size: Int64, sha256: String, in database: SharedDatabase) async throws {
        let logger = database.queryLogger
        try await database.transaction { connection in
            try await insertBytes(fileAt: path, size: size, sha256: sha256, connection: connection, logger: logger)
        }
    }

    /// Inserts the blob and its chunks, read from `path` one chunk at a time, in the
    /// connection's transaction, unless the blob is there already.
    static func insertBytes(fileAt path: String, size: Int64, sha256: String, connection: PostgresConnection,
                            logger: Logger) async throws {
        let chunkSize = PostgresSchema.chunkSize
        let chunks = Int((size + Int64(chunkSize) - 1) / Int64(chunkSize))
        // A concurrent upload of the same bytes waits here until the other transaction ends.
        let inserted = try await connection.query("""
            INSERT INTO model_blob (sha256, size, chunk_size, chunks, created)
            VALUES (\(sha256), \(size), \(chunkSize), \(chunks), \(Date()))
            ON CONFLICT (sha256) DO NOTHING RETURNING sha256
            """, logger: logger)
        var isNew = false
        for try await _ in inserted { isNew = true }
        guard isNew else { return }
        let file = try ChunkedFile(reading: path)
        defer { file.close() }
        for index in 0..<chunks {
            let bytes = try file.read(chunkSize)
            guard bytes.readableBytes == min(chunkSize, Int(size - Int64(index) * Int64(chunkSize))) else {
                throw CollectionServerError.storage("\(path): the file ended before its \(size) bytes")
            }
            try await connection.query(
                "INSERT INTO model_chunk (sha256, index, bytes) VALUES (\(sha256), \(index), \(bytes))", logger: logger)
        }
    }

    /// Reads the stored bytes of `sha256` one chunk at a time (one query each, so that no more
    /// than a chunk is in memory), handing each to `body` in order.
    /// - Returns: The blob's recorded size, or `nil` when no bytes are stored for `sha256`.
    static func readBytes(of sha256: String, from database: SharedDatabase,
                          _ body: (ByteBuffer) throws -> Void) async throws -> Int64? {
        let logger = database.queryLogger
        let blob: (size: Int64, chunks: Int)? = try await database.withConnection { connection in
            let rows = try await connection.query("SELECT size, chunks FROM model_blob WHERE sha256 = \(sha256)", logger: logger)
            for try await (size, chunks) in rows.decode((Int64, Int).self) { return (size, chunks) }
            return nil
        }
        guard let blob else { return nil }
        for index in 0..<blob.chunks {
            let chunk: ByteBuffer? = try await database.withConnection { connection in
                let rows = try await connection.query(
                    "SELECT bytes FROM model_chunk WHERE sha256 = \(sha256) AND index = \(index)", logger: logger)
                for try await bytes in rows.decode(ByteBuffer.self) { return bytes }
                return nil
            }
            guard let chunk else {
                throw CollectionServerError.storage("\(database.location): model file \(sha256) lacks chunk \(index) of \(blob.chunks)")
            }
            try body(chunk)
        }
        return blob.size
    }

    func localFile(_ sha256: String, record: @Sendable () async throws -> ModelFileRecord?) async throws -> LocalModelFile? {
        let path = cachePath(sha256)
        if let size = LocalModelFileStore.regularFileSize(path) { return LocalModelFile(path: path, size: size) }
        guard try await record() != nil else { return nil }
        let task: Task<LocalModelFile, any Error> = copies.withLockedValue { copies in
            if let running = copies[sha256] { return running }
            let task = Task {
                defer { _ = self.copies.withLockedValue { $0.removeValue(forKey: sha256) } }
                return try await self.copyFromDatabase(sha256)
            }
            copies[sha256] = task
            return task
        }
        return try await task.value
    }

    /// Reads the bytes of `sha256` from the database into the cache, one chunk at a time,
    /// checking their size and SHA-256 before they enter it.
    private func copyFromDatabase(_ sha256: String) async throws -> LocalModelFile {
        let target = cachePath(sha256)
        if let size = LocalModelFileStore.regularFileSize(target) { return LocalModelFile(path: target, size: size) }
        let copy = try Upload.begin(in: uploadsFolder)
        let size: Int64
        do {
            guard let stored = try await Self.readBytes(of: sha256, from: database, { chunk in
                try chunk.withUnsafeReadableBytes { try copy.append($0) }
            }) else {
                throw CollectionServerError.storage("\(database.location): model file \(sha256) is recorded but its bytes are not stored")
            }
            size = stored
            let digest = try copy.finish()
            guard copy.size == size, digest == sha256 else {
                throw CollectionServerError.storage(
                    "\(database.location): the stored bytes of model file \(sha256) are damaged: \(copy.size) bytes with the SHA-256 \(digest)")
            }
            try copy.move(to: target, folder: cacheFolder)
        } catch {
            copy.discard()
            throw error
        }
        logger.info("model file copied into the cache", metadata: ["sha256": "\(sha256)", "size": "\(size)"])
        return LocalModelFile(path: target, size: size)
    }
}

/// A file read in chunks into buffers, for the copy into the database.
final class ChunkedFile {
    private var descriptor: Int32
    let path: String

    init(reading path: String) throws {
        self.path = path
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CollectionServerError.fileSystem(path, "cannot open the file", errno: errno) }
    }

    deinit { close() }

    /// Up to `count` bytes; fewer only at the end of the file.
    func read(_ count: Int) throws -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: count)
        while buffer.readableBytes < count {
            let wanted = count - buffer.readableBytes
            var failure: Int32 = 0
            let got = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { pointer in
                let result = systemRead(descriptor, pointer.baseAddress, wanted)
                if result < 0 { failure = errno }
                return max(result, 0)
            }
            if failure == EINTR { continue }
            guard failure == 0 else { throw CollectionServerError.fileSystem(path, "cannot read the file", errno: failure) }
            if got == 0 { break }
        }
        return buffer
    }

    func close() {
        if descriptor >= 0 {
            systemClose(descriptor)
            descriptor = -1
        }
    }
}

private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func systemClose(_ descriptor: Int32) {
    close(descriptor)
}
