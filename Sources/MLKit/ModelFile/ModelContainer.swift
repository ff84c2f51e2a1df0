import Foundation

/// The binary container of a model file: magic bytes, the format version, a table of typed
/// sections, a JSON header, 64-byte-aligned little-endian sections, and a footer with the
/// file's length and CRC-32. `docs/model-format.md` documents every byte.
///
/// The container knows nothing of classifiers: ``ModelFile`` decides what the header and
/// sections hold.
struct ModelContainer {
    /// The type of a section's elements.
    enum ElementType: UInt32, Sendable {
        /// Little-endian IEEE 754 single precision.
        case float32 = 1
        /// Little-endian unsigned 64-bit integers.
        case uint64 = 2
        /// UTF-8 strings, each followed by a NUL byte.
        case utf8 = 3
        /// Little-endian signed 32-bit integers.
        case int32 = 4
    }

    /// A named block of bytes: a slice of the file's bytes, not a copy.
    struct Section {
        let name: String
        let type: ElementType
        let bytes: Data
    }

    static let magic = Array("MLKITMOD".utf8)
    /// The magic of an encrypted model file, which the `MLKitEncryption` module reads.
    static let encryptedMagic = Array("MLKITENC".utf8)
    static let footerMagic = Array("MEND".utf8)
    /// The version this mlkit writes for a text classifier. Version 2 added the featurizer's
    /// `wordParts` to the header, and version 3 its `punctuation`: a reader of an earlier version
    /// would ignore the field and featurize differently, so it must refuse.
    static let currentVersion: UInt32 = 3
    /// The version this mlkit writes for a word tagger: version 4 added the `tagger` kind, so
    /// that a reader that predates it refuses the file as too new. Classifiers stay at
    /// ``currentVersion``, which those readers read.
    static let taggerVersion: UInt32 = 4
    /// Every version this mlkit reads: all that were ever released.
    static let readableVersions: ClosedRange<UInt32> = 1...4
    static let alignment = 64
    static let sectionEntrySize = 64
    static let sectionNameSize = 40
    static let prefixSize = 24
    static let footerSize = 16

    /// The format version of the file.
    let version: UInt32
    /// The file's length in bytes.
    let length: Int
    /// The JSON header.
    let header: Data
    /// The sections, by name.
    let sections: [String: Section]

    // MARK: Writing

    /// A section to write: its bytes are handed out in pieces, from the arrays that hold them,
    /// rather than copied into one block first.
    struct OutputSection {
        let name: String
        let type: ElementType
        /// The number of bytes.
        let count: Int
        /// Hands the bytes, in order, to `emit`.
        let write: (_ emit: (UnsafeRawBufferPointer) throws -> Void) throws -> Void
    }

    /// Lays out a file in memory: prefix, section table, header, aligned sections, footer.
    static func encode(header: Data, sections: [OutputSection], version: UInt32 = currentVersion) -> Data {
        var data = Data()
        // Nothing here throws: `emit` only appends.
        try! write(header: header, sections: sections, version: version) { data.append(contentsOf: $0) }
        return data
    }

    /// Lays out a file, handing its bytes to `emit` in order: prefix, section table, header,
    /// aligned sections, then the footer with the length and the CRC-32 of all that precedes.
    /// The table is written first, so each section's offset follows from the lengths.
    static func write(header: Data, sections: [OutputSection], version: UInt32 = currentVersion,
                      to emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        var crc: UInt32 = 0
        var written = 0
        func put(_ bytes: UnsafeRawBufferPointer) throws {
            crc = CRC32.checksum(bytes, continuing: crc)
            written += bytes.count
            try emit(bytes)
        }
        func put(_ data: Data) throws { try data.withUnsafeBytes { try put($0) } }
        var prefix = Data(magic)
        appendInteger(version, to: &prefix)
        appendInteger(UInt32(sections.count), to: &prefix)
        appendInteger(UInt64(header.count), to: &prefix)
        var offset = prefix.count + sections.count * sectionEntrySize + header.count
        var table = Data()
        for section in sections {
            offset += padding(for: offset)
            var entry = Data(section.name.utf8.prefix(sectionNameSize))
            entry.append(Data(count: sectionNameSize - entry.count))
            appendInteger(section.type.rawValue, to: &entry)
            appendInteger(UInt32(0), to: &entry)
            appendInteger(UInt64(offset), to: &entry)
            appendInteger(UInt64(section.count), to: &entry)
            table.append(entry)
            offset += section.count
        }
        try put(prefix)
        try put(table)
        try put(header)
        for section in sections {
            try put(Data(count: padding(for: written)))
            let start = written
            try section.write { try put($0) }
            precondition(written - start == section.count, "section '\(section.name)' wrote another length than it announced")
        }
        // The footer: the file's length, which the checksum covers, then the checksum and the magic.
        var length = Data()
        appendInteger(UInt64(written + footerSize), to: &length)
        try put(length)
        var end = Data()
        appendInteger(crc, to: &end)
        end.append(contentsOf: footerMagic)
        try end.withUnsafeBytes { try emit($0) }
    }

