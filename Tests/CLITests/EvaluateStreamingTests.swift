import Foundation
import TestSupport
import Testing

/// `mlkit evaluate` on JSON Lines: the file streams through the same pipeline as `predict`, and
/// gives the metrics that reading it whole gives.
@Suite("mlkit evaluate streams JSON Lines", .timeLimit(.minutes(10)), .onOwnThreads)
struct EvaluateStreamingTests {
    static let model = ChildProcess.repositoryRoot.appendingPathComponent("trained/sentiment.mlkit").path

    /// `count` labelled records for the bundled sentiment model: its two examples and a third
    /// text, each with a label drawn by a fixed pseudo-random pattern, one of them (`neutral`)
    /// a label the model does not know.
    static func records(_ count: Int) -> [[String: String]] {
        let texts = ["I love rainbows", "I am sad on cloudy days", "The train leaves at noon"]
        let labels = ["positive", "negative", "neutral"]
        var state: UInt64 = 7
        return (0..<count).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return ["text": texts[Int(state >> 33) % 3], "label": labels[Int(state >> 40) % 3]]
        }
    }

    static func jsonLine(_ record: [String: String]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]), as: UTF8.self)
    }

    static func metrics(_ result: CLI.Result) throws -> [String: Any] {
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    @Test("Across many batches, with blank lines, the metrics are those of the same records read whole")
    func sameMetricsAsWhole() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // 20,000 records, about 1 MB: many batches of lines.
        let records = Self.records(20_000)
        var lines = try records.map(Self.jsonLine)
        for index in stride(from: 5_000, to: 0, by: -1_000) { lines.insert(index % 2000 == 0 ? "" : "  ", at: index) }
        let streamed = folder.appendingPathComponent("texts.jsonl"), whole = folder.appendingPathComponent("texts.json")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: streamed)
        try JSONSerialization.data(withJSONObject: records).write(to: whole)

        let fromLines = try Self.metrics(try CLI.run(["evaluate", Self.model, streamed.path, "--json"]))
        let fromArray = try Self.metrics(try CLI.run(["evaluate", Self.model, whole.path, "--json"]))
        #expect(fromLines["examples"] as? Int == 20_000)
        #expect(fromLines["labels"] as? [String] == ["negative", "positive", "neutral"])
        #expect(fromArray["examples"] as? Int == 20_000)
        for key in ["accuracy", "macroF1", "weightedF1"] {
            #expect(fromLines[key] as? Double == fromArray[key] as? Double, "\(key)")
        }
        #expect(fromLines["labels"] as? [String] == fromArray["labels"] as? [String])
        #expect(fromLines["confusion"] as? [[Int]] == fromArray["confusion"] as? [[Int]])
        #expect(fromLines["topKAccuracy"] as? [Double] == fromArray["topKAccuracy"] as? [Double])
        let streamedLoss = try #require(fromLines["logLoss"] as? Double), wholeLoss = try #require(fromArray["logLoss"] as? Double)
        #expect(abs(streamedLoss - wholeLoss) <= 1e-12 * wholeLoss, "\(streamedLoss) against \(wholeLoss)")
        // The report, to four decimals, is the same.
        let streamedReport = try CLI.run(["evaluate", Self.model, streamed.path])
        #expect(streamedReport.status == 0)
        #expect(streamedReport.stdout == (try CLI.run(["evaluate", Self.model, whole.path])).stdout)
    }

    @Test("A faulty record is named by its line, column, record and field, whichever batch it falls in")
    func faultsNamed() throws {
        let folder = try CLI.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = try Self.records(12_000).map(Self.jsonLine)
        // Line 1001 blank, so that record indices and line numbers part.
        var base = good
        base.insert("", at: 1_000)
        func refused(_ lines: [String], _ name: String) throws -> String {
            let file = folder.appendingPathComponent(name)
            try Data(lines.joined(separator: "\n").utf8).write(to: file)
            let result = try CLI.run(["evaluate", Self.model, file.path])
            #expect(result.status == 65, "\(name): \(result.stderr)")
            #expect(result.stdout.isEmpty)
            return result.stderr.replacingOccurrences(of: folder.path + "/", with: "")
        }
        var missing = base
        missing[9_000] = #"{"text": "I love rainbows"}"#
        #expect(try refused(missing, "missing.jsonl") == "mlkit: error: missing.jsonl:9001:1: record 8999, field \"label\": missing\n")
        var split = base
        split[7_000] = #"{"text": "I love rainbows","#
        split[7_001] = #""label": "positive"}"#
        #expect(try refused(split, "split.jsonl")
                == "mlkit: error: split.jsonl:7001:28: the record does not end on its line (JSON Lines holds one record per line)\n")
        var cut = base
        cut[11_000] = #"{"text": "I love rainbows", "label": "#
        #expect(try refused(cut, "cut.jsonl")
                == "mlkit: error: cut.jsonl:11001:38: the record does not end on its line (JSON Lines holds one record per line)\n")
        var invalid = Data(base.joined(separator: "\n").utf8)
        let lineStart = base[..<5_000].reduce(0) { $0 + $1.utf8.count + 1 }
        invalid[lineStart + 10] = 0xFF
        let file = folder.appendingPathComponent("invalid.jsonl")
        try invalid.write(to: file)
        let result = try CLI.run(["evaluate", Self.model, file.path])
        #expect(result.status == 65)
        #expect(result.stderr.hasPrefix("mlkit: error: \(file.path):5001:11: invalid UTF-8"), "\(result.stderr)")

        #expect(try refused(["", "  ", ""], "blank.jsonl") == "mlkit: error: blank.jsonl: the dataset is empty\n")
    }
}
