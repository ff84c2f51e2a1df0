public import Foundation

/// The bytes libFuzzer hands a harness.
public enum FuzzInput {
    /// A copy of the `count` bytes at `start`, which libFuzzer owns only for the call.
    public static func data(_ start: UnsafeRawPointer, _ count: Int) -> Data {
        Data(bytes: start, count: count)
    }

    /// The input split at its first byte: that byte, to choose a variant, and the rest.
    /// - Returns: `nil` for an empty input.
    public static func choice(_ data: Data) -> (choice: UInt8, rest: Data)? {
        guard let first = data.first else { return nil }
        return (first, Data(data.dropFirst()))
    }
}

/// Stops the run on a finding, with its message on standard error: a release build drops the
/// message of a `preconditionFailure`.
public func finding(_ message: String) -> Never {
    FileHandle.standardError.write(Data("finding: \(message)\n".utf8))
    preconditionFailure(message)
}
