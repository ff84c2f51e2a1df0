public import Foundation

/// Supplies the key for an encrypted model, by the key identifier in the model's clear header.
///
/// mlkit ships a provider for key files (``KeyFileProvider``) and one for keys held in memory
/// (``InMemoryKeyProvider``); `MLKitCollections` adds one that fetches keys from a collection
/// server with the app's credentials. Whatever a provider throws reaches the caller of
/// ``MLKit/TextClassifier/init(contentsOf:keyProvider:)`` as an ``EncryptionError`` with code
/// `keyUnavailable`, naming the key identifier and the provider's reason.
public protocol KeyProvider: Sendable {
    /// The key with this identifier.
    /// - Parameter identifier: The key identifier from an encrypted model's header.
    /// - Returns: The key. A key with another identifier is reported as `wrongKey`.
    /// - Throws: Any error when the key cannot be had; ``EncryptionError`` with code
    ///   `keyUnavailable` is the natural one.
    func key(for identifier: String) async throws -> ModelKey
}

extension KeyProvider {
    /// The `keyUnavailable` error for an identifier this provider does not hold.
    static func missing(_ identifier: String, among keys: [ModelKey], in place: String) -> EncryptionError {
        let held = keys.isEmpty ? "none" : keys.map(\.identifier).sorted().joined(separator: ", ")
        return EncryptionError(.keyUnavailable, "no key with identifier \(identifier) \(place) (it holds: \(held))",
                               keyIdentifier: identifier)
    }
}

/// Keys held in memory, by identifier.
public struct InMemoryKeyProvider: KeyProvider {
    private let keys: [String: ModelKey]

    /// Holds these keys; of keys with the same identifier, the last one wins.
    /// - Parameter keys: The keys.
    public init(keys: [ModelKey]) {
        self.keys = Dictionary(keys.map { ($0.identifier, $0) }, uniquingKeysWith: { $1 })
    }

    /// The key with this identifier.
    /// - Throws: ``EncryptionError`` with code `keyUnavailable` when none is held.
    public func key(for identifier: String) async throws -> ModelKey {
        guard let key = keys[identifier] else { throw Self.missing(identifier, among: Array(keys.values), in: "in memory") }
        return key
    }
}

/// Keys read from key files: one file, or every `.mlkitkey` and `.mlmodelkey` file in a folder.
///
/// The files are read once, when the provider is made; the keys then stay in memory.
public struct KeyFileProvider: KeyProvider {
    private let keys: InMemoryKeyProvider
    private let held: [ModelKey]
    private let place: String
    /// A warning for each key file that others may read (mode wider than 0600), for the
    /// caller to show.
    public let warnings: [String]

    /// Reads one key file, or the key files in a folder.
    /// - Parameter url: A `.mlkitkey` or `.mlmodelkey` file, or a folder of them.
    /// - Throws: ``EncryptionError``: `fileNotFound`, `io`, or `invalidKeyFile` naming the file.
    public init(contentsOf url: URL) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw EncryptionError(.fileNotFound, "no such key file or folder", file: url.path)
        }
        guard isFolder.boolValue else {
            try self.init(files: [url], place: "in \(url.path)")
            return
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            throw EncryptionError(.io, "cannot list the key folder: \(error.localizedDescription)", file: url.path)
        }
        let files = names.filter { $0.hasSuffix(".mlkitkey") || $0.hasSuffix(".mlmodelkey") }.sorted()
            .map { url.appendingPathComponent($0) }
        try self.init(files: files, place: "in the key files of \(url.path)")
    }

    private init(files: [URL], place: String) throws {
        held = try files.map { try ModelKey(contentsOf: $0) }
        keys = InMemoryKeyProvider(keys: held)
        warnings = files.compactMap { ModelKey.permissionWarning(forKeyFileAt: $0) }
        self.place = place
    }

    /// The key with this identifier.
    /// - Throws: ``EncryptionError`` with code `keyUnavailable` when no file holds it.
    public func key(for identifier: String) async throws -> ModelKey {
        guard let key = try? await keys.key(for: identifier) else { throw Self.missing(identifier, among: held, in: place) }
        return key
    }
}
