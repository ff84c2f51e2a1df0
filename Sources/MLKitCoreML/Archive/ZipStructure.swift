import Foundation

/// Checks the structure of a zip file before ZIPFoundation reads it, so that a hostile archive
/// is refused with an error rather than crash or hang the process, and finds where each entry's
/// data lies.
///
/// ZIPFoundation 0.9.20 trusts the offsets and sizes it reads: an in-memory archive traps when
/// a seek goes past the end of its data, a ZIP64 field above 2⁶³ traps when it becomes an
/// `off_t`, and on Linux its extraction inflates until the deflate stream ends, past the
/// entry's compressed size, loops forever at the end of the file when the stream is cut short,
/// and hands zlib a whole buffer even when the last chunk is shorter. This check walks the central directory as ZIPFoundation will, and refuses any
/// archive whose records, names, local headers or entry data do not lie within the file, that
/// uses ZIP64 or data descriptors (model archives are far smaller than 4 GiB and store their
/// sizes in the central directory), or that has more than ``Limits/maximumArchiveEntries``
/// entries. It reads nothing but fixed-size records; ``ArchiveReader`` then inflates each
/// entry's own bytes, and only those, with ZIPFoundation.
enum ZipStructure {
    /// Where an entry's data lies, and how it is stored.
    struct Location {
        /// The stored bytes: after the local header, its name and its extra field.
        let data: Range<Int>
        /// The compression method of the local header (0 stored, 8 deflated).
        let method: Int
        /// The CRC-32 of the expanded bytes, from the central directory.
        let checksum: UInt32
    }

    static let endOfCentralDirectory: UInt32 = 0x0605_4B50
    static let zip64Locator: UInt32 = 0x0706_4B50
    static let centralDirectoryEntry: UInt32 = 0x0201_4B50
    static let localHeader: UInt32 = 0x0403_4B50

    /// - Returns: Where each entry's data lies, in the order of the central directory.
    /// - Throws: ``CoreMLError`` (`malformedModel`) saying what is wrong.
    static func check(_ data: Data) throws -> [Location] {
        let bytes = [UInt8](data)
        func u16(_ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
        func u32(_ offset: Int) -> UInt32 {
            UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
        }
        func damaged(_ reason: String) -> CoreMLError {
            CoreMLError(.malformedModel, "not a model archive: \(reason)")
        }
        // The end of the central directory: its last signature with room for the record, as
        // ZIPFoundation finds it.
        guard bytes.count >= 22, let end = stride(from: bytes.count - 22, through: 0, by: -1).first(where: {
            u32($0) == endOfCentralDirectory
        }) else {
            throw damaged("the zip's central directory cannot be read (no end-of-central-directory record)")
        }
        if end >= 20 && u32(end - 20) == zip64Locator {
            throw damaged("it is a ZIP64 file, which a model archive never needs")
        }
        let entries = u16(end + 10), size = Int(u32(end + 12)), start = Int(u32(end + 16))
        guard entries != 0xFFFF, size != 0xFFFF_FFFF, start != 0xFFFF_FFFF else {
            throw damaged("it is a ZIP64 file, which a model archive never needs")
        }
        guard entries <= Limits.maximumArchiveEntries else {
            throw CoreMLError(.malformedModel, "the archive has more than \(Limits.maximumArchiveEntries) entries")
        }
        guard start + size <= end else {
            throw damaged("its central directory (\(size) bytes at \(start)) runs past its end record at \(end)")
        }
        var index = start
        var locations: [Location] = []
        for entry in 0..<entries {
            guard index + 46 <= start + size, u32(index) == centralDirectoryEntry else {
                throw damaged("central directory entry \(entry) is missing or damaged")
            }
            let flags = u16(index + 8), compressed = u32(index + 20), uncompressed = u32(index + 24)
            let nameLength = u16(index + 28), extraLength = u16(index + 30), commentLength = u16(index + 32)
            let local = Int(u32(index + 42))
            let next = index + 46 + nameLength + extraLength + commentLength
            guard next <= start + size else { throw damaged("central directory entry \(entry) runs past the directory") }
            guard bytes[index + 6] < 45, compressed != 0xFFFF_FFFF, uncompressed != 0xFFFF_FFFF,
                  local != 0xFFFF_FFFF, !hasZIP64Field(bytes, at: index + 46 + nameLength, length: extraLength) else {
                throw damaged("entry \(entry) uses ZIP64, which a model archive never needs")
            }
            guard flags & 0b1001 == 0 else {
                throw damaged("entry \(entry) is \(flags & 1 != 0 ? "encrypted by the zip" : "written with a data descriptor"), "
                              + "which model archives are not")
            }
            // Its local header and its data lie before the central directory.
            guard local + 30 <= start, u32(local) == localHeader else {
                throw damaged("entry \(entry): its local header at \(local) is missing or damaged")
            }
            let localName = u16(local + 26), localExtra = u16(local + 28)
            guard bytes[local + 4] < 45, u16(local + 6) & 0b1001 == 0,
                  local + 30 + localName + localExtra + Int(compressed) <= start,
                  !hasZIP64Field(bytes, at: local + 30 + localName, length: localExtra) else {
                throw damaged("entry \(entry): its local header or data at \(local) runs past its place, or uses ZIP64")
            }
            let first = local + 30 + localName + localExtra
            locations.append(Location(data: first..<(first + Int(compressed)), method: u16(local + 8), checksum: u32(index + 16)))
            index = next
        }
        return locations
    }

    /// Whether the extra field at `offset` holds a ZIP64 block (header 0x0001).
    private static func hasZIP64Field(_ bytes: [UInt8], at offset: Int, length: Int) -> Bool {
        var position = offset
        while position + 4 <= offset + length {
            let header = Int(bytes[position]) | Int(bytes[position + 1]) << 8
            let size = Int(bytes[position + 2]) | Int(bytes[position + 3]) << 8
            if header == 0x0001 { return true }
            position += 4 + size
        }
        return false
    }
}
