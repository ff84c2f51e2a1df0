import Foundation
import TestSupport
import Testing
@testable import MLKit

#if canImport(Glibc)
@Suite("Large pages for the tables that prediction reads at random", .onOwnThreads)
struct LargePageTests {
    /// Whether this kernel has transparent huge pages, so that `madvise(MADV_HUGEPAGE)` is taken.
    static let kernelHasHugePages = FileManager.default.fileExists(atPath: "/sys/kernel/mm/transparent_hugepage/enabled")

    /// The flags of the mapping holding `address`, from `/proc/self/smaps`: `hg` marks memory
    /// advised to use huge pages.
    private func mappingFlags(at address: UInt) throws -> [Substring] {
        // Read to the end: `String(contentsOfFile:)` stops after the first page of a /proc file.
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        var inside = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if let range = fields.first, fields.count > 1, !range.hasSuffix(":") {
                let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                inside = bounds.count == 2 && bounds[0] <= address && address < bounds[1]
            } else if inside && line.hasPrefix("VmFlags:") {
                return Array(fields.dropFirst())
            }
        }
        Issue.record("no mapping holds 0x\(String(address, radix: 16))")
        return []
    }

    /// The address of the middle of an array's elements: inside the whole 2 MiB pages of a block
    /// of several, which are the ones advised.
    private func middle<T>(of array: [T]) -> UInt {
        array.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress!) + UInt($0.count * MemoryLayout<T>.stride / 2) }
    }

    @Test("A large array is advised to use 2 MiB pages and holds what was written")
    func largeArray() throws {
        let count = 3 << 20  // 12 MiB of floats
        let values = [Float](largePagesCount: count) { buffer in
            for index in buffer.indices { buffer.initializeElement(at: index, to: Float(index)) }
        }
        #expect(values.count == count && values[12_345] == 12_345 && values.last == Float(count - 1))
        if Self.kernelHasHugePages { #expect(try mappingFlags(at: middle(of: values)).contains("hg")) }
    }

    @Test("A trained model's large weights are advised in place, without a copy")
    func trainedModel() throws {
        let classes = 39, features = 40_000  // 6.2 MB of weights
        let weights = (0..<(features * classes)).map { Float($0 % 997) }
        let model = ClassifierModel.linear(LinearModel(features: features, classes: classes, weights: weights,
                                                       bias: [Float](repeating: 0, count: classes),
                                                       probability: .softmax(temperature: 1)))
        guard case .linear(let linear) = model else {
            Issue.record("not a linear model")
            return
        }
        model.adviseLargePages()
        #expect(linear.weights.array == weights)
        if Self.kernelHasHugePages { #expect(try mappingFlags(at: middle(of: linear.weights.array)).contains("hg")) }
    }

    @Test("The weights read from a model file are the file's bytes in place, with no memory of their own")
    func modelFileWeights() throws {
        let weights = (0..<(2 << 20)).map { Float($0 % 1_000) / 7 }  // 8 MiB
        let data = ModelContainer.encode(header: Data("{}".utf8),
                                         sections: [ModelContainer.section(ModelFileSection.weights, floats: weights)])
        let container = try ModelContainer.decode(data, file: "w.mlkit", knownSections: [ModelFileSection.weights])
        let read = try container.flatFloats(ModelFileSection.weights)
        #expect(read.isInPlace)
        #expect(read.array == weights)
        let inside = data.withUnsafeBytes { file in
            read.withUnsafeBufferPointer { values in
                let start = UInt(bitPattern: file.baseAddress!), address = UInt(bitPattern: values.baseAddress!)
                return start <= address && address + UInt(values.count * 4) <= start + UInt(file.count)
            }
        }
        #expect(inside)
    }
}
#endif
