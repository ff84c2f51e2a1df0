import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads one model file into the cache: streamed to `partial/<sha256>.part`, resumed
/// with `Range` when a partial file is there, checked against the announced size and SHA-256,
/// and only then renamed into the collection's `models/` folder.
struct ModelDownload {
    /// The connection to the server.
    let connection: ServerConnection
    /// The cache that receives the file.
    let cache: ModelCache

    /// Makes sure the verified file of `entry` is in the collection's folder.
    /// - Returns: The file's location.
    /// - Throws: ``ModelCollectionError``: `network` when the transfer breaks (the partial file
    ///   stays for a resume), `checksumMismatch` when the bytes are wrong (the partial file is
    ///   deleted), or the server's error.
    func fetch(_ entry: ResolvedCollection.Entry, collection: String) async throws -> URL {
        let target = cache.modelFile(collection: collection, sha256: entry.sha256)
        if let size = fileSize(target), size == entry.size { return target }
        let partial = cache.partialFile(sha256: entry.sha256)
        try cache.createFolder(target.deletingLastPathComponent())
        // One download of a file at a time, across tasks and processes.
        let lock = try await cache.lockDownload(sha256: entry.sha256)
        defer { lock.release() }
        if let size = fileSize(target), size == entry.size { return target }

        var restarted = false
        while true {
            let offset = fileSize(partial) ?? 0
            if offset < entry.size {
                switch try await transfer(entry, to: partial, from: offset) {
                case .complete: break
                case .rangeNotSatisfiable where !restarted:
                    restarted = true
                    try? FileManager.default.removeItem(at: partial)
                    continue
                case .rangeNotSatisfiable:
                    throw ModelCollectionError(.invalidResponse, "model \(entry.sha256): the server refused to resume the download", statusCode: 416)
                }
            }
            try verify(partial, against: entry)
            try cache.moveDurably(partial, to: target)
            return target
        }
    }

    private enum Outcome {
        case complete
        case rangeNotSatisfiable
    }

    private func transfer(_ entry: ResolvedCollection.Entry, to partial: URL, from offset: Int64) async throws -> Outcome {
        let subject = "model \(entry.sha256)"
        guard let url = URL(string: entry.downloadURL, relativeTo: connection.server)?.absoluteURL else {
            throw ModelCollectionError(.invalidResponse, "\(subject): the download URL \"\(entry.downloadURL)\" is not a URL")
        }
        var request = URLRequest(url: url)
        if let token = connection.token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if offset > 0 {
            request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
            request.setValue("\"\(entry.sha256)\"", forHTTPHeaderField: "If-Range")
        }
        if !FileManager.default.fileExists(atPath: partial.path) {
            _ = FileManager.default.createFile(atPath: partial.path, contents: nil)
        }
        let handle: FileHandle
        do { handle = try FileHandle(forWritingTo: partial) } catch {
            throw ModelCollectionError.io("cannot open the partial download", partial.path, error)
        }
        defer { try? handle.close() }

        let receiver = DownloadReceiver(file: handle, path: partial.path, offset: offset, expectedSize: entry.size,
                                        watchdog: Watchdog(interval: connection.watchdogInterval))
        let session = URLSession(configuration: connection.configuration, delegate: receiver, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: request)
        // Bytes reset the watchdog: a download may take long, but not stall.
        let result = try await receiver.completion.run(task, watchdog: receiver.watchdog) {
            receiver.stall()
        } onCancel: {
            receiver.cancel()
            task.cancelLater()
        }
        try Task.checkCancellation()
        switch result {
        case .cancelled:
            throw CancellationError()
        case .finished:
            do { try handle.synchronize() } catch {
                throw ModelCollectionError.io("cannot flush the partial download", partial.path, error)
            }
            return .complete
        case .rangeNotSatisfiable:
            return .rangeNotSatisfiable
        case .status(let status, let body):
            if status == 404 { try? FileManager.default.removeItem(at: partial) }
            throw ServerConnection.statusError(status, body: body, about: subject)
        case .failed(let error):
            throw error
        case .transport(let error, let received):
            let progress = "after \(offset + received) of \(entry.size) bytes"
            throw ModelCollectionError(.network, "\(subject): the download broke \(progress), the partial file is kept for a resume (\(error.localizedDescription))")
        }
    }

