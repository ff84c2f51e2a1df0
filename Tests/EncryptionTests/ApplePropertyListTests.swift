import Foundation
@testable import MLKitEncryption
import TestSupport
import Testing

@Suite("Apple's property lists are read strictly, whatever their bytes", .onOwnThreads)
struct ApplePropertyListTests {
    static let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <!-- a comment -->
        <dict>
        \t<key>IV</key>
        \t<data>
        \tEBESExQVFhcYGRobHB0eHw==
        \t</data>
        \t<key>Key</key>
        \t<data>AAECAwQFBgcICQoLDA0ODw==</data>
        \t<key>KeyIdentifier</key>
        \t<string>A&amp;B &#x263A; &lt;id&gt;</string>
        \t<key>Version</key>
        \t<integer> 1 </integer>
        \t<key>Nested</key>
        \t<array><dict><key>x</key><real>1.5</real></dict><true/><date>2026-01-01T00:00:00Z</date><string/></array>
        </dict>
        </plist>

        """

    @Test("The XML form: data over several lines, references, comments, nested values skipped")
    func xml() throws {
        let fields = try ApplePropertyList.topDictionary(Data(Self.xml.utf8))
        #expect(fields["Key"] == .data(Data(0..<16)))
        #expect(fields["IV"] == .data(Data(16..<32)))
        #expect(fields["KeyIdentifier"] == .string("A&B \u{263A} <id>"))
        #expect(fields["Version"] == .integer(1))
        #expect(fields["Nested"] == .other)
    }

    @Test("The binary form Foundation writes reads the same as the XML form")
    func binary() throws {
        let object: [String: Any] = ["Key": Data(0..<16), "IV": Data(16..<32), "KeyIdentifier": "A&B \u{263A} <id>", "Version": 1,
                                     "Big": Int64.min, "Long": String(repeating: "é", count: 40), "List": [1, 2]]
        let data = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        let fields = try ApplePropertyList.topDictionary(data)
        #expect(fields["Key"] == .data(Data(0..<16)))
        #expect(fields["KeyIdentifier"] == .string("A&B \u{263A} <id>"))
        #expect(fields["Version"] == .integer(1))
        #expect(fields["Big"] == .integer(Int(Int64.min)))
        #expect(fields["Long"] == .string(String(repeating: "é", count: 40)))
        #expect(fields["List"] == .other)
    }

    @Test("Ill-formed UTF-8 inside an XML <integer> is refused (Foundation's XML decoder traps on it)")
    func invalidUTF8InInteger() throws {
        var text = Array(Self.xml.utf8)
        let integer = try #require(text.firstRange(of: Array("<integer> 1 </integer>".utf8)))
        text.replaceSubrange(integer, with: Array("<integer>".utf8) + [0, 0, 0xFF, 0x30] + Array("</integer>".utf8))
        #expect(throws: ApplePropertyList.Failure.self) { try ApplePropertyList.topDictionary(Data(text)) }
        let error = Fixtures.encryptionError { _ = try ModelKey(keyFileData: Data(text), source: "k.mlmodelkey") }
        #expect(error?.code == .invalidKeyFile)
    }

    @Test("Cut anywhere, or with any byte changed, a list is read or refused, never a crash", arguments: [false, true])
    func damaged(binary: Bool) throws {
        let object: [String: Any] = ["Key": Data(0..<16), "IV": Data(16..<32), "KeyIdentifier": "0F4E2C61", "Version": 1]
        let data = binary ? try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
                          : Data(Self.xml.utf8)
        for length in 0..<data.count { _ = try? ApplePropertyList.topDictionary(data.prefix(length)) }
        for offset in data.indices {
            for value: UInt8 in [0x00, 0x0F, 0x7F, 0xFF, 0xD4, 0x5F] {
                var changed = data
                changed[offset] = value
                _ = try? ApplePropertyList.topDictionary(changed)
            }
        }
    }

    @Test("A binary list whose trailer claims offsets past its end is refused")
    func trailer() throws {
        var data = try PropertyListSerialization.data(fromPropertyList: ["Key": Data(0..<16)], format: .binary, options: 0)
        data.replaceSubrange((data.count - 8)..<data.count, with: [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: ApplePropertyList.Failure.self) { try ApplePropertyList.topDictionary(data) }
        data.replaceSubrange((data.count - 24)..<(data.count - 16), with: [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: ApplePropertyList.Failure.self) { try ApplePropertyList.topDictionary(data) }
    }
}
