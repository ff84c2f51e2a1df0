import Foundation
import MLKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Consecutive lines of the input, as bytes: the unit that the streaming stages pass along.
/// The bytes stay where the reader put them (a memory-mapped file, or a buffer of a read) until
/// a worker turns them into texts.
final class LineBatch: @unchecked Sendable {
    /// The batch's place in the input: 0, 1, 2...
    let index: Int
    /// The 1-based number of its first line in the input.
    let firstLine: Int
    /// The offset of its first byte in the input.
    let byteOffset: Int
    /// The bytes of its lines, line ends included.
    let bytes: UnsafeRawBufferPointer
    /// Where each line lies in `bytes`, without its `\n`.
    let lines: [Range<Int>]
    /// What keeps `bytes` valid, and gives it back when the batch is done with.
    private let storage: BatchStorage

    init(index: Int, firstLine: Int, byteOffset: Int, bytes: UnsafeRawBufferPointer, lines: [Range<Int>],
         storage: BatchStorage) {
        self.index = index
        self.firstLine = firstLine
        self.byteOffset = byteOffset
        self.bytes = bytes
        self.lines = lines
        self.storage = storage
    }

    /// Called by the writer once the batch's output is written, in the input's order.
    func written() { storage.written(through: bytes) }

    /// The texts of the lines: split as `readLine(strippingNewline: true)` splits them (a `\r`
    /// before the `\n` is dropped too), up to the first line that is not UTF-8, if any.
    /// - Returns: The texts, and, when a line is not UTF-8, an ``MLKitError`` (`invalidUTF8`)
    ///   naming the input, the line, the column and the offset of its first bad byte.
    func texts(inputName: String) -> (texts: [String], failure: MLKitError?) {
        var texts: [String] = []
        texts.reserveCapacity(lines.count)
        for (offset, range) in lines.enumerated() {
            var end = range.upperBound
            if end > range.lowerBound && bytes[end - 1] == 0x0D { end -= 1 }
            let line = UnsafeRawBufferPointer(rebasing: bytes[range.lowerBound..<end])
            guard let text = String(validating: line, as: UTF8.self) else {
                let column = Self.firstInvalidByte(line) ?? 0
                let byte = String(line[column], radix: 16, uppercase: true)
                let failure = MLKitError(.invalidUTF8, "invalid UTF-8 (byte 0x\(byte.count < 2 ? "0" + byte : byte) at offset "
                                         + "\(byteOffset + range.lowerBound + column))",
                                         at: .init(file: inputName, line: firstLine + offset, column: column + 1))
                return (texts, failure)
            }
            texts.append(text)
        }
        return (texts, nil)
    }

    /// The offset of the first byte of `bytes` that does not start or continue a UTF-8 character.
    private static func firstInvalidByte(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }
}

/// Where a batch's bytes live.
class BatchStorage: @unchecked Sendable {
    /// Called, in the input's order, once the batch that holds `bytes` and every batch before it
    /// are written.
    func written(through bytes: UnsafeRawBufferPointer) {}
}

/// A buffer of its own, freed with the batch.
private final class OwnedBytes: BatchStorage, @unchecked Sendable {
    let buffer: UnsafeMutableRawBufferPointer
    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }
    deinit { buffer.deallocate() }
}

/// A whole file mapped into memory. As the writer goes, the pages before the first batch not
/// yet written are given back to the system, so the pages of a large file do not pile up in the
/// process's memory.
private final class MappedFile: BatchStorage, @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let count: Int
    private let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    /// The offset below which the pages have been given back; the writer's thread alone moves it.
    private var released = 0
    /// How far behind a fault the system may map pages it has cached (its fault-around
    /// window, 64 kB by default), with room to spare: each release covers that much before the
    /// previous one again.
    private static let faultAround = 1 << 18

    init(base: UnsafeMutableRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    override func written(through bytes: UnsafeRawBufferPointer) {
        guard let start = bytes.baseAddress else { return }
        // Pages wholly before the end of the written batches; the page that holds the end may
        // still be read for the next batch.
        let boundary = (start + bytes.count - UnsafeRawPointer(base)) / pageSize * pageSize
        let from = max(0, released - Self.faultAround) / pageSize * pageSize
        guard boundary > from else { return }
        // The mapping is read-only, so a page given back is read again from the file if needed.
        madvise(base + from, boundary - from, MADV_DONTNEED)
        released = max(released, boundary)
    }

    deinit { munmap(base, count) }
}

/// Reads an input (a file, or standard input) and cuts it into batches of lines whose size
/// adapts to the lines': a batch ends after ``targetBytes`` bytes or ``maximumLines`` lines,
/// whichever comes first. A regular file is memory-mapped. From a pipe or a terminal, the lines
/// that have arrived are handed on as soon as nothing more is waiting, so a writer that sends
/// one line and waits gets its answer at once.
struct LineBatchReader {
    /// The bytes a batch aims at.
    static let targetBytes = 1 << 16
    /// The most lines in a batch: many very short lines still make batches of bounded work.
    static let maximumLines = 4096

    private let descriptor: Int32
    private let ownsDescriptor: Bool
    /// The input's name in messages.
    let name: String
    private var mapped: MappedFile?
    /// The next byte of the mapped file to hand on.
    private var position = 0
    /// Bytes read from a pipe that are not handed on yet: the start of a line whose end has not
    /// arrived.
    private var pending: UnsafeMutableRawBufferPointer
    private var pendingCount = 0
    /// The bytes read and handed on in batches.
    private var handedOn = 0
    private var ended = false
    private var nextIndex = 0
    private var nextLine = 1