    /// Writes a file atomically (``AtomicFile``): a crash never leaves a half-written model.
    /// - Throws: ``MLKitError`` with code `io`, naming the file.
    static func writeAtomically(header: Data, sections: [OutputSection], version: UInt32, to url: URL) throws {
        try AtomicFile.write(to: url) { emit in try write(header: header, sections: sections, version: version, to: emit) }
    }

    private static func padding(for offset: Int) -> Int { (alignment - offset % alignment) % alignment }

    private static func appendInteger<T: FixedWidthInteger>(_ value: T, to data: inout Data) {
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }

    // MARK: Reading

    /// Parses and checks a file.
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - file: Its path, for error messages.
    ///   - knownSections: The section names this version understands.
    /// - Throws: ``MLKitError``: `malformedData` for a file that is not a model, truncated,
    ///   corrupt or with an unknown section; `unsupportedVersion` for a newer format.
    static func decode(_ data: Data, file: String?, knownSections: Set<String>) throws -> ModelContainer {
        func fail(_ reason: String, _ code: MLKitError.Code = .malformedData) -> MLKitError {
            MLKitError(code, reason, at: file.map { .init(file: $0) })
        }
        return try data.withUnsafeBytes { bytes in
            guard bytes.count >= magic.count, bytes.prefix(magic.count).elementsEqual(magic) else {
                if bytes.starts(with: encryptedMagic) {
                    throw fail("the model is encrypted (its first bytes are \"MLKITENC\"); load it with its key "
                               + "(`--key FILE`, or MLKitEncryption's TextClassifier(contentsOf:keyProvider:))", .unavailable)
                }
                throw fail("not an mlkit model file (its first bytes are not \"MLKITMOD\")")
            }
            guard bytes.count >= prefixSize + footerSize else { throw fail("truncated: the file is only \(bytes.count) bytes") }
            let version: UInt32 = integer(bytes, at: 8)
            guard readableVersions.contains(version) else {
                if version > readableVersions.upperBound {
                    throw fail("model format version \(version) is newer than this mlkit reads "
                               + "(versions \(readableVersions.lowerBound)–\(readableVersions.upperBound)); upgrade mlkit",
                               .unsupportedVersion)
                }
                throw fail("model format version \(version) does not exist")
            }
            try checkFooter(bytes, fail)
            let sectionCount = Int(integer(bytes, at: 12) as UInt32)
            let headerLength = Int(clamping: integer(bytes, at: 16) as UInt64)
            let tableEnd = prefixSize + sectionCount * sectionEntrySize
            let bodyEnd = bytes.count - footerSize
            guard sectionCount <= 1024, tableEnd <= bodyEnd, headerLength <= bodyEnd - tableEnd else {
                throw fail("the section table or header runs past the end of the file")
            }
            let header = Data(bytes[tableEnd..<(tableEnd + headerLength)])
            var sections: [String: Section] = [:]
            // Each section's bytes, in the order of their offsets, to check that no two overlap.
            var extents: [(range: Range<Int>, name: String)] = []
            for index in 0..<sectionCount {
                let entry = prefixSize + index * sectionEntrySize
                let name = String(decoding: bytes[entry..<(entry + sectionNameSize)].prefix { $0 != 0 }, as: UTF8.self)
                guard knownSections.contains(name) else { throw fail("unknown section '\(name)'") }
                guard sections[name] == nil else { throw fail("section '\(name)' appears twice in the section table") }
                guard let type = ElementType(rawValue: integer(bytes, at: entry + sectionNameSize)) else {
                    throw fail("section '\(name)' has an unknown element type")
                }
                let offset = Int(clamping: integer(bytes, at: entry + 48) as UInt64)
                let length = Int(clamping: integer(bytes, at: entry + 56) as UInt64)
                guard offset >= tableEnd + headerLength, offset <= bodyEnd, length <= bodyEnd - offset else {
                    throw fail("section '\(name)' runs past the end of the file")
                }
                // A slice of the file's bytes (memory-mapped when read from disk): the large
                // sections are used in place (``flatFloats(_:)``), the others copied once.
                let start = data.startIndex + offset
                sections[name] = Section(name: name, type: type, bytes: data[start..<(start + length)])
                extents.append((offset..<(offset + length), name))
            }
            extents.sort { ($0.range.lowerBound, $0.name) < ($1.range.lowerBound, $1.name) }
            for (previous, next) in zip(extents, extents.dropFirst()) where previous.range.overlaps(next.range) {
                throw fail("sections '\(previous.name)' and '\(next.name)' overlap")
            }
            return ModelContainer(version: version, length: bytes.count, header: header, sections: sections)
        }
    }

