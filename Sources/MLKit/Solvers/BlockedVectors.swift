/// Dense vector operations for optimizers, split into fixed blocks of ``blockSize`` elements.
///
/// Blocks, not threads, fix the order of every floating-point sum: a dot product adds the
/// eight-lane single-precision partial sums of each block into one double per block, then adds
/// the blocks in order. The result is therefore the same on any number of threads; threads only
/// decide which worker computes which blocks.
struct BlockedVectors: Sendable {
    /// Elements per block.
    static let blockSize = 8192
    /// Below this length the operations run on the calling thread.
    static let parallelThreshold = 1 << 16

    /// The vector length.
    let count: Int
    /// The number of worker threads.
    let threads: Int

    /// Operations on vectors of `count` elements with up to `threads` workers.
    init(count: Int, threads: Int) {
        self.count = count
        self.threads = count >= Self.parallelThreshold ? max(1, threads) : 1
    }

    private var blockCount: Int { (count + Self.blockSize - 1) / Self.blockSize }

    /// Runs `body` on the element range of every block and returns its results in block order.
    func forEachBlock<T: Sendable>(_ body: @escaping @Sendable (Range<Int>) -> T) -> [T] {
        let count = self.count
        let perBlock: @Sendable (Range<Int>) -> [T] = { blocks in
            blocks.map { block in body(block * Self.blockSize..<min(count, (block + 1) * Self.blockSize)) }
        }
        if threads == 1 { return perBlock(0..<blockCount) }
        return Parallel.map(blockCount, threads: threads, perBlock).flatMap { $0 }
    }

    /// `Σ aᵢ bᵢ`.
    func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>) -> Double {
        let a = SharedPointer(readOnly: a), b = SharedPointer(readOnly: b)
        return forEachBlock { range in VectorKernels.dot(a.base, b.base, range) }.reduce(0, +)
    }

    /// `Σ aᵢ bᵢ` of two buffers.
    func dot(_ a: SharedBuffer<Float>, _ b: SharedBuffer<Float>) -> Double { dot(a.base, b.base) }


    /// `out ← x + α d`.
    func combine(_ x: UnsafePointer<Float>, _ alpha: Float, _ d: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>) {
        let x = SharedPointer(readOnly: x), d = SharedPointer(readOnly: d), out = SharedPointer(out)
        _ = forEachBlock { range in VectorKernels.combine(x.base, alpha, d.base, out.base, range) }
    }

    /// `out ← x + α d`, returning `‖out‖²` (one pass over the vectors instead of two).
    func combineAndSquare(_ x: UnsafePointer<Float>, _ alpha: Float, _ d: UnsafePointer<Float>,
                          into out: UnsafeMutablePointer<Float>) -> Double {
        let x = SharedPointer(readOnly: x), d = SharedPointer(readOnly: d), out = SharedPointer(out)
        return forEachBlock { range in
            VectorKernels.combine(x.base, alpha, d.base, out.base, range)
            return VectorKernels.dot(out.base, out.base, range)
        }.reduce(0, +)
    }


}

/// Eight-lane SIMD loops over a range of two or three vectors.
enum VectorKernels {
    /// `Σ aᵢ bᵢ` over `range`: single-precision lanes, double-precision result.
    @inline(__always)
    static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ range: Range<Int>) -> Double {
        var sums = SIMD8<Float>.zero, sums2 = SIMD8<Float>.zero
        var index = range.lowerBound
        let a8 = UnsafeRawPointer(a), b8 = UnsafeRawPointer(b)
        let stride = MemoryLayout<Float>.stride
        while index + 16 <= range.upperBound {
            sums += a8.loadUnaligned(fromByteOffset: index * stride, as: SIMD8<Float>.self)
                * b8.loadUnaligned(fromByteOffset: index * stride, as: SIMD8<Float>.self)
            sums2 += a8.loadUnaligned(fromByteOffset: (index + 8) * stride, as: SIMD8<Float>.self)
                * b8.loadUnaligned(fromByteOffset: (index + 8) * stride, as: SIMD8<Float>.self)
            index += 16
        }
        var total = Double((sums + sums2).sum())
        while index < range.upperBound {
            total += Double(a[index]) * Double(b[index])
            index += 1
        }
        return total
    }


    /// `out ← x + α d` over `range` (`out` may alias `x` or `d`).
    @inline(__always)
    static func combine(_ x: UnsafePointer<Float>, _ alpha: Float, _ d: UnsafePointer<Float>,
                        _ out: UnsafeMutablePointer<Float>, _ range: Range<Int>) {
        let scale = SIMD8<Float>(repeating: alpha)
        let x8 = UnsafeRawPointer(x), d8 = UnsafeRawPointer(d), out8 = UnsafeMutableRawPointer(out)
        let stride = MemoryLayout<Float>.stride
        var index = range.lowerBound
        while index + 8 <= range.upperBound {
            let value = x8.loadUnaligned(fromByteOffset: index * stride, as: SIMD8<Float>.self)
                + scale * d8.loadUnaligned(fromByteOffset: index * stride, as: SIMD8<Float>.self)
            out8.storeBytes(of: value, toByteOffset: index * stride, as: SIMD8<Float>.self)
            index += 8
        }
        while index < range.upperBound {
            out[index] = x[index] + alpha * d[index]
            index += 1
        }
    }
}