    /// Reads `path`, or standard input when it is `nil`.
    /// - Throws: ``MLKitError`` (`fileNotFound`, `io`) naming the file.
    init(path: String?) throws {
        if let path {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                let code: MLKitError.Code = errno == ENOENT ? .fileNotFound : .io
                throw MLKitError(code, errno == ENOENT ? "no such input file" : "cannot open the input file (\(String(cString: strerror(errno))))",
                                 at: .init(file: path))
            }
            ownsDescriptor = true
            name = path
        } else {
            descriptor = STDIN_FILENO
            ownsDescriptor = false
            name = "standard input"
        }
        pending = .allocate(byteCount: Self.targetBytes, alignment: 16)
        // A file that can seek from its start to a non-zero end (a regular file) is mapped;
        // a pipe, a terminal or an empty file is read.
        let start = lseek(descriptor, 0, SEEK_CUR)
        if start == 0, case let size = Int(lseek(descriptor, 0, SEEK_END)), size > 0 {
            if let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), base != MAP_FAILED {
                madvise(base, size, MADV_SEQUENTIAL)
                mapped = MappedFile(base: base, count: size)
            }
            lseek(descriptor, 0, SEEK_SET)
        }
    }

    /// Closes the file it opened.
    func close() {
        pending.deallocate()
        if ownsDescriptor { closeDescriptor(descriptor) }
    }

    /// The next batch, or `nil` at the end of the input.
    /// - Throws: ``MLKitError`` (`io`) when reading fails.
    mutating func next() throws -> LineBatch? {
        if let mapped { return nextMapped(mapped) }
        return try nextRead()
    }

    private mutating func nextMapped(_ file: MappedFile) -> LineBatch? {
        guard position < file.count else { return nil }
        let base = UnsafeRawPointer(file.base)
        var lines: [Range<Int>] = []
        var cursor = position
        while cursor < file.count && lines.count < Self.maximumLines && cursor - position < Self.targetBytes {
            let remaining = file.count - cursor
            if let found = memchr(base + cursor, 0x0A, remaining) {
                let end = UnsafeRawPointer(found) - base
                lines.append((cursor - position)..<(end - position))
                cursor = end + 1
            } else {
                lines.append((cursor - position)..<(file.count - position))
                cursor = file.count
            }
        }
        let batch = LineBatch(index: nextIndex, firstLine: nextLine, byteOffset: position,
                              bytes: UnsafeRawBufferPointer(start: base + position, count: cursor - position),
                              lines: lines, storage: file)
        position = cursor
        nextIndex += 1
        nextLine += lines.count
        return batch
    }

    private mutating func nextRead() throws -> LineBatch? {
        while true {
            // Hand on the complete lines once enough have come, or once nothing more is waiting.
            if pendingCount > 0 && (ended || pendingCount >= Self.targetBytes || !moreWaiting()) {
                if let batch = cutPending() { return batch }
            }
            if ended { return nil }
            if pendingCount == pending.count {
                // A line longer than the buffer: grow it.
                let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: pending.count * 2, alignment: 16)
                larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: pending[0..<pendingCount]))
                pending.deallocate()
                pending = larger
            }
            let count = read(descriptor, pending.baseAddress! + pendingCount, pending.count - pendingCount)
            if count < 0 {
                if errno == EINTR { continue }
                throw MLKitError(.io, "cannot read the input (\(String(cString: strerror(errno))))", at: .init(file: name))
            }
            if count == 0 { ended = true } else { pendingCount += count }
        }
    }

    /// Whether more input can be read at once, without waiting.
    private func moreWaiting() -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) > 0 && poller.revents & Int16(POLLIN) != 0
    }

    /// The complete lines of the pending bytes (all of them at the end of the input) as a batch,
    /// the rest moved to a fresh buffer; `nil` when no line is complete.
    private mutating func cutPending() -> LineBatch? {
        let bytes = UnsafeRawBufferPointer(rebasing: pending[0..<pendingCount])
        var lines: [Range<Int>] = []
        var cursor = 0
        while cursor < bytes.count && lines.count < Self.maximumLines && cursor < Self.targetBytes {
            guard let found = memchr(bytes.baseAddress! + cursor, 0x0A, bytes.count - cursor) else {
                if ended {
                    lines.append(cursor..<bytes.count)
                    cursor = bytes.count
                }
                break
            }
            let end = UnsafeRawPointer(found) - bytes.baseAddress!
            lines.append(cursor..<end)
            cursor = end + 1
        }
        guard !lines.isEmpty else { return nil }
        let rest = UnsafeMutableRawBufferPointer.allocate(byteCount: max(Self.targetBytes, pendingCount - cursor), alignment: 16)
        rest.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[cursor...]))
        let full = pending
        pending = rest
        pendingCount -= cursor
        let batch = LineBatch(index: nextIndex, firstLine: nextLine, byteOffset: handedOn,
                              bytes: UnsafeRawBufferPointer(rebasing: full[0..<cursor]), lines: lines,
                              storage: OwnedBytes(full))
        handedOn += cursor
        nextIndex += 1
        nextLine += lines.count
        return batch
    }
}

/// Closes a file descriptor (`close` inside ``LineBatchReader`` would name its own method).
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
