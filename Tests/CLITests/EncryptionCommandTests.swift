import Foundation
import TestSupport
import Testing

@Suite("mlkit keygen, encrypt, decrypt and --key", .timeLimit(.minutes(10)), .onOwnThreads)
struct EncryptionCommandTests {
    static let sentiment = CLI.repositoryRoot.appendingPathComponent("trained/sentiment.mlkit").path
    static let appleKey = SeedArtifacts.path("SentimentPolarity.mlmodelkey")

    /// The identifier in a key file.
    static func identifier(ofKeyFile path: String) throws -> String {
        let fields = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        return try #require(fields?["identifier"] as? String)
    }

    /// A new key file made by `mlkit keygen` in `folder`.
    static func keygen(_ name: String = "team.mlkitkey", in folder: URL) throws -> String {
        let key = folder.appendingPathComponent(name).path
        let result = try CLI.run(["keygen", "-o", key])
        try #require(result.status == 0, "\(result.stderr)")
        return key
    }

    /// The bundled sentiment model encrypted by `mlkit encrypt` with `key` into `folder`.
    static func encryptedSentiment(_ name: String = "enc.mlkit", in folder: URL, key: String) throws -> String {
        let encrypted = folder.appendingPathComponent(name).path
        let result = try CLI.run(["encrypt", sentiment, "--key", key, "-o", encrypted])
        try #require(result.status == 0, "\(result.stderr)")
        return encrypted
    }

    @Test("Acceptance: keygen, encrypt the bundled model, predict with the key; without it, with another key, tampered")
    func acceptance() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("team.mlkitkey").path
        let keygen = try CLI.run(["keygen", "-o", key])
        #expect(keygen.status == 0, "\(keygen.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let identifier = try Self.identifier(ofKeyFile: key)
        #expect(keygen.stdout == "key \(identifier) (AES-256-GCM) written to \(key) with mode 0600\n")

        let encrypted = folder.appendingPathComponent("enc.mlkit").path
        let encrypt = try CLI.run(["encrypt", Self.sentiment, "--key", key, "-o", encrypted])
        #expect(encrypt.status == 0, "\(encrypt.stderr)")
        #expect(encrypt.stderr.isEmpty)

        let predicted = try CLI.run(["predict", "--model", encrypted, "--key", key, "I love rainbows"])
        #expect(predicted.status == 0, "\(predicted.stderr)")
        #expect(predicted.stdout == "positive\n")

