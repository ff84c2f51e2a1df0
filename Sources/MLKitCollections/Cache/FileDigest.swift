import Crypto
import Foundation

/// The SHA-256 of files, with swift-crypto (which `MLKitEncryption` already brings).
enum FileDigest {
    /// The hex SHA-256 (64 lowercase digits) of a file's bytes, read in 1 MiB pieces.
    static func sha256(ofFile url: URL) throws -> String {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(data: chunk)
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
