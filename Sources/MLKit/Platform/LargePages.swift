#if canImport(Glibc)
import Glibc
#endif

extension Array {
    /// Creates an array of `count` elements that `initialize` writes, asking the kernel first to
    /// back its memory with 2 MiB pages (Linux's transparent huge pages) when it spans at least
    /// ``largePageThreshold`` bytes.
    ///
    /// For the tables that prediction reads at random, a few cache lines per feature, when they
    /// are built in this process (a trained model's weights are advised in place by
    /// ``ClassifierModel/adviseLargePages()``; a model read from a file uses the file's mapped
    /// pages, which loads it without faulting in fresh 2 MiB pages). With 4 KiB pages,
    /// debian-sections' 36 MB matrix spans about 9,000 pages, more than the processor's
    /// translation cache holds, so that most rows a text needs also miss in it; with 2 MiB pages,
    /// 18 entries cover the matrix. Batch prediction on debian-sections took 0.93–0.97× the time.
    ///
    /// The advice is taken on the pages' first write, so it is given before `initialize` runs; a
    /// block that the allocator hands out already touched gets huge pages only if the kernel
    /// collapses it later. Advice changes no content. With the kernel's setting at `always`
    /// every large block gets huge pages anyway, and at `never` none does; on Apple's systems this
    /// is a plain ``init(unsafeUninitializedCapacity:initializingWith:)``.
    /// - Parameter initialize: Must initialize every element of the buffer it gets.
    init(largePagesCount count: Int, initializingWith initialize: (UnsafeMutableBufferPointer<Element>) throws -> Void) rethrows {
        try self.init(unsafeUninitializedCapacity: count) { buffer, initialized in
            if Self.spansLargePages(count), let base = buffer.baseAddress {
                adviseHugePages(base, count * MemoryLayout<Element>.stride)
            }
            try initialize(buffer)
            initialized = count
        }
    }

    /// Advises the kernel to back this array's memory with 2 MiB pages, in place, when it spans
    /// at least ``largePageThreshold`` bytes. Its pages are already written, so they become huge
    /// pages only when khugepaged collapses them, in the background; the array is not copied.
    ///
    /// For a model trained in this process: copying its weights into fresh advised memory
    /// (``init(largePagesCount:initializingWith:)``) made training on wordnet-hypernyms (a
    /// 151 MB matrix) 0.47 s longer, against 0.09 s for a plain copy: on this virtual machine
    /// each fresh 2 MiB page took about 5 ms to fault in.
    func adviseLargePages() {
        guard Self.spansLargePages(count) else { return }
        withUnsafeBufferPointer { buffer in
            if let base = buffer.baseAddress {
                adviseHugePages(UnsafeMutableRawPointer(mutating: base), count * MemoryLayout<Element>.stride)
            }
        }
    }

    /// Whether `count` elements span at least ``largePageThreshold`` bytes, the size from which
    /// arrays are put in large pages.
    static func spansLargePages(_ count: Int) -> Bool {
        count * MemoryLayout<Element>.stride >= largePageThreshold
    }
}

/// Asks the kernel to back the whole 2 MiB pages inside `[address, address + bytes)` with
/// transparent huge pages, where it is set to do so on request (the `madvise` mode of
/// `/sys/kernel/mm/transparent_hugepage/enabled`). Pages not yet touched get huge pages on their
/// first write; pages already touched only when khugepaged collapses them. Advice: it changes no
/// content, and a kernel that refuses it changes nothing. Does nothing on systems without
/// `MADV_HUGEPAGE`.
private func adviseHugePages(_ address: UnsafeMutableRawPointer, _ bytes: Int) {
    #if canImport(Glibc)
    let huge = UInt(2 << 20)
    let start = (UInt(bitPattern: address) + huge - 1) & ~(huge - 1)
    let end = (UInt(bitPattern: address) + UInt(bytes)) & ~(huge - 1)
    guard end > start, let aligned = UnsafeMutableRawPointer(bitPattern: start) else { return }
    _ = madvise(aligned, Int(end - start), MADV_HUGEPAGE)
    #endif
}

/// The size from which ``Swift/Array/init(largePagesCount:initializingWith:)`` asks for 2 MiB
/// pages: two of them, so that the block holds at least one whole, aligned one.
let largePageThreshold = 4 << 20
