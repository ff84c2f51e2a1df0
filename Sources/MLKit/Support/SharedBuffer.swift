/// Scratch storage that parallel workers share, each writing its own disjoint indices.
///
/// Trainers fill it from ``Parallel/map(_:threads:_:)`` workers: the work is split so that no
/// two workers write the same element, and it is read only after every worker has finished,
/// which is what makes the unchecked `Sendable` conformance sound.
final class SharedBuffer<Element: BitwiseCopyable>: @unchecked Sendable {
    /// The first element.
    let base: UnsafeMutablePointer<Element>
    /// The number of elements.
    let count: Int

    /// Allocates `count` elements, each set to `value`.
    init(count: Int, repeating value: Element) {
        self.count = count
        base = .allocate(capacity: max(count, 1))
        base.initialize(repeating: value, count: count)
    }

    /// Allocates a copy of `elements`.
    init(copying elements: [Element]) {
        count = elements.count
        base = .allocate(capacity: max(count, 1))
        _ = UnsafeMutableBufferPointer(start: base, count: count).initialize(from: elements)
    }

    deinit { base.deallocate() }

    /// The whole buffer.
    var buffer: UnsafeMutableBufferPointer<Element> { UnsafeMutableBufferPointer(start: base, count: count) }

    /// Sets every element to `value`.
    func fill(_ value: Element) { base.update(repeating: value, count: count) }

    /// A copy of the contents.
    var array: [Element] { Array(buffer) }
}

/// A pointer handed to parallel workers that read it, or write disjoint parts of it, while its
/// owner keeps the memory alive for the duration of the parallel call.
struct SharedPointer<Element>: @unchecked Sendable {
    /// The first element.
    let base: UnsafeMutablePointer<Element>

    /// Wraps a mutable pointer.
    init(_ base: UnsafeMutablePointer<Element>) { self.base = base }

    /// Wraps a pointer that workers only read.
    init(readOnly base: UnsafePointer<Element>) { self.base = UnsafeMutablePointer(mutating: base) }
}

extension Array where Element == Float {
    /// Two new arrays of `firstCount` and `secondCount` elements, which `body` initializes in
    /// full through their first elements' addresses: large results that workers write in place,
    /// with no zeroing beforehand and no copy afterwards.
    static func filled(_ firstCount: Int, _ secondCount: Int,
                       _ body: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) -> Void) -> ([Float], [Float]) {
        var second: [Float] = []
        let first = [Float](unsafeUninitializedCapacity: Swift.max(firstCount, 1)) { first, firstInitialized in
            second = [Float](unsafeUninitializedCapacity: Swift.max(secondCount, 1)) { second, secondInitialized in
                body(first.baseAddress!, second.baseAddress!)
                secondInitialized = secondCount
            }
            firstInitialized = firstCount
        }
        return (first, second)
    }
}