        let noKey = try CLI.run(["predict", "--model", encrypted, "I love rainbows"])
        #expect(noKey.status == 77)
        #expect(noKey.stdout.isEmpty)
        #expect(noKey.stderr == "mlkit: error: \(encrypted): key unavailable: the model is encrypted with key \(identifier) "
                + "(AES-256-GCM) and no key was given; pass --key FILE with that key\n")

        let other = try Self.keygen("other.mlkitkey", in: folder)
        let wrong = try CLI.run(["predict", "--model", encrypted, "--key", other, "I love rainbows"])
        #expect(wrong.status == 77)
        #expect(wrong.stderr == "mlkit: error: \(encrypted): wrong key: the model is encrypted with key \(identifier), "
                + "but the key given is \(try Self.identifier(ofKeyFile: other))\n")

        var bytes = try Data(contentsOf: URL(fileURLWithPath: encrypted))
        bytes[bytes.count / 2] ^= 0x20
        let tampered = folder.appendingPathComponent("tampered.mlkit").path
        try bytes.write(to: URL(fileURLWithPath: tampered))
        let damaged = try CLI.run(["predict", "--model", tampered, "--key", key, "I love rainbows"])
        #expect(damaged.status == 65)
        #expect(damaged.stderr.hasPrefix("mlkit: error: \(tampered): decryption failed: chunk 2 of 4 does not authenticate with key \(identifier)"))
    }

    @Test("keygen never replaces a key file without --force, and writes ChaCha20-Poly1305 keys on request")
    func keygenOverwrite() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = try Self.keygen(in: folder)
        let first = try Self.identifier(ofKeyFile: key)
        let refused = try CLI.run(["keygen", "-o", key])
        #expect(refused.status == 73)
        #expect(refused.stderr.contains("\(key): the key file exists"))
        #expect(try Self.identifier(ofKeyFile: key) == first)
        let forced = try CLI.run(["keygen", "-o", key, "--force", "--cipher", "chacha20-poly1305"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try Self.identifier(ofKeyFile: key) != first)
        #expect(forced.stdout.contains("(ChaCha20-Poly1305)"))
        let mode = try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
    }

    @Test("info shows the clear header without a key, and the model too with one")
    func info() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = try Self.keygen(in: folder)
        let identifier = try Self.identifier(ofKeyFile: key)
        let encrypted = try Self.encryptedSentiment(in: folder, key: key)

        let header = try CLI.run(["info", encrypted])
        #expect(header.status == 0, "\(header.stderr)")
        #expect(header.stdout.contains("encryption          format version 1, AES-256-GCM, 4 chunks of up to 1048576 bytes\n"))
        #expect(header.stdout.contains("key identifier      \(identifier)\n"))
        let plainSize = try #require(try FileManager.default.attributesOfItem(atPath: Self.sentiment)[.size] as? Int)
        #expect(header.stdout.contains("model               encrypted, \(plainSize) bytes; pass --key FILE to read it"))
        #expect(!header.stdout.contains("labels"))

        let full = try CLI.run(["info", encrypted, "--key", key])
        #expect(full.status == 0)
        #expect(full.stdout.contains("key identifier      \(identifier)\n"))
        #expect(full.stdout.contains("labels              2: negative, positive"))

        let data = folder.appendingPathComponent("chapter.json")
        try Data(#"[{"text": "I love rainbows", "label": "positive"}, {"text": "I am sad on cloudy days", "label": "negative"}]"#.utf8)
            .write(to: data)
        let evaluated = try CLI.run(["evaluate", encrypted, data.path, "--key", key, "--json"])
        #expect(evaluated.status == 0, "\(evaluated.stderr)")
        let metrics = try JSONSerialization.jsonObject(with: Data(evaluated.stdout.utf8)) as? [String: Any]
        #expect(metrics?["accuracy"] as? Double == 1)
        #expect(try CLI.run(["evaluate", encrypted, data.path]).status == 77)
    }

    @Test("decrypt warns that it writes plaintext, and gives back the same bytes")
    func decrypt() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = try Self.keygen(in: folder)
        let encrypted = try Self.encryptedSentiment(in: folder, key: key)
        let plain = folder.appendingPathComponent("plain.mlkit").path
        let decrypted = try CLI.run(["decrypt", encrypted, "--key", key, "-o", plain])
        #expect(decrypted.status == 0, "\(decrypted.stderr)")
        #expect(decrypted.stderr.contains("mlkit: warning: writing the decrypted model as plaintext to \(plain)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: plain)) == Data(contentsOf: URL(fileURLWithPath: Self.sentiment)))
        let notEncrypted = try CLI.run(["decrypt", Self.sentiment, "--key", key, "-o", plain])
        #expect(notEncrypted.status == 65)
        #expect(notEncrypted.stderr.contains("not an encrypted model"))
    }

    @Test("Key rotation: encrypt ENCRYPTED --old-key OLD --key NEW, in place; then only the new key opens it")
    func rotation() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let old = try Self.keygen("old.mlkitkey", in: folder), new = try Self.keygen("new.mlkitkey", in: folder)
        let encrypted = try Self.encryptedSentiment(in: folder, key: old)
        let withoutOld = try CLI.run(["encrypt", encrypted, "--key", new])
        #expect(withoutOld.status == 65)
        #expect(withoutOld.stderr.contains("pass --old-key FILE"))
        let rotated = try CLI.run(["encrypt", encrypted, "--old-key", old, "--key", new])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        #expect(try CLI.run(["predict", "--model", encrypted, "--key", old, "I love rainbows"]).status == 77)
        #expect(try CLI.run(["predict", "--model", encrypted, "--key", new, "I love rainbows"]).stdout == "positive\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["enc.mlkit", "new.mlkitkey", "old.mlkitkey"])
    }

    @Test("A key file others can read gets a warning")
    func openKeyFile() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = try Self.keygen(in: folder)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: key)
        let encrypted = folder.appendingPathComponent("enc.mlkit").path
        let warned = try CLI.run(["encrypt", Self.sentiment, "--key", key, "-o", encrypted])
        #expect(warned.status == 0)
        #expect(warned.stderr == "mlkit: warning: \(key): the key file is open to others (mode 0644); restrict it to its owner with chmod 600\n")
    }

    @Test("The chapter's .mlmodelkey works as a key", .needsSeedArtifacts("SentimentPolarity.mlmodelkey"))
    func appleKeyFile() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let apple = folder.appendingPathComponent("apple.mlmodelkey").path
        try FileManager.default.copyItem(atPath: Self.appleKey, toPath: apple)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: apple)
        let appleEncrypted = folder.appendingPathComponent("apple.mlkit").path
        let encrypt = try CLI.run(["encrypt", Self.sentiment, "--key", apple, "-o", appleEncrypted])
        #expect(encrypt.status == 0, "\(encrypt.stderr)")
        #expect(encrypt.stderr.isEmpty)
        let info = try CLI.run(["info", appleEncrypted])
        #expect(info.stdout.contains("AES-128-GCM"))
        #expect(info.stdout.contains("key identifier      DECFAB02-AF49-47DB-A794-508A94E0D633"))
        let predicted = try CLI.run(["predict", "--model", appleEncrypted, "--key", apple, "I am sad on cloudy days"])
        #expect(predicted.stdout == "negative\n")
    }

    @Test("Predicting from an encrypted model leaves the temporary folder and the model's folder unchanged")
    func nothingWritten() throws {
        let folder = try CLI.temporaryFolder(), temporary = try CLI.temporaryFolder()
        defer {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(at: temporary)
        }
        let key = try Self.keygen(in: folder)
        let encrypted = try Self.encryptedSentiment(in: folder, key: key)
        func listing(_ url: URL) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: url.path).sorted().map { name in
                let attributes = try FileManager.default.attributesOfItem(atPath: url.appendingPathComponent(name).path)
                return "\(name) \(attributes[.size] as? Int ?? -1) \((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? -1)"
            }
        }
        let before = try listing(folder)
        let predicted = try CLI.run(["predict", "--model", encrypted, "--key", key, "I love rainbows"],
                                    environment: ["TMPDIR": temporary.path], in: folder)
        #expect(predicted.stdout == "positive\n")
        #expect(try listing(folder) == before)
        #expect(try listing(temporary).isEmpty)
    }
}
