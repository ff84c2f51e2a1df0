// The Core ML model archive reader (`CoreMLModel(fileData:decryptor:)` on a `.mlarchive`, a zip
// of compiled model parts), in four ways chosen by the input's first byte (its two low bits):
// - 0: the rest is an archive, mutated as it comes (the zip's records, the deflate streams),
//   read without a key;
// - 1: the rest is a container of files (`\nFILE:` path `\n` bytes, `CoreMLLayout`), zipped
//   here with valid records and checksums (stored, or deflated when bit 2 is set), so that
//   every mutation of the compiled nodes reaches the node and protobuf decoders;
// - 2: the same files encrypted with a known Apple model key (AES-128-CBC pages, as Apple's
//   encrypted archives are), with the entry that names the key; read with that key. The
//   format has no authentication, so every mutation of the plaintext reaches the decoders;
//   each file must decrypt back to its plaintext;
// - 3: the rest is an encrypted archive, mutated as it comes, read with the known key.
// A model that loads is used as the `coreml-model` harness uses one (`CoreMLExercise`).
import Foundation
import FuzzSupport
import MLKitCoreML
import MLKitEncryption

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    Seeds.writeIfAsked { try CoreMLSeeds.archives() }
    return 0
}

let key: ModelKey = {
    do {
        return try ModelKey(keyFileData: CoreMLLayout.keyFile, source: "known.mlmodelkey")
    } catch {
        finding("the known Apple key does not load: \(error)")
    }
}()

func decryptor(_ file: Data, _ identifier: String) throws -> Data {
    try ModelArchiveDecryption.decrypt(file, keyIdentifier: identifier, with: key, source: "fuzz.mlarchive")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard let (choice, rest) = FuzzInput.choice(FuzzInput.data(start, count)) else { return 0 }
    switch choice & 3 {
    case 0:
        CoreMLExercise.load(rest)
    case 1:
        CoreMLExercise.load(CoreMLLayout.zip(CoreMLLayout.files(inContainer: rest), deflate: choice & 4 != 0))
    case 2:
        let files = CoreMLLayout.files(inContainer: rest)
        for file in files where file.path != "metadata.json" {
            let opened: Data
            do {
                opened = try decryptor(CoreMLLayout.encrypt(file.data), CoreMLLayout.keyIdentifier)
            } catch {
                finding("a file encrypted with the known key does not decrypt with it: \(error)")
            }
            if !(opened == file.data) { finding("decryption changed the plaintext") }
        }
        CoreMLExercise.load(CoreMLLayout.zip(CoreMLLayout.encrypted(files), deflate: choice & 4 != 0), decryptor: decryptor)
    default:
        CoreMLExercise.load(rest, decryptor: decryptor)
    }
    return 0
}