    /// Checks the footer's magic, length and CRC-32.
    private static func checkFooter(_ bytes: UnsafeRawBufferPointer, _ fail: (String, MLKitError.Code) -> MLKitError) throws {
        let footer = bytes.count - footerSize
        let storedLength = Int(clamping: integer(bytes, at: footer) as UInt64)
        guard bytes[(bytes.count - 4)...].elementsEqual(footerMagic), storedLength == bytes.count else {
            let expected = bytes[(bytes.count - 4)...].elementsEqual(footerMagic) ? " (expected \(storedLength) bytes)" : ""
            throw fail("truncated or damaged: the file ends without its footer\(expected)", .malformedData)
        }
        let stored: UInt32 = integer(bytes, at: footer + 8)
        let computed = CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(footer + 8)]))
        guard stored == computed else {
            throw fail(String(format: "checksum mismatch (stored 0x%08X, computed 0x%08X): the file is corrupt",
                              stored, computed), .malformedData)
        }
    }

    private static func integer<T: FixedWidthInteger>(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> T {
        T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    // MARK: Typed access

    /// The section `name` as floats.
    func floats(_ name: String) throws -> [Float] {
        Self.littleEndianArray(try section(name, .float32, stride: 4)) { Float(bitPattern: UInt32(littleEndian: $0.bitPattern)) }
    }

    /// The section `name` as floats, used in place in the file's bytes when they are aligned
    /// and this machine is little-endian (``FlatArray``): no copy, no memory of its own.
    func flatFloats(_ name: String) throws -> FlatArray<Float> {
        FlatArray(littleEndian: try section(name, .float32, stride: 4)) { Float(bitPattern: UInt32(littleEndian: $0.bitPattern)) }
    }

    /// The section `name` as unsigned 64-bit integers.
    func uint64s(_ name: String) throws -> [UInt64] {
        Self.littleEndianArray(try section(name, .uint64, stride: 8)) { UInt64(littleEndian: $0) }
    }

    /// The section `name` as NUL-terminated UTF-8 strings, kept packed: one copy of its bytes.
    func strings(_ name: String) throws -> PackedStrings {
        guard let strings = PackedStrings(packed: [UInt8](try section(name, .utf8, stride: 1))) else {
            throw MLKitError(.malformedData, "section '\(name)' does not end with a NUL byte")
        }
        return strings
    }

    /// Copies little-endian values out of `bytes` with one `memcpy`, into plain memory: not
    /// advised to use 2 MiB pages, each of which took about 5 ms to fault in on a 2-core VM,
    /// more than all the rest of loading.
    /// - Parameter fromLittleEndian: A value's native form from its little-endian bytes, applied
    ///   only on big-endian hosts.
    private static func littleEndianArray<T>(_ bytes: Data, fromLittleEndian: (T) -> T) -> [T] {
        let count = bytes.count / MemoryLayout<T>.size
        var values = [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = count
            bytes.withUnsafeBytes { raw in
                if let source = raw.baseAddress, count > 0 {
                    UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: source, byteCount: count * MemoryLayout<T>.size)
                }
            }
        }
        if UInt32(littleEndian: 1) != 1 {
            for index in values.indices { values[index] = fromLittleEndian(values[index]) }
        }
        return values
    }

    /// The section `name` as signed 32-bit integers.
    func int32s(_ name: String) throws -> [Int32] {
        Self.littleEndianArray(try section(name, .int32, stride: 4)) { Int32(littleEndian: $0) }
    }

    /// Reads the model of the container with `decode`, naming `source` in any error it throws.
    func model<Model>(named source: String?, _ decode: (ModelContainer) throws -> Model) throws -> Model {
        do {
            return try decode(self)
        } catch let error as MLKitError {
            throw error.inFile(source)
        }
    }

    /// Whether the file has a section.
    func has(_ name: String) -> Bool { sections[name] != nil }

    /// Checks that every section is one that the file's kind of model has.
    /// - Throws: ``MLKitError`` with code `malformedData`: `unknown section 'name'`.
    func checkSections(_ allowed: Set<String>) throws {
        if let unknown = sections.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw MLKitError(.malformedData, "unknown section '\(unknown)'")
        }
    }

    private func section(_ name: String, _ type: ElementType, stride: Int) throws -> Data {
        guard let section = sections[name] else { throw MLKitError(.malformedData, "the model has no '\(name)' section") }
        guard section.type == type, section.bytes.count % stride == 0 else {
            throw MLKitError(.malformedData, "section '\(name)' has the wrong type or length")
        }
        return section.bytes
    }

    // MARK: Section builders

    static func section(_ name: String, floats: [Float]) -> OutputSection {
        section(name, .float32, floats) { Float(bitPattern: $0.bitPattern.littleEndian) }
    }

    static func section(_ name: String, floats: FlatArray<Float>) -> OutputSection {
        OutputSection(name: name, type: .float32, count: floats.count * MemoryLayout<Float>.stride) { emit in
            try floats.withUnsafeBufferPointer { values in
                try emitLittleEndian(values[...], to: emit) { Float(bitPattern: $0.bitPattern.littleEndian) }
            }
        }
    }

    static func section(_ name: String, uint64s: [UInt64]) -> OutputSection {
        section(name, .uint64, uint64s) { $0.littleEndian }
    }

    static func section(_ name: String, int32s: [Int32]) -> OutputSection {
        section(name, .int32, int32s) { $0.littleEndian }
    }

    static func section(_ name: String, strings: PackedStrings) -> OutputSection {
        let bytes = strings.bytes
        return OutputSection(name: name, type: .utf8, count: bytes.count) { emit in
            try bytes.withUnsafeBytes { try emit($0) }
        }
    }

    /// A section of the rows `rows` of a row-major matrix of floats `width` wide, in that order,
    /// each written from the matrix itself.
    static func section(_ name: String, rows: [Int], of matrix: FlatArray<Float>, width: Int) -> OutputSection {
        OutputSection(name: name, type: .float32, count: rows.count * width * MemoryLayout<Float>.stride) { emit in
            try matrix.withUnsafeBufferPointer { matrix in
                for row in rows {
                    try emitLittleEndian(matrix[(row * width)..<((row + 1) * width)], to: emit) {
                        Float(bitPattern: $0.bitPattern.littleEndian)
                    }
                }
            }
        }
    }

    /// A section of `values`, least significant byte first.
    private static func section<T>(_ name: String, _ type: ElementType, _ values: [T],
                                   littleEndian: @escaping (T) -> T) -> OutputSection {
        OutputSection(name: name, type: type, count: values.count * MemoryLayout<T>.stride) { emit in
            try emitLittleEndian(values[...], to: emit, littleEndian)
        }
    }

    /// Hands `values` to `emit` least significant byte first: on a little-endian machine their
    /// own memory, else converted with `littleEndian` a block at a time.
    private static func emitLittleEndian<T>(_ values: ArraySlice<T>, to emit: (UnsafeRawBufferPointer) throws -> Void,
                                            _ littleEndian: (T) -> T) throws {
        try values.withUnsafeBufferPointer { try emitLittleEndian($0[...], to: emit, littleEndian) }
    }

    /// ``emitLittleEndian(_:to:_:)`` for values in a buffer.
    private static func emitLittleEndian<T>(_ values: Slice<UnsafeBufferPointer<T>>, to emit: (UnsafeRawBufferPointer) throws -> Void,
                                            _ littleEndian: (T) -> T) throws {
        #if _endian(little)
        try emit(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: values)))
        #else
        let block = 1 << 16
        for start in stride(from: values.startIndex, to: values.endIndex, by: block) {
            try values[start..<min(values.endIndex, start + block)].map(littleEndian).withUnsafeBytes { try emit($0) }
        }
        #endif
    }
}
