import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The client's cache folder:
///
/// ```
/// installation-id                       the installation ID made on first use
/// collections/<id>/collection.json      the last good resolved collection, its ETag and times
/// collections/<id>/models/<sha256>.mlkit verified model files
/// locks/<id>.lock                       held (flock) while one task or process refreshes or removes the collection
/// partial/<sha256>.part                 downloads in progress, named by their expected SHA-256
/// partial/<sha256>.part.lock            held (flock) while one task or process downloads that file
/// ```
///
/// A model file enters `models/` only by a rename after its SHA-256 has been checked, and
/// `collection.json` is replaced (also by a rename) only once every file it names is there,
/// so a failed or interrupted download never replaces a good copy. A refresh asks the server,
/// downloads, saves the manifest and prunes the files it no longer names, all under the
/// collection's lock, and the offline fallback is read under it too, so two refreshes (in one
/// process or several) never delete each other's files.
struct ModelCache: Sendable {
    /// The cache's root folder.
    let folder: URL

    /// The default folder: `mlkit/collections` in the user's caches folder.
    static var defaultFolder: URL {
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return caches.appendingPathComponent("mlkit/collections", isDirectory: true)
    }

    /// The folder of one collection's manifest and models.
    func collectionFolder(_ identifier: String) -> URL {
        folder.appendingPathComponent("collections/\(identifier)", isDirectory: true)
    }

    /// Where a verified model file of a collection lives.
    func modelFile(collection: String, sha256: String) -> URL {
        collectionFolder(collection).appendingPathComponent("models/\(sha256).mlkit")
    }

    /// Where a download in progress is kept until it is complete and verified.
    func partialFile(sha256: String) -> URL {
        folder.appendingPathComponent("partial/\(sha256).part")
    }

    /// The lock that one refresh or removal of a collection holds at a time.
    ///
    /// It sits outside the collection's folder, so removing the folder leaves it in place, and
    /// every process keeps locking the same file.
    func lockCollection(_ identifier: String) async throws -> FileLock {
        let locks = folder.appendingPathComponent("locks", isDirectory: true)
        try createFolder(locks)
        return try await FileLock(locks.appendingPathComponent("\(identifier).lock"))
    }

    /// The lock that one download of a file holds at a time.
    func lockDownload(sha256: String) async throws -> FileLock {
        let partial = partialFile(sha256: sha256)
        try createFolder(partial.deletingLastPathComponent())
        return try await FileLock(URL(fileURLWithPath: partial.path + ".lock"))
    }

    private func manifestFile(_ identifier: String) -> URL {
        collectionFolder(identifier).appendingPathComponent("collection.json")
    }

    /// The installation ID kept in this cache, made (a random UUID) on first use.
    func installationID() throws -> String {
        let file = folder.appendingPathComponent("installation-id")
        if let existing = try? String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
           !existing.isEmpty {
            return existing
        }
        try createFolder(folder)
        let made = UUID().uuidString
        let temporary = folder.appendingPathComponent(".installation-id.\(made).tmp")
        try writeDurably(Data((made + "\n").utf8), to: temporary)
        defer { unlink(temporary.path) }
        // link(2) fails if another process made the file first; then its ID wins.
        if link(temporary.path, file.path) != 0 && errno != EEXIST {
            throw ModelCollectionError(.io, "\(file.path): cannot create the installation ID (\(String(cString: strerror(errno))))")
        }
        return try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The last good collection, if it and every model file it names are in the cache.
    func manifest(for identifier: String) -> CachedCollection? {
        guard let data = try? Data(contentsOf: manifestFile(identifier)),
              let manifest = try? JSONDecoder().decode(CachedCollection.self, from: data),
              manifest.resolved.collection == identifier else { return nil }
        for entry in manifest.resolved.entries.values {
            let path = modelFile(collection: identifier, sha256: entry.sha256).path
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
            guard size == entry.size else { return nil }
        }
        return manifest
    }

    /// Replaces the collection's manifest atomically.
    func save(_ manifest: CachedCollection) throws {
        let file = manifestFile(manifest.resolved.collection)
        try createFolder(file.deletingLastPathComponent())
        let data: Data
        // Dates as exact seconds since 2001, so a collection read back equals the one saved.
        do { data = try JSONEncoder().encode(manifest) } catch {
            throw ModelCollectionError.io("cannot encode the manifest", file.path, error)
        }
        try replaceDurably(file, with: data)
    }

    /// Deletes the collection's model files that `keeping` does not name; call it only under
    /// the collection's lock (``lockCollection(_:)``).
    func pruneModels(of identifier: String, keeping: Set<String>) {
        let models = collectionFolder(identifier).appendingPathComponent("models")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: models.path)) ?? []
        for name in names where name.hasSuffix(".mlkit") && !keeping.contains(String(name.dropLast(6))) {
            try? FileManager.default.removeItem(at: models.appendingPathComponent(name))
        }
    }

    /// Removes a collection's manifest and model files; call it only under the collection's lock.
    /// - Returns: Whether there was anything to remove.
    func removeCollection(_ identifier: String) throws -> Bool {
        let collection = collectionFolder(identifier)
        guard FileManager.default.fileExists(atPath: collection.path) else { return false }
        do { try FileManager.default.removeItem(at: collection) } catch {
            throw ModelCollectionError.io("cannot remove the cached collection", collection.path, error)
        }
        return true
    }

    /// Creates `folder` and its parents.
    func createFolder(_ folder: URL) throws {
        do { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) } catch {
            throw ModelCollectionError.io("cannot create the folder", folder.path, error)
        }
    }

    /// Writes `data` to a temporary file beside `file`, flushes it, and renames it over `file`.
    func replaceDurably(_ file: URL, with data: Data) throws {
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString).tmp")
        try writeDurably(data, to: temporary)
        try moveDurably(temporary, to: file)
    }

    /// Renames `source` over `target` and flushes the folder, so the rename survives a crash.
    func moveDurably(_ source: URL, to target: URL) throws {
        guard rename(source.path, target.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(source.path)
            throw ModelCollectionError(.io, "\(target.path): cannot move the verified file into place (\(reason))")
        }
        let descriptor = open(target.deletingLastPathComponent().path, O_RDONLY)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
    }

    private func writeDurably(_ data: Data, to file: URL) throws {
        do {
            _ = FileManager.default.createFile(atPath: file.path, contents: nil)
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            try handle.write(contentsOf: data)
            try handle.synchronize()
        } catch {
            unlink(file.path)
            throw ModelCollectionError.io("cannot write the file", file.path, error)
        }
    }
}

/// What the cache keeps of a collection: the server's answer, its ETag, when it was fetched
/// and last checked, and the server and context it was resolved for.
struct CachedCollection: Codable, Sendable {
    /// The resolved deployment, as the server sent it.
    var resolved: ResolvedCollection
    /// The answer's ETag, sent back as `If-None-Match`.
    var etag: String?
    /// When this deployment was fetched.
    var fetched: Date
    /// When the server last confirmed it (a 200 or a 304).
    var checked: Date
    /// The server it came from.
    var server: String
    /// The context it was resolved for.
    var context: DeviceContext
}
