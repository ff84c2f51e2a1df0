/// In-place sorting that never allocates, for the per-document hot path.
enum Sorting {
    /// Sorts non-negative keys ascending: insertion sort up to 32 keys, above that a
    /// least-significant-digit radix sort on bytes, whose passes have no data-dependent branches
    /// (quicksort's mispredicted comparisons cost more than the sort itself on random keys).
    /// - Parameters:
    ///   - keys: The keys; all must be non-negative.
    ///   - scratch: At least `keys.count` elements of working space.
    static func sortKeys(_ keys: UnsafeMutableBufferPointer<Int32>, scratch: UnsafeMutableBufferPointer<Int32>) {
        let count = keys.count
        guard count > 32 else {
            insertionSort(keys, 0, count - 1)
            return
        }
        var combined: Int32 = 0
        for key in keys { combined |= key }
        // The bytes that vary at all; the histograms of all of them are counted in one pass.
        let digits = (32 - combined.leadingZeroBitCount + 7) / 8
        var source = keys.baseAddress!
        var target = scratch.baseAddress!
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: 4 * 256) { counts in
            counts.initialize(repeating: 0)
            let histogram = counts.baseAddress!
            for position in 0..<count {
                let key = Int(source[position])
                histogram[key & 0xFF] &+= 1
                histogram[256 + (key >> 8) & 0xFF] &+= 1
                histogram[512 + (key >> 16) & 0xFF] &+= 1
                histogram[768 + key >> 24] &+= 1
            }
            for digit in 0..<digits {
                let offsets = histogram + 256 * digit
                var total: Int32 = 0
                for bucket in 0..<256 {
                    let bucketCount = offsets[bucket]
                    offsets[bucket] = total
                    total &+= bucketCount
                }
                let shift = 8 * digit
                for position in 0..<count {
                    let key = source[position]
                    let bucket = Int(key >> shift) & 0xFF
                    target[Int(offsets[bucket])] = key
                    offsets[bucket] &+= 1
                }
                swap(&source, &target)
            }
        }
        if source != keys.baseAddress! { keys.baseAddress!.update(from: source, count: count) }
    }

    /// Sorts `elements` by a 64-bit key, ascending and stably (equal keys keep their order): a
    /// least-significant-digit radix sort on 11-bit digits, skipping the digits every key shares.
    /// Linear in the count, for the large arrays of training (a million feature hashes).
    /// - Parameters:
    ///   - elements: The elements.
    ///   - scratch: At least `elements.count` elements of working space.
    ///   - key: The key of an element.
    @inline(__always)
    static func sortStably<Element: BitwiseCopyable>(_ elements: UnsafeMutableBufferPointer<Element>,
                                    scratch: UnsafeMutableBufferPointer<Element>, by key: (Element) -> UInt64) {
        let count = elements.count
        guard count > 1 else { return }
        precondition(scratch.count >= count)
        let bits = 11, buckets = 1 << 11, digits = (64 + bits - 1) / bits
        withUnsafeTemporaryAllocation(of: Int.self, capacity: digits * buckets) { histograms in
            histograms.initialize(repeating: 0)
            let histogram = histograms.baseAddress!
            for element in elements {
                let value = key(element)
                for digit in 0..<digits {
                    histogram[digit * buckets + Int(truncatingIfNeeded: value >> UInt64(digit * bits)) & (buckets - 1)] += 1
                }
            }
            var source = elements.baseAddress!
            var target = scratch.baseAddress!
            for digit in 0..<digits {
                let offsets = histogram + digit * buckets
                // A digit that every key shares would move nothing.
                if offsets[Int(truncatingIfNeeded: key(source[0]) >> UInt64(digit * bits)) & (buckets - 1)] == count { continue }
                var total = 0
                for bucket in 0..<buckets {
                    let bucketCount = offsets[bucket]
                    offsets[bucket] = total
                    total += bucketCount
                }
                for position in 0..<count {
                    let element = source[position]
                    let bucket = Int(truncatingIfNeeded: key(element) >> UInt64(digit * bits)) & (buckets - 1)
                    target[offsets[bucket]] = element
                    offsets[bucket] += 1
                }
                swap(&source, &target)
            }
            if source != elements.baseAddress! { elements.baseAddress!.update(from: source, count: count) }
        }
    }

    /// Sorts `elements` ascending: insertion sort for short runs, quicksort with a
    /// median-of-three pivot above that, recursing on the smaller side (O(log n) stack).
    static func sortInPlace<Element: Comparable>(_ elements: UnsafeMutableBufferPointer<Element>) {
        var low = 0
        var high = elements.count - 1
        while high - low > 24 {
            let pivot = medianOfThree(elements, low, (low + high) / 2, high)
            var left = low
            var right = high
            while left <= right {
                while elements[left] < pivot { left += 1 }
                while pivot < elements[right] { right -= 1 }
                if left <= right {
                    elements.swapAt(left, right)
                    left += 1
                    right -= 1
                }
            }
            if right - low < high - left {
                sortInPlace(UnsafeMutableBufferPointer(rebasing: elements[low...max(low, right)]))
                low = left
            } else {
                sortInPlace(UnsafeMutableBufferPointer(rebasing: elements[min(left, high)...high]))
                high = right
            }
        }
        insertionSort(elements, low, high)
    }

    private static func medianOfThree<Element: Comparable>(_ elements: UnsafeMutableBufferPointer<Element>,
                                                          _ a: Int, _ b: Int, _ c: Int) -> Element {
        let x = elements[a], y = elements[b], z = elements[c]
        if x < y { return y < z ? y : (x < z ? z : x) }
        return x < z ? x : (y < z ? z : y)
    }

    private static func insertionSort<Element: Comparable>(_ elements: UnsafeMutableBufferPointer<Element>,
                                                          _ low: Int, _ high: Int) {
        guard high > low else { return }
        for position in (low + 1)...high {
            let value = elements[position]
            var hole = position
            while hole > low && value < elements[hole - 1] {
                elements[hole] = elements[hole - 1]
                hole -= 1
            }
            elements[hole] = value
        }
    }
}
