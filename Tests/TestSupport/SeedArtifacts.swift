public import Foundation
public import Testing

/// The reference chapter's own files (`SentimentPolarity.mlmodel`, the `.mlarchive`s, the
/// `.mlmodelkey`, `texts.json`, `labels.json`), read from `../shared/seed-artifacts/` beside the
/// checkout when it is there.
///
/// The project never copies these files, and `git clone` then `swift test` must pass without
/// them. A test that reads one carries ``Testing/Trait/needsSeedArtifacts(_:)``, so it runs when
/// the files are there and is reported as skipped, with the reason, when they are not.
public enum SeedArtifacts {
    /// `<repository>/../shared/seed-artifacts`.
    public static let folder = ChildProcess.repositoryRoot.deletingLastPathComponent()
        .appendingPathComponent("shared/seed-artifacts", isDirectory: true)

    /// The reference file `name`, whether or not it exists.
    public static func url(_ name: String) -> URL { folder.appendingPathComponent(name) }

    /// The path of the reference file `name`, whether or not it exists.
    public static func path(_ name: String) -> String { url(name).path }

    /// Whether every one of `names` is there.
    public static func has(_ names: [String]) -> Bool {
        names.allSatisfy { FileManager.default.fileExists(atPath: path($0)) }
    }
}

/// The project's own test fixtures in `Tests/Fixtures/`, which every test may rely on.
public enum ProjectFixtures {
    /// `Tests/Fixtures`.
    public static let folder = ChildProcess.repositoryRoot.appendingPathComponent("Tests/Fixtures", isDirectory: true)

    /// 40 news headlines written for these tests, 20 `Tech` and 20 `US Politics`, in Create ML's
    /// JSON format: the data for tests that need a small trained classifier.
    public static let headlines = folder.appendingPathComponent("headlines.json")

    /// A key file in Apple's `.mlmodelkey` form (an XML property list with `Key`, `IV`,
    /// `KeyIdentifier` and `Version`), with fresh random material.
    public static func appleStyleKeyFile(identifier: String) throws -> Data {
        let plist: [String: Any] = ["Key": Data((0..<16).map { _ in UInt8.random(in: 0...255) }),
                                    "IV": Data((0..<16).map { _ in UInt8.random(in: 0...255) }),
                                    "KeyIdentifier": identifier, "Version": 1]
        return try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only when the reference files `names` sit in `../shared/seed-artifacts/`
    /// beside the checkout, and otherwise skips it, saying which file is missing.
    public static func needsSeedArtifacts(_ names: String...) -> Self {
        let missing = names.filter { !SeedArtifacts.has([$0]) }
        let reason = "needs the reference file\(missing.count == 1 ? "" : "s") "
            + missing.map { "../shared/seed-artifacts/\($0)" }.joined(separator: ", ") + ", which is not beside the checkout"
        return .enabled(if: missing.isEmpty, Comment(rawValue: reason))
    }
}
