import Foundation
import MLKit

/// Where `predict` finds a model when none is named.
enum ModelLocation {
    /// The bundled sentiment model, trained from the VADER sentences (`trained/README.md`).
    static let bundledName = "sentiment.mlkit"

    /// The folder of resources that `swift build` writes beside the binary: the package's and
    /// the target's names (`Bundle.module` would find it too, but would stop the process where
    /// it is missing, and falls back to the folder of the build).
    static let resourceFolder = "mlkit_mlkit.resources"

    /// `--model`, else `MLKIT_MODEL`, else the bundled sentiment model, found from the binary's
    /// own folder (symbolic links resolved): in the resources folder that `swift build` writes
    /// beside it, or, installed, in `../share/mlkit/`. A binary copied with its resources folder,
    /// or installed with the model in `share/mlkit`, keeps finding it.
    static func resolve(_ explicit: String?) throws -> URL {
        if let explicit { return URL(fileURLWithPath: explicit) }
        if let environment = ProcessInfo.processInfo.environment["MLKIT_MODEL"], !environment.isEmpty {
            return URL(fileURLWithPath: environment)
        }
        let candidates = bundledCandidates(binaryFolder: binaryFolder)
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) else {
            throw MLKitError(.fileNotFound, "no model given and no bundled model found (looked in "
                             + candidates.map(\.path).joined(separator: " and ") + "); pass --model PATH or set MLKIT_MODEL")
        }
        return found
    }

    /// Where the bundled model may be, in order, for a binary in `binaryFolder`.
    static func bundledCandidates(binaryFolder: URL) -> [URL] {
        [binaryFolder.appendingPathComponent(resourceFolder).appendingPathComponent(bundledName),
         binaryFolder.appendingPathComponent("../share/mlkit").appendingPathComponent(bundledName).standardized]
    }

    /// The folder of the running binary, symbolic links resolved: from the system's record of
    /// its path (`/proc/self/exe` on Linux), so that a binary run through `PATH` or a link finds
    /// its own folder.
    static var binaryFolder: URL {
        let executable = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        return executable.resolvingSymlinksInPath().deletingLastPathComponent()
    }
}
