// The model-file loaders (`TextClassifier(modelFileData:)`, then `WordTagger(modelFileData:)`):
// any bytes, resealed with a valid length and CRC-32 so that every mutation reaches the
// container and header decoders behind the checksum. A model that loads is then used in every
// way the library offers (`Exercise`).
import Foundation
import FuzzSupport
import MLKit

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    Seeds.writeIfAsked {
        try Seeds.smallModels()
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let file = ModelFileSeal.resealed(FuzzInput.data(start, count))
    if let classifier = try? TextClassifier(modelFileData: file, source: "fuzz.mlkit") {
        Exercise.classifier(classifier)
    } else if let tagger = try? WordTagger(modelFileData: file, source: "fuzz.mlkit") {
        Exercise.tagger(tagger)
    }
    return 0
}
