import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The lines of standard input, in batches: a batch holds the complete lines that have arrived
/// by one read. A file or a fast pipe comes in batches of many lines, which `predict` spreads
/// over the cores; a writer that sends a line and waits gets its answer before it sends the
/// next.
///
/// Lines are split as `readLine(strippingNewline: true)` splits them: at `\n`, with a `\r`
/// before it dropped too, and a last line without a line end is a line. Invalid UTF-8 becomes
/// U+FFFD.
struct InputLines {
    private let descriptor: Int32
    /// Bytes read but not yet returned: the start of a line whose end has not arrived.
    private var pending: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 1 << 18)
    private var ended = false

    /// Reads from `descriptor` (standard input by default).
    init(descriptor: Int32 = STDIN_FILENO) {
        self.descriptor = descriptor
    }

    /// The complete lines of the next read, without their line ends, or `nil` at the end of the
    /// input. Blocks only when no complete line is waiting.
    mutating func next() throws -> [String]? {
        while !ended {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                printError("cannot read standard input: \(String(cString: strerror(errno)))")
                throw ExitCode(ExitStatus.internalError)
            }
            if count == 0 {
                ended = true
                break
            }
            let start = pending.count
            pending.append(contentsOf: buffer[0..<count])
            // Only the new bytes can hold the line end that completes a line.
            guard let lastEnd = pending[start...].lastIndex(of: 0x0A) else { continue }
            let lines = pending[...lastEnd].split(separator: 0x0A, omittingEmptySubsequences: false)
                .dropLast().map(Self.line)
            pending.removeFirst(lastEnd + 1)
            return lines
        }
        guard !pending.isEmpty else { return nil }
        defer { pending = [] }
        return [Self.line(pending[...])]
    }

    /// One line's text, without a `\r` at its end.
    private static func line(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.last == 0x0D ? bytes.dropLast() : bytes, as: UTF8.self)
    }
}
