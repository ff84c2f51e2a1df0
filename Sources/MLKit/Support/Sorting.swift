/// In-place sorting that never allocates, for the per-document hot path.
enum Sorting {
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
