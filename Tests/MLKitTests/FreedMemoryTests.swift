import Foundation
import TestSupport
import Testing
import MLKit

#if canImport(Glibc)
/// Whether a sanitizer's runtime is in the process (`swift test --sanitize=address` or
/// `thread`): its allocator replaces glibc's, which `mallopt` then does not reach.
private let sanitizerAllocatorIsActive = dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil

@Suite("Freed memory kept for reuse",
       .disabled(if: sanitizerAllocatorIsActive, "a sanitizer's allocator replaces glibc's, so its mallopt settings do not apply"), .onOwnThreads)
struct FreedMemoryTests {
    /// The page faults of allocating a block, writing every page of it, and freeing it.
    private func faultsOfLargeBlock(bytes: Int) -> Int {
        let before = threadPageFaults()
        let block = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
        memset(block, 1, bytes)
        block.deallocate()
        return threadPageFaults() - before
    }

    @Test("A freed 48 MB block serves the next one without faulting its pages in again")
    func largeBlockReused() {
        #expect(FreedMemory.keepForReuse())
        let bytes = 48 << 20, pages = bytes / 4096
        _ = faultsOfLargeBlock(bytes: bytes)
        let again = faultsOfLargeBlock(bytes: bytes)
        // Without the settings glibc maps a block this large afresh each time: `pages` faults.
        #expect(again < pages / 10, "\(again) page faults for a block of \(pages) pages")
    }
}
#endif
