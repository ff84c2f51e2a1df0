// The JSON Lines dataset reader (`DatasetReader.read(data:format: .jsonLines)`), with both UTF-8
// policies and other columns, and the word-tagger rows it also reads, then validation and a split.
import Foundation
import FuzzSupport
import MLKit

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    Seeds.writeIfAsked { try DatasetSeeds.all().filter { $0.key.hasSuffix(".jsonl") } }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    DatasetSeeds.read(FuzzInput.data(start, count), as: .jsonLines)
    return 0
}
