import Foundation
import MLKit

extension EvaluateCommand {
    /// Measures `classifier` on a JSON Lines file as it streams: batches of lines are read,
    /// parsed and measured on every core at once, and their metrics are added up in the file's
    /// order, so memory is bounded by the batches in flight, not by the file.
    ///
    /// The figures are those of reading the whole file first, except that the log-loss may
    /// differ in its last digits (its sum is added batch by batch). Each record must lie on one
    /// line, as JSON Lines has it; a record that goes on to the next line is refused, naming
    /// the line.
    /// - Throws: ``MLKitError`` naming the file, its line, column, record and field, as
    ///   ``DatasetReader`` names them.
    func streamingEvaluation(of classifier: LoadedModel, reading reader: DatasetReader) throws -> ClassificationMetrics {
        let lines = try LineBatchReader(path: data)
        let name = lines.name
        var metrics = ClassificationMetrics(combining: [])
        var records = 0
        try StreamingPipeline.run(lines, transform: { batch -> BatchEvaluation in
            switch Self.examples(in: batch, reader: reader, source: name) {
            case .success(let dataset):
                return .measured(try classifier.evaluation(on: dataset, threads: 1), records: dataset.count)
            case .failure(let error):
                return .failed(error)
            }
        }, consume: { part in
            switch part {
            case .measured(let batchMetrics, let count):
                if count > 0 { metrics = ClassificationMetrics(combining: [metrics, batchMetrics]) }
                records += count
            case .failed(let error):
                // The record's index counts the records of the batches before this one.
                throw error.moved(records: records)
            }
        })
        guard records > 0 else {
            throw MLKitError(.invalidDataset, "the dataset is empty", at: .init(file: data))
        }
        return metrics
    }

    /// A batch's labelled texts; on a failure, the error of its first line that fails, named
    /// by its line in the file.
    private static func examples(in batch: LineBatch, reader: DatasetReader,
                                 source: String) -> Result<TextDataset, MLKitError> {
        let records = batch.lines.filter { !isBlank(batch.bytes[$0]) }
        guard !records.isEmpty else { return .success(TextDataset([])) }
        let bytes = Data(batch.bytes)
        if let dataset = try? reader.read(data: bytes, format: .jsonLines, source: source),
           dataset.count == records.count {
            return .success(dataset)
        }
        // Line by line, to name the line at fault, one that does not parse on its own (a
        // record that goes on to the next line, among others).
        for (record, range) in records.enumerated() {
            do {
                _ = try reader.read(data: bytes[range], format: .jsonLines, source: source)
            } catch var error as MLKitError {
                if let column = error.location?.column, column > range.count {
                    // The line ended inside the record.
                    error = MLKitError(.malformedData, "the record does not end on its line (JSON Lines holds one "
                                       + "record per line)", at: error.location)
                }
                return .failure(error.moved(lines: batch.firstLine - 1 + batch.lines.firstIndex(of: range)!,
                                            records: record))
            } catch {
                return .failure(MLKitError(.malformedData, "\(error)", at: .init(file: source)))
            }
        }
        return .failure(MLKitError(.malformedData, "a record spans more than one line", at: .init(file: source, line: batch.firstLine)))
    }

    private static func isBlank(_ bytes: Slice<UnsafeRawBufferPointer>) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }
}

/// What a worker makes of a batch of JSON Lines.
private enum BatchEvaluation: Sendable {
    /// The batch's metrics, and its number of records.
    case measured(ClassificationMetrics, records: Int)
    /// The error of its first line at fault: its line is the file's, its record the batch's.
    case failed(MLKitError)
}

extension MLKitError {
    /// The error with its location's line moved down by `lines` and its record by `records`,
    /// for an error found in a part of a file that starts after them.
    func moved(lines: Int = 0, records: Int = 0) -> MLKitError {
        guard var location else { return self }
        location.line = location.line.map { $0 + lines }
        location.record = location.record.map { $0 + records }
        return MLKitError(code, reason, at: location)
    }
}
