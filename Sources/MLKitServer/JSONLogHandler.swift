package import Logging
import Foundation

/// A log handler that writes one JSON object a line to standard error: `time`, `level`,
/// `label`, `message` and the metadata's keys, so that logs can be filtered by field. The
/// handler of `mlkit serve`; a service that embeds the server brings its own.
package struct JSONLogHandler: LogHandler {
    /// The logger's label.
    package let label: String
    /// Metadata added to every line.
    package var metadata: Logger.Metadata = [:]
    /// The lowest level written.
    package var logLevel: Logger.Level

    /// Creates a handler.
    /// - Parameters:
    ///   - label: The logger's label.
    ///   - level: The lowest level written.
    package init(label: String, level: Logger.Level = .info) {
        self.label = label
        self.logLevel = level
    }

    /// Reads or sets one metadata value.
    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one line.
    package func log(event: LogEvent) {
        var fields: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            fields[key] = "\(value)"
        }
        fields["time"] = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        fields["level"] = event.level.rawValue
        fields["label"] = label
        fields["message"] = "\(event.message)"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(fields) else { return }
        line.append(0x0A)
        FileHandle.standardError.write(line)
    }
}
