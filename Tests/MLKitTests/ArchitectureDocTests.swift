import Foundation
import Testing
import TestSupport

/// `docs/architecture.md` describes the folders of the core and of the server in two tables; these
/// tests hold the tables to the tree, so that a folder cannot appear, go or be renamed without
/// the document saying so.
@Suite("docs/architecture.md matches the source tree", .onOwnThreads)
struct ArchitectureDocTests {
    static let document = ChildProcess.repositoryRoot.appendingPathComponent("docs/architecture.md")

    /// The first column of the table under the heading `heading`: each row's folder, as in
    /// "| `Text/` | ... |", without its trailing slash.
    static func tableFolders(under heading: String) throws -> Set<String> {
        let text = try String(contentsOf: document, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == heading }) else {
            Issue.record("docs/architecture.md has no heading \"\(heading)\"")
            return []
        }
        var folders = Set<String>()
        var inTable = false
        for line in lines[(start + 1)...] {
            if line.hasPrefix("## ") { break }
            if line.hasPrefix("|") {
                inTable = true
                let cells = line.split(separator: "|", omittingEmptySubsequences: false)
                let first = cells.count > 1 ? cells[1].trimmingCharacters(in: .whitespaces) : ""
                if first.hasPrefix("`"), first.hasSuffix("/`") {
                    folders.insert(String(first.dropFirst().dropLast(2)))
                }
            } else if inTable {
                break
            }
        }
        return folders
    }

    /// The folders directly inside `Sources/<module>`.
    static func sourceFolders(of module: String) throws -> Set<String> {
        let root = ChildProcess.repositoryRoot.appendingPathComponent("Sources/\(module)")
        let entries = try FileManager.default.contentsOfDirectory(
            at: root, includingPropertiesForKeys: [.isDirectoryKey])
        return Set(try entries.filter {
            try $0.resourceValues(forKeys: [.isDirectoryKey]).isDirectory == true
        }.map(\.lastPathComponent))
    }

    /// Every folder directly inside `Sources/<module>` has a row in the table under `table`, and
    /// every row names a folder that exists (a row may name a nested one, such as
    /// `Storage/Postgres/`).
    static func check(table: String, module: String) throws {
        let documented = try tableFolders(under: table)
        let tree = try sourceFolders(of: module)
        #expect(tree.subtracting(documented).sorted() == [], "folders missing from the table")
        let root = ChildProcess.repositoryRoot.appendingPathComponent("Sources/\(module)")
        let missing = documented.filter { folder in
            var isDirectory: ObjCBool = false
            let path = root.appendingPathComponent(folder).path
            return !(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
        }
        #expect(missing.sorted() == [], "table rows with no folder")
    }

    @Test("the table of the core's folders lists exactly the folders of Sources/MLKit")
    func coreFolders() throws {
        try Self.check(table: "## Folders of the core", module: "MLKit")
    }

    @Test("the table of the server's folders lists exactly the folders of Sources/MLKitServer")
    func serverFolders() throws {
        try Self.check(table: "## Inside the server", module: "MLKitServer")
    }
}
