import Foundation
@testable import MLKitEncryption
import Testing
import TestSupport

@Suite("Keys and key files", .onOwnThreads)
struct KeyTests {
    @Test("A generated key has fresh material from the secure source, a UUID and a date, and never prints its material")
    func generated() throws {
        let first = ModelKey.generate(), second = ModelKey.generate()
        #expect(first.material.count == 32)
        #expect(first.material != second.material)
        #expect(UUID(uuidString: first.identifier) != nil)
        #expect(first.cipher == .aes256GCM)
        #expect(abs((first.created ?? .distantPast).timeIntervalSinceNow) < 60)
        let base64 = Data(first.material).base64EncodedString()
        var dumped = ""
        dump(first, to: &dumped)
        for text in [first.description, first.debugDescription, "\(first)", String(reflecting: first), dumped] {
            #expect(!text.contains(base64))
            #expect(text.contains(first.identifier))
        }
        #expect(first.description == "ModelKey(\(first.identifier), AES-256-GCM)")
    }

    @Test("The key file round-trips, byte for byte, and is JSON with the documented fields")
    func keyFile() throws {
        let key = ModelKey.generate(cipher: .chaCha20Poly1305)
        let data = key.keyFileData()
        let parsed = try ModelKey(keyFileData: data)
        #expect(parsed == key)
        #expect(parsed.created == key.created)
        #expect(parsed.keyFileData() == data)
        let fields = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(fields.keys) == ["algorithm", "created", "format", "identifier", "key", "version"])
        #expect(fields["algorithm"] as? String == "ChaCha20-Poly1305")
        #expect(fields["format"] as? String == "mlkit-key")
        #expect(fields["version"] as? Int == 1)
        #expect(Data(base64Encoded: fields["key"] as? String ?? "")?.count == 32)
        #expect(String(decoding: data, as: UTF8.self).hasSuffix("\n}\n"))
    }

    @Test("Apple's .mlmodelkey is accepted: its 128-bit key and its identifier, for AES-128-GCM",
          .needsSeedArtifacts("SentimentPolarity.mlmodelkey"))
    func appleKey() throws {
        let key = try ModelKey(contentsOf: Fixtures.appleKeyFile)
        #expect(key.identifier == "DECFAB02-AF49-47DB-A794-508A94E0D633")
        #expect(key.cipher == .aes128GCM)
        #expect(Data(key.material) == Data(base64Encoded: "lnzNFtZ6mTmZce7LD2YpMw=="))
        #expect(key.created == nil)
        let model = try Data(contentsOf: Fixtures.sentimentModel)
        let encrypted = try ModelEncryption.encrypt(model, with: key)
        #expect(try ModelEncryption.decrypt(encrypted, with: key) == model)
        // Its canonical mlkit key file keeps the identifier and material.
        #expect(try ModelKey(keyFileData: key.keyFileData()) == key)
    }

    @Test("Apple's layout is read from XML and binary property lists alike, extra fields and the IV aside",
          arguments: [PropertyListSerialization.PropertyListFormat.xml, .binary])
    func appleLayout(format: PropertyListSerialization.PropertyListFormat) throws {
        let fields: [String: Any] = ["Key": Data(0..<16), "IV": Data(16..<32), "KeyIdentifier": "0F4E2C61-8C0B-4F64-9C51-2E5A8B7D3A10",
                                     "Version": 1, "Comment": "extra"]
        let data = try PropertyListSerialization.data(fromPropertyList: fields, format: format, options: 0)
        let key = try ModelKey(keyFileData: data, source: "k.mlmodelkey")
        #expect(key.identifier == "0F4E2C61-8C0B-4F64-9C51-2E5A8B7D3A10")
        #expect(key.cipher == .aes128GCM)
        #expect(key.material == Array(0..<16))
        var wrongVersion = fields
        wrongVersion["Version"] = 2
        let error = Fixtures.encryptionError {
            _ = try ModelKey(keyFileData: try PropertyListSerialization.data(fromPropertyList: wrongVersion, format: format, options: 0))
        }
        #expect(error?.code == .unsupportedEncryption)
    }

    @Test("A binary property list that holds a set, not a dictionary, is refused as a bad key file")
    func setInsteadOfDictionary() throws {
        // Apple's layout with the top-level dictionary's marker (0xD4) changed to a set's (0xC4).
        // PropertyListSerialization builds it as Foundation objects, and bridging that set to
        // Swift crashes swift-corelibs-foundation.
        let data = try #require(Data(base64Encoded: "YnBsaXN0MDDEAQIDBAUGBwhSSVZdS2V5SWRlbnRpZmllclNLZXlXVmVyc2lvbk8QEBAREhMUFRYXGBkaGxwdHh9f"
            + "ECQwRjRFMkM2MS04QzBCLTRGNjQtOUM1MS0yRTVBOEI3RDNBMTBPEBAAAQIDBAUGBwgJCgsMDQ4PEAEIERQiJi5BaHsAAAAAAAABAQAAAAAAAAAJ"
            + "AAAAAAAAAAAAAAAAAAAAfQ=="))
        let error = Fixtures.encryptionError { _ = try ModelKey(keyFileData: data, source: "set.mlmodelkey") }
        #expect(error?.code == .invalidKeyFile)
        #expect(error?.description == "set.mlmodelkey: invalid key file: not a property list with a dictionary "
                + "(an Apple .mlmodelkey holds Key, IV, KeyIdentifier, Version): the top object is a set, not a dictionary")
    }

    @Test("An identifier with a control or format character or a noncharacter is refused, in either kind of key file")
    func identifierCharacters() throws {
        // Apple's layout in a binary list whose KeyIdentifier is U+FEFF U+FFFF U+FFFF U+FFFF: a
        // JSON reader drops the leading U+FEFF, so its mlkit key file would name another key.
        let apple = try #require(Data(base64Encoded: "YnBsaXN0MDDUAQIDBAUGBwhSSVZdS2V5SWRlbnRpZmllclNLZXlXVmVyc2lvbk8QEBMVEhQXERAWGBkaGxwd"
            + "Hh9fECQwRjRFMkM2MS04QzBCLTRGNjQtOUM1MS0yRTVBOEI3RDNBImlk/v////////8iOi0JCgsMDQ4PEAEIERQiJkFoLnsAAAAAAAABAQAAAAAAAAAJ"
            + "AAAAAAAAAAAAAAAAAAAAfQ=="))
        let mlkitKeys = ["\\uFEFFabc", "a\\u0007b", "a\\u200Bb", "a\\uFDD0"].map { identifier in
            (Data("""
                {"algorithm": "AES-256-GCM", "format": "mlkit-key", "identifier": "\(identifier)",
                 "key": "\(Data(count: 32).base64EncodedString())", "version": 1}
                """.utf8), "k.mlkitkey")
        }
        for (data, source) in [(apple, "k.mlmodelkey")] + mlkitKeys {
            let error = Fixtures.encryptionError { _ = try ModelKey(keyFileData: data, source: source) }
            #expect(error?.code == .invalidKeyFile)
            #expect(error?.message == "field \"identifier\": the key identifier holds a control or format character or a noncharacter")
        }
        #expect(try ModelKey(keyFileData: Data(#"{"algorithm": "AES-128-GCM", "format": "mlkit-key", "identifier": "clé-été 7", "key": "AAAAAAAAAAAAAAAAAAAAAA==", "version": 1}"#.utf8)).identifier == "clé-été 7")
    }

    @Test("Bad key files are refused, naming the file and the field", arguments: [
        ("not json", "invalid key file: neither an mlkit key file (JSON) nor an Apple .mlmodelkey property list"),
        ("{\"format\": \"mlkit-key\", \"version\": 1}", "invalid key file: missing field \"identifier\""),
        ("{\"format\": \"other\"}", "invalid key file: field \"format\": expected \"mlkit-key\""),
        ("{\"format\": \"mlkit-key\", \"version\": 1, \"identifier\": \"k\", \"algorithm\": \"AES-256-GCM\", \"key\": \"AAAA\"}",
         "invalid key file: field \"key\": key k is for AES-256-GCM, which needs 32 bytes, but it has 3"),
        ("{\"format\": \"mlkit-key\", \"version\": 1, \"identifier\": \"k\", \"algorithm\": \"DES\", \"key\": \"AAAA\"}",
         "unsupported encryption: key k: field \"algorithm\": unknown cipher \"DES\" (known: AES-256-GCM, ChaCha20-Poly1305, AES-128-GCM)"),
        ("{\"format\": \"mlkit-key\", \"version\": 2, \"identifier\": \"k\"}",
         "unsupported encryption: key k: key file version 2 is not one this mlkit reads (1–1); upgrade mlkit"),
        ("<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>KeyIdentifier</key><string>A</string><key>Key</key><data>AAAA</data></dict></plist>",
         "invalid key file: field \"key\": key A is for AES-128-GCM, which needs 16 bytes, but it has 3"),
    ])
    func invalid(text: String, message: String) {
        let error = Fixtures.encryptionError { _ = try ModelKey(keyFileData: Data(text.utf8), source: "team.mlkitkey") }
        #expect(error?.description == "team.mlkitkey: \(message)")
    }

    @Test("A key file is written with mode 0600, and never over an existing file unless asked")
    func writing() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("team.mlkitkey")
        let key = ModelKey.generate()
        try key.write(to: url)
        let mode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        #expect(ModelKey.permissionWarning(forKeyFileAt: url) == nil)
        let replacement = ModelKey.generate()
        #expect(Fixtures.encryptionError { try replacement.write(to: url) }?.code == .keyFileExists)
        #expect(try ModelKey(contentsOf: url) == key)
        try replacement.write(to: url, overwrite: true)
        #expect(try ModelKey(contentsOf: url) == replacement)
    }

    @Test("A key file that others may read gets a warning naming its mode")
    func permissions() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("team.mlkitkey")
        try ModelKey.generate().write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        #expect(ModelKey.permissionWarning(forKeyFileAt: url)
                == "\(url.path): the key file is open to others (mode 0644); restrict it to its owner with chmod 600")
        let provider = try KeyFileProvider(contentsOf: url)
        #expect(provider.warnings.count == 1)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: url.path)
        #expect(ModelKey.permissionWarning(forKeyFileAt: url)?.contains("mode 0640") == true)
    }

    @Test("A missing key file is named")
    func missing() {
        let error = Fixtures.encryptionError { _ = try ModelKey(contentsOf: URL(fileURLWithPath: "/nonexistent/team.mlkitkey")) }
        #expect(error?.code == .fileNotFound)
        #expect(error?.description == "/nonexistent/team.mlkitkey: no such file: no such key file")
    }
}
