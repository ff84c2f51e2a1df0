// Key files (`ModelKey(keyFileData:)`): mlkit's JSON `.mlkitkey` and Apple's `.mlmodelkey`
// property lists, XML or binary. A key that loads must write a key file that loads as the
// same key.
import Foundation
import FuzzSupport
import MLKitEncryption

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    Seeds.writeIfAsked {
        var seeds: [String: Data] = [:]
        for (index, cipher) in ModelCipher.allCases.enumerated() {
            seeds["known-\(index).mlkitkey"] = KnownKeys.keyFile(cipher)
            seeds["canonical-\(index).mlkitkey"] = KnownKeys.key(cipher).keyFileData()
        }
        // Apple's layout: Key and IV (16 bytes each), KeyIdentifier and Version.
        let apple: [String: Any] = ["Key": Data(0..<16), "IV": Data(16..<32),
                                    "KeyIdentifier": "0F4E2C61-8C0B-4F64-9C51-2E5A8B7D3A10", "Version": 1]
        for (name, format) in [("apple-xml.mlmodelkey", PropertyListSerialization.PropertyListFormat.xml),
                               ("apple-binary.mlmodelkey", .binary)] {
            seeds[name] = try PropertyListSerialization.data(fromPropertyList: apple, format: format, options: 0)
        }
        // The encrypted golden files' test keys.
        return seeds.merging(try Seeds.files(in: "Tests/EncryptionTests/Fixtures", extension: "mlkitkey")) { $1 }
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard let key = try? ModelKey(keyFileData: FuzzInput.data(start, count), source: "fuzz.mlkitkey") else { return 0 }
    _ = key.description
    _ = key.debugDescription
    do {
        let again = try ModelKey(keyFileData: key.keyFileData(), source: "written")
        // Written keys store whole seconds, so the written file, not the key, is the fixed point.
        precondition(again.identifier == key.identifier && again.cipher == key.cipher
                      && again.keyFileData() == key.keyFileData(), "a key changed when its key file was written and read back")
    } catch {
        preconditionFailure("a loaded key, written again, does not load: \(error)")
    }
    return 0
}
