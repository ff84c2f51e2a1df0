import Foundation
import MLKit

/// Where `predict` finds a model when none is named.
enum ModelLocation {
    /// The bundled sentiment model, trained from the VADER sentences (`trained/README.md`).
    static let bundledName = "sentiment.mlkit"

    /// `--model`, else `MLKIT_MODEL`, else the bundled sentiment model: installed beside the
    /// binary (`../share/mlkit/`), or in the checkout the binary was built from.
    static func resolve(_ explicit: String?) throws -> URL {
        if let explicit { return URL(fileURLWithPath: explicit) }
        if let environment = ProcessInfo.processInfo.environment["MLKIT_MODEL"], !environment.isEmpty {
            return URL(fileURLWithPath: environment)
        }
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let candidates = [
            binary.appendingPathComponent("../share/mlkit/\(bundledName)").standardized,
            checkout.appendingPathComponent("trained/\(bundledName)"),
        ]
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) else {
            throw MLKitError(.fileNotFound, "no model given and no bundled model found; pass --model PATH or set MLKIT_MODEL",
                             at: .init(file: candidates.last!.path))
        }
        return found
    }
}
