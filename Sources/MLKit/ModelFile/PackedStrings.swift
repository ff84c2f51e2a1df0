/// Strings stored as one block of UTF-8 bytes, each followed by a NUL byte: the layout of a
/// model file's string sections (`docs/model-format.md`), so that writing or reading a
/// vocabulary's million keys copies one block instead of building a million `String`s.
struct PackedStrings: Sendable, Equatable {
    /// The strings' UTF-8 bytes, each string followed by a NUL byte.
    let bytes: [UInt8]
    /// The number of strings.
    let count: Int

    /// Packs `strings`, which must not contain NUL bytes.
    init(_ strings: [String]) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(strings.reduce(0) { $0 + $1.utf8.count + 1 })
        for string in strings {
            bytes.append(contentsOf: string.utf8)
            bytes.append(0)
        }
        self.bytes = bytes
        count = strings.count
    }

    /// Takes bytes already in the packed layout.
    /// - Returns: `nil` unless `bytes` is empty or ends with a NUL byte.
    init?(packed bytes: [UInt8]) {
        guard bytes.last ?? 0 == 0 else { return nil }
        self.bytes = bytes
        count = bytes.withUnsafeBufferPointer { bytes in bytes.reduce(0) { $0 + ($1 == 0 ? 1 : 0) } }
    }

    /// Packs strings given as byte ranges of blocks, in any order: each piece is a block of
    /// bytes and the index and range of each string it holds.
    /// - Parameters:
    ///   - count: The number of strings; one whose index no piece names is empty.
    ///   - pieces: Blocks of bytes, with the strings found in each; no index may repeat.
    init(count: Int, pieces: [(bytes: [UInt8], strings: [(index: Int32, range: Range<Int>)])]) {
        var offsets = [Int](repeating: 0, count: count + 1)
        for piece in pieces {
            for string in piece.strings { offsets[Int(string.index) + 1] = string.range.count }
        }
        // A string and its NUL byte, one after another.
        for index in 0..<count { offsets[index + 1] += offsets[index] + 1 }
        var bytes = [UInt8](repeating: 0, count: offsets[count])
        bytes.withUnsafeMutableBufferPointer { bytes in
            for piece in pieces {
                piece.bytes.withUnsafeBufferPointer { source in
                    for string in piece.strings where !string.range.isEmpty {
                        _ = UnsafeMutableBufferPointer(rebasing: bytes[offsets[Int(string.index)]...])
                            .update(fromContentsOf: source[string.range])
                    }
                }
            }
        }
        self.bytes = bytes
        self.count = count
    }

    /// The strings, decoded (ill-formed UTF-8 repaired with U+FFFD).
    var strings: [String] {
        var strings: [String] = []
        strings.reserveCapacity(count)
        bytes.withUnsafeBufferPointer { utf8 in
            var start = 0
            for index in utf8.indices where utf8[index] == 0 {
                strings.append(String(decoding: UnsafeBufferPointer(rebasing: utf8[start..<index]), as: UTF8.self))
                start = index + 1
            }
        }
        return strings
    }
}
