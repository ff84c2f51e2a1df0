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

extension Trait where Self == ConditionTrait {
    /// Runs the test only when the reference files `names` sit in `../shared/seed-artifacts/`
    /// beside the checkout, and otherwise skips it, saying which file is missing.
    public static func needsSeedArtifacts(_ names: String...) -> Self {
        let missing = names.filter { !SeedArtifacts.has([$0]) }
        let reason = "skipped: needs the reference file\(missing.count == 1 ? "" : "s") "
            + missing.map { "../shared/seed-artifacts/\($0)" }.joined(separator: ", ") + ", which is not beside the checkout"
        return .enabled(if: missing.isEmpty, Comment(rawValue: reason))
    }
}
