import ArgumentParser
import Foundation
import MLKit
import MLKitEncryption
import MLKitCollections
import MLKitCoreML
import MLKitServer

/// The exit codes of `mlkit`, from BSD's sysexits.
enum ExitStatus {
    static let usage: Int32 = 64
    static let badData: Int32 = 65
    static let missingFile: Int32 = 66
    static let unavailable: Int32 = 69
    static let internalError: Int32 = 70
    static let cannotCreate: Int32 = 73
    static let protocolError: Int32 = 76
    static let noPermission: Int32 = 77

    /// The exit code for a core error.
    static func code(for error: MLKitError) -> Int32 {
        switch error.code {
        case .fileNotFound: return missingFile
        case .malformedData, .unsupportedVersion, .invalidUTF8, .missingField, .wrongType, .invalidDataset: return badData
        case .invalidParameter, .unavailable: return usage
        default: return internalError
        }
    }

    /// The exit code for an encryption error: 77 when the key is missing or wrong.
    static func code(for error: EncryptionError) -> Int32 {
        switch error.code {
        case .keyUnavailable, .wrongKey: return noPermission
        case .decryptionFailed, .unsupportedEncryption, .invalidKeyFile, .notEncrypted, .alreadyEncrypted: return badData
        case .fileNotFound: return missingFile
        case .keyFileExists: return cannotCreate
        default: return internalError
        }
    }
}

extension ExitStatus {
    /// The exit code for a Core ML error: 77 when an encrypted archive's key is missing or
    /// wrong, 65 for a model or archive that is damaged, inconsistent or of a type mlkit does
    /// not run, or that cannot be exported.
    static func code(for error: CoreMLError) -> Int32 {
        switch error.code {
        case .keyUnavailable, .wrongKey: return noPermission
        case .fileNotFound: return missingFile
        case .io: return internalError
        default: return badData
        }
    }

    /// The exit code for a collection client error: 69 when the server cannot be reached or
    /// cannot provide the collection, 77 for a refused token, 65 for input the server refused.
    static func code(for error: ModelCollectionError) -> Int32 {
        switch error.code {
        case .invalidParameter: return usage
        case .notFound: return missingFile
        case .unauthorized, .forbidden: return noPermission
        case .network, .modelCollection: return unavailable
        case .checksumMismatch, .invalidResponse: return protocolError
        case .server: return (error.statusCode ?? 500) >= 500 ? unavailable : badData
        default: return internalError
        }
    }
}

extension ExitStatus {
    /// The exit code for a collection server error: 64 for a bad option, 66 for a missing data
    /// folder, 65 for data the server refuses, 69 when the shared database cannot be reached,
    /// 70 otherwise (a full disk included).
    static func code(for error: CollectionServerError) -> Int32 {
        switch error.code {
        case .badRequest: return usage
        case .notFound: return missingFile
        case .unprocessable, .conflict: return badData
        case .databaseUnavailable: return unavailable
        default: return internalError
        }
    }
}

/// Runs a command body, turning errors into a message on standard error and an exit code.
func reportingFailures(_ body: () throws -> Void) throws {
    try exitingOnFailure { try body() }
}

/// Runs an asynchronous command body, turning errors into a message and an exit code.
func reportingFailures(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch {
        try exitingOnFailure { throw error }
    }
}

/// Reports the error `body` throws and exits with its code.
private func exitingOnFailure(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ModelCollectionError {
        printError(error.description)
        throw ExitCode(ExitStatus.code(for: error))
    } catch let error as MLKitError {
        printError(error.description)
        throw ExitCode(ExitStatus.code(for: error))
    } catch let error as EncryptionError {
        printError(error.description)
        throw ExitCode(ExitStatus.code(for: error))
    } catch let error as CoreMLError {
        printError(error.description)
        throw ExitCode(ExitStatus.code(for: error))
    } catch let error as ExitCode {
        throw error
    } catch {
        printError(String(describing: error))
        throw ExitCode(ExitStatus.internalError)
    }
}

/// Writes `mlkit: error: message` to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data("mlkit: error: \(message)\n".utf8))
}

/// Reads a whole file, or standard input for `-`, as UTF-8 with the given policy.
func readText(path: String, policy: InvalidUTF8Policy) throws -> String {
    let data: Data
    if path == "-" {
        data = FileHandle.standardInput.readDataToEndOfFile()
    } else {
        guard FileManager.default.fileExists(atPath: path) else {
            throw MLKitError(.fileNotFound, "no such file", at: .init(file: path))
        }
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw MLKitError(.io, "cannot read the file: \(error.localizedDescription)", at: .init(file: path))
        }
    }
    return try Tokenizer.decodeText(data, policy: policy, source: path == "-" ? "stdin" : path)
}
