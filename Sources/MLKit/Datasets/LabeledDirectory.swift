import Foundation

/// Reads Create ML's labelled directories: a folder of sub-folders named by label, each holding
/// `.txt` files, one example per file.
///
/// Label folders and files are read in sorted order, so the examples come out in the same order
/// on every machine. Hidden entries (names starting with `.`), files outside the label folders,
/// files without the `.txt` extension and deeper folders are ignored.
enum LabeledDirectory {
    /// Reads every example under `url`.
    /// - Parameters:
    ///   - source: The folder's path as the caller gave it, for error messages.
    ///   - replacesInvalidUTF8: Whether ill-formed UTF-8 becomes U+FFFD instead of an error.
    /// - Throws: `invalidDataset` if the folder holds no examples; `invalidUTF8` naming the file.
    static func labeledTexts(at url: URL, source: String,
                             replacesInvalidUTF8: Bool) throws -> [LabeledText] {
        var examples: [LabeledText] = []
        for label in try visibleEntries(of: url, source: source) {
            let folder = url.appending(path: label, directoryHint: .isDirectory)
            guard DatasetFile.isFolder(folder) else { continue }
            let folderSource = join(source, label)
            for name in try visibleEntries(of: folder, source: folderSource)
            where name.lowercased().hasSuffix(".txt") {
                let file = folder.appending(path: name, directoryHint: .notDirectory)
                guard !DatasetFile.isFolder(file) else { continue }
                let text = try readText(at: file, source: join(folderSource, name),
                                        replacesInvalidUTF8: replacesInvalidUTF8)
                examples.append(LabeledText(text: text, label: label))
            }
        }
        guard !examples.isEmpty else {
            throw MLKitError(.invalidDataset,
                             "no examples: expected sub-folders named by label that hold .txt files",
                             at: .init(file: source))
        }
        return examples
    }

    private static func visibleEntries(of url: URL, source: String) throws -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: url.path)
                .filter { !$0.hasPrefix(".") }
                .sorted()
        } catch {
            throw MLKitError(.io, "cannot list the folder (\(error.localizedDescription))",
                             at: .init(file: source))
        }
    }

    private static func join(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// The text of one file, without a leading byte-order mark.
    private static func readText(at url: URL, source: String, replacesInvalidUTF8: Bool) throws -> String {
        try text(of: DatasetFile.contents(of: url, source: source), source: source, replacesInvalidUTF8: replacesInvalidUTF8)
    }

    /// The text of one file's bytes, without a leading byte-order mark.
    /// - Throws: `invalidUTF8` naming `source`, the line and the column.
    static func text(of data: Data, source: String, replacesInvalidUTF8: Bool) throws -> String {
        try data.withUnsafeBytes { raw in
            let bytes = raw.assumingMemoryBound(to: UInt8.self)
            let start = bytes.offsetAfterByteOrderMark
            if !replacesInvalidUTF8,
               let bad = UTF8Validation.firstInvalidOffset(in: bytes, range: start ..< bytes.count) {
                let position = SourcePosition(of: bad, in: bytes, firstByte: start)
                throw MLKitError(.invalidUTF8, "invalid UTF-8 (byte \(bytes[bad].hex))",
                                 at: .init(file: source, line: position.line, column: position.column))
            }
            return bytes.string(start ..< bytes.count)
        }
    }
}

/// Loading whole dataset files.
enum DatasetFile {
    /// The bytes of the file at `url`.
    /// - Throws: `fileNotFound` if there is no such file, `io` if it cannot be read.
    static func contents(of url: URL, source: String) throws -> Data {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw MLKitError(.fileNotFound, "no such file or folder", at: .init(file: source))
        }
        do {
            return try Data(contentsOf: url)
        } catch {
            throw MLKitError(.io, "cannot read the file (\(error.localizedDescription))",
                             at: .init(file: source))
        }
    }

    /// Whether `url` names an existing folder.
    static func isFolder(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            && isDirectory.boolValue
    }
}