    private func verify(_ partial: URL, against entry: ResolvedCollection.Entry) throws {
        let subject = "model \(entry.sha256)"
        let size = fileSize(partial) ?? 0
        guard size == entry.size else {
            try? FileManager.default.removeItem(at: partial)
            throw ModelCollectionError(.checksumMismatch, "\(subject): the file has \(size) bytes, the server announced \(entry.size)")
        }
        let digest: String
        do { digest = try FileDigest.sha256(ofFile: partial) } catch {
            throw ModelCollectionError.io("cannot read the downloaded file", partial.path, error)
        }
        guard digest == entry.sha256 else {
            try? FileManager.default.removeItem(at: partial)
            throw ModelCollectionError(.checksumMismatch, "\(subject): the downloaded file's SHA-256 is \(digest); it was rejected and the cached copy kept")
        }
    }

    private func fileSize(_ url: URL) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
    }
}

/// Receives one download's bytes on the session's delegate queue and appends them to the
/// partial file as they arrive, so a broken connection keeps what came.
private final class DownloadReceiver: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    enum Result: Sendable {
        case finished
        case cancelled
        case rangeNotSatisfiable
        case status(Int, Data)
        case failed(ModelCollectionError)
        case transport(any Error, received: Int64)
    }

    private enum Mode {
        case waiting
        case writing
        case collectingError(Int)
        /// The Swift task was cancelled: nothing more is written.
        case cancelled
    }

    private let file: FileHandle
    private let path: String
    private let offset: Int64
    private let expectedSize: Int64
    /// Ends the download when no bytes come for its interval (``stall()``).
    let watchdog: Watchdog
    private let lock = NSLock()
    /// Hands the result to the waiting task.
    let completion = TransferCompletion<Result>()
    private var mode = Mode.waiting
    private var written: Int64 = 0
    private var start: Int64 = 0
    private var errorBody = Data()
    private var failure: ModelCollectionError?

    init(file: FileHandle, path: String, offset: Int64, expectedSize: Int64, watchdog: Watchdog) {
        self.watchdog = watchdog
        self.file = file
        self.path = path
        self.offset = offset
        self.expectedSize = expectedSize
    }

    /// Ends the wait with ``Result/cancelled``; from then on nothing is written to the file, so
    /// that the caller may close it at once.
    func cancel() {
        lock.withLock { mode = .cancelled }
        completion.finish(.success(.cancelled))
    }

    /// Ends the wait as a broken transfer (``TransferStalled``), keeping what came for a
    /// resume; from then on nothing is written to the file, as after ``cancel()``.
    func stall() {
        let received: Int64 = lock.withLock {
            mode = .cancelled
            return written
        }
        completion.finish(.success(.transport(TransferStalled(seconds: watchdog.interval), received: received)))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        watchdog.progressed()
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let disposition: URLSession.ResponseDisposition = lock.withLock {
            if case .cancelled = mode { return .cancel }
            switch status {
            case 200:
                start = 0
            case 206:
                let range = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Range") ?? ""
                guard Self.rangeStart(range) == offset else {
                    failure = ModelCollectionError(.invalidResponse, "the server resumed at \"\(range)\", not at byte \(offset)", statusCode: 206)
                    return .cancel
                }
                start = offset
            default:
                mode = .collectingError(status)
                return .allow
            }
            do {
                try file.truncate(atOffset: UInt64(start))
                try file.seek(toOffset: UInt64(start))
            } catch {
                failure = ModelCollectionError.io("cannot prepare the partial download", path, error)
                return .cancel
            }
            mode = .writing
            return .allow
        }
        completionHandler(disposition)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        watchdog.progressed()
        let cancel: Bool = lock.withLock {
            switch mode {
            case .collectingError:
                if errorBody.count < 1 << 16 { errorBody.append(data) }
                return false
            case .waiting, .cancelled:
                return true
            case .writing:
                guard start + written + Int64(data.count) <= expectedSize else {
                    failure = ModelCollectionError(.checksumMismatch, "the server sent more than the announced \(expectedSize) bytes")
                    return true
                }
                do { try file.write(contentsOf: data) } catch {
                    failure = ModelCollectionError.io("cannot write the partial download", path, error)
                    return true
                }
                written += Int64(data.count)
                return false
            }
        }
        if cancel { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        watchdog.stop()
        let result: Result = lock.withLock {
            if let failure { return .failed(failure) }
            if case .collectingError(let status) = mode {
                return status == 416 ? .rangeNotSatisfiable : .status(status, errorBody)
            }
            if let error { return .transport(error, received: written) }
            if start + written < expectedSize {
                return .transport(URLError(.networkConnectionLost), received: written)
            }
            return .finished
        }
        completion.finish(.success(result))
    }

    /// The first byte of a `Content-Range: bytes START-END/SIZE` header.
    private static func rangeStart(_ header: String) -> Int64? {
        guard header.hasPrefix("bytes ") else { return nil }
        let range = header.dropFirst(6).prefix { $0 != "/" }
        return range.split(separator: "-").first.flatMap { Int64($0) }
    }
}
