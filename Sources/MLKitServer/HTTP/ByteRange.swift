/// A `Range: bytes=...` request header, resolved against a file's size.
enum ByteRange: Equatable {
    /// No range, or one the server ignores (malformed, or several ranges): send the whole file.
    case whole
    /// Bytes `lowerBound...upperBound` of the file.
    case partial(ClosedRange<Int64>)
    /// A range that lies past the end of the file: 416.
    case unsatisfiable

    /// Reads `bytes=N-`, `bytes=N-M` or `bytes=-N` (the last N bytes).
    init(header: String?, size: Int64) {
        guard let header else { self = .whole; return }
        let text = header.trimmingASCIIWhitespace()
        guard text.lowercased().hasPrefix("bytes="), !text.contains(",") else { self = .whole; return }
        let spec = text.dropFirst("bytes=".count).trimmingASCIIWhitespace()
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { self = .whole; return }
        let first = Self.number(parts[0]), last = Self.number(parts[1])
        switch (parts[0].isEmpty, parts[1].isEmpty) {
        case (true, false):
            guard let suffix = last else { self = .whole; return }
            guard suffix > 0, size > 0 else { self = .unsatisfiable; return }
            self = .partial(max(0, size - suffix)...(size - 1))
        case (false, _):
            guard let start = first, parts[1].isEmpty || last != nil else { self = .whole; return }
            if let end = last, end < start { self = .whole; return }
            guard start < size else { self = .unsatisfiable; return }
            self = .partial(start...min(last ?? (size - 1), size - 1))
        default:
            self = .whole
        }
    }

    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int64(text)
    }
}
