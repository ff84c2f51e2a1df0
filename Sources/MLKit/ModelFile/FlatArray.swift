import Foundation

/// An immutable run of plain values: a Swift array, or a section of a model file's bytes used
/// in place.
///
/// A model read from a file keeps its large arrays (a linear model's weights, an embedding
/// model's rows) as slices of the file's memory-mapped bytes, so that loading copies nothing
/// and builds nothing per feature: the kernel reads a page of the file when prediction first
/// touches it, and processes that load the same model share its pages. The slice keeps the
/// mapping alive. A model trained in this process holds its own arrays.
///
/// Every access goes through ``withUnsafeBufferPointer(_:)``, inside which the values' memory
/// stays put: an array that is never mutated, or a `Data` whose storage does not move.
struct FlatArray<Element: BitwiseCopyable>: @unchecked Sendable {
    // Sendable: both cases hold immutable, Sendable values (`[Element]` of plain values, and
    // `Data`); nothing here can be mutated after creation.
    private enum Storage {
        case array([Element])
        case bytes(Data)
    }

    private let storage: Storage
    /// The number of values.
    let count: Int

    /// Values held in an array.
    init(_ values: [Element]) {
        storage = .array(values)
        count = values.count
    }

    /// The smallest number of bytes used in place. `Data` keeps a few bytes inline, in the value
    /// itself, where their address changes from one access to the next; from this size on its
    /// bytes always lie in storage of their own, which does not move.
    static var smallestInPlace: Int { 256 }

    /// The values stored little-endian in `bytes`, used in place when this machine is
    /// little-endian, `bytes` is aligned for `Element` and holds at least ``smallestInPlace``
    /// bytes; else copied once into an array.
    /// - Precondition: `bytes.count` is a multiple of the element's size.
    init(littleEndian bytes: Data, fromLittleEndian: (Element) -> Element) {
        let size = MemoryLayout<Element>.size
        precondition(bytes.count % size == 0, "a whole number of values")
        let count = bytes.count / size
        let aligned = bytes.count >= Self.smallestInPlace && bytes.withUnsafeBytes { raw in
            raw.baseAddress.map { Int(bitPattern: $0) % MemoryLayout<Element>.alignment == 0 } ?? false
        }
        #if _endian(little)
        let inPlace = aligned
        #else
        let inPlace = false
        #endif
        if inPlace {
            storage = .bytes(bytes)
        } else {
            var values = [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
                bytes.withUnsafeBytes { raw in
                    if let source = raw.baseAddress, count > 0 {
                        UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: source, byteCount: count * size)
                    }
                }
                initialized = count
            }
            if UInt32(littleEndian: 1) != 1 {
                for index in values.indices { values[index] = fromLittleEndian(values[index]) }
            }
            storage = .array(values)
        }
        self.count = count
    }

    /// Whether the values are a file's bytes used in place, rather than an array of their own.
    var isInPlace: Bool {
        if case .bytes = storage { return true }
        return false
    }

    /// Calls `body` with the values' memory, valid only inside it.
    /// - Complexity: O(1).
    @inline(__always)
    func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        switch storage {
        case .array(let values):
            return try values.withUnsafeBufferPointer(body)
        case .bytes(let bytes):
            return try bytes.withUnsafeBytes { raw in
                try raw.withMemoryRebound(to: Element.self, body)
            }
        }
    }

    /// Calls `body` with the values' bytes, valid only inside it.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBufferPointer { try body(UnsafeRawBufferPointer($0)) }
    }

    /// The values in an array of their own.
    var array: [Element] {
        if case .array(let values) = storage { return values }
        return withUnsafeBufferPointer { Array($0) }
    }

    /// Advises the kernel to back an array of its own with 2 MiB pages
    /// (``Swift/Array/adviseLargePages()``); a file's bytes are left as they are.
    func adviseLargePages() {
        if case .array(let values) = storage { values.adviseLargePages() }
    }
}

extension FlatArray: RandomAccessCollection {
    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> Element {
        precondition(position >= 0 && position < count, "index out of range")
        return withUnsafeBufferPointer { $0[position] }
    }
}

extension FlatArray: Equatable where Element: Equatable {
    static func == (lhs: FlatArray, rhs: FlatArray) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBufferPointer { left in rhs.withUnsafeBufferPointer { right in left.elementsEqual(right) } }
    }
}
