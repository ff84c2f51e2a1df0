// The model-file loader (`TextClassifier(modelFileData:)`): any bytes, resealed with a valid
// length and CRC-32 so that every mutation reaches the container and header decoders behind
// the checksum. A model that loads is then used in every way the library offers (`Exercise`).
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
    guard let classifier = try? TextClassifier(modelFileData: file, source: "fuzz.mlkit") else { return 0 }
    Exercise.classifier(classifier)
    return 0
}
