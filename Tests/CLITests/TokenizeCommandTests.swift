import Foundation
import TestSupport
import Testing

@Suite("mlkit tokenize", .timeLimit(.minutes(10)), .onOwnThreads)
struct TokenizeCommandTests {
    @Test("One token per Han character with the standard tokenizer")
    func chinese() throws {
        let result = try CLI.run(["tokenize", "我们今天在北京大学学习"])
        #expect(result.status == 0)
        #expect(result.stdout == "我\n们\n今\n天\n在\n北\n京\n大\n学\n学\n习\n")
    }

    @Test("Dictionary words with the icu tokenizer")
    func icu() throws {
        let result = try CLI.run(["tokenize", "--tokenizer", "icu", "我们今天在北京大学学习"])
        #expect(result.status == 0)
        #expect(result.stdout == "我们\n今天\n在\n北京\n大学\n学习\n")
    }

    @Test("The documented tokens of the README example")
    func documentedExample() throws {
        let result = try CLI.run(["tokenize", "Don't split U.S. e-mail 3.14 naïve café 🏳️‍🌈"])
        #expect(result.stdout.split(separator: "\n") == ["don't", "split", "u.s", "e-mail", "3.14", "naïve", "café", "🏳️‍🌈"])
    }

    @Test("Standard input, sentences, JSON Lines with byte ranges")
    func sentencesFromStandardInput() throws {
        let result = try CLI.run(["tokenize", "--unit", "sentence", "--json"], input: Data("Hi there. Bye now.\n".utf8))
        #expect(result.status == 0)
        #expect(result.stdout == """
            {"end":9,"kind":"segment","start":0,"token":"Hi there."}
            {"end":18,"kind":"segment","start":10,"token":"Bye now."}

            """)
    }

    @Test("Invalid UTF-8 in a file fails with exit code 65 and names the file, line and column")
    func invalidUTF8() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("bad.txt")
        try Data([0x6F, 0x6B, 0x0A, 0x61, 0xFF]).write(to: file)
        let failed = try CLI.run(["tokenize", "--file", file.path])
        #expect(failed.status == 65)
        #expect(failed.stderr == "mlkit: error: \(file.path):2:2: invalid UTF-8 (byte 0xFF at offset 4)\n")
        let replaced = try CLI.run(["tokenize", "--file", file.path, "--invalid-utf8", "replace"])
        #expect(replaced.status == 0)
        #expect(replaced.stdout == "ok\na\n")
    }

    @Test("A missing file exits 66; a bad option exits 64")
    func exitCodes() throws {
        let missing = try CLI.run(["tokenize", "--file", "/nonexistent/notes.txt"])
        #expect(missing.status == 66)
        #expect(missing.stderr == "mlkit: error: /nonexistent/notes.txt: no such file\n")
        let usage = try CLI.run(["tokenize", "--unit", "bogus", "x"])
        #expect(usage.status == 64)
    }
}
