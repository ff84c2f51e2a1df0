// `MLKitProbe passes MODEL TEST.json [REPEAT]`: mlkit's side of the interleaved prediction
// benchmark (Benchmarks/compare/interleaved.py). It loads the model and the test texts (the list
// repeated REPEAT times, default 1), prints `ready N`, then runs one timed pass of
// `predictions(for:)` over all N texts (all cores) for each line it
// reads on stdin, and prints that pass's wall seconds. The parent times a peer's pass between
// two of ours, so that both see the same state of a machine whose speed drifts.
import Foundation
import MLKit

/// Runs `passes`; returns the process's exit status.
func runPredictionPasses(_ arguments: [String]) -> Int32 {
    guard arguments.count == 2 || arguments.count == 3, let copies = Int(arguments.count == 3 ? arguments[2] : "1"),
          copies >= 1 else {
        FileHandle.standardError.write(Data("usage: MLKitProbe passes MODEL.mlkit TEST.json [REPEAT]\n".utf8))
        return 64
    }
    do {
        let classifier = try TextClassifier(contentsOf: URL(fileURLWithPath: arguments[0]))
        let test = try DatasetReader().read(contentsOf: URL(fileURLWithPath: arguments[1])).examples.map(\.text)
        let texts = Array(repeatElement(test, count: copies).joined())
        let output = FileHandle.standardOutput  // unbuffered: the parent waits for each line
        output.write(Data("ready \(texts.count)\n".utf8))
        while readLine() != nil {
            let start = monotonicSeconds()
            let labels = classifier.predictions(for: texts)
            let seconds = monotonicSeconds() - start
            precondition(labels.count == texts.count)
            output.write(Data("\(seconds)\n".utf8))
        }
        return 0
    } catch {
        FileHandle.standardError.write(Data("MLKitProbe passes: \(error)\n".utf8))
        return 1
    }
}
