/// The bounds that keep a hostile file from making mlkit allocate without limit. Every count
/// and size a file states is checked against them, or against the file's own length, before
/// anything is allocated for it.
enum Limits {
    /// The largest `.mlmodel` mlkit reads: 2 GiB − 1 bytes, the most a protocol buffer message
    /// may hold.
    static let maximumModelSize = Int(Int32.max)
    /// The most elements an array feature may declare.
    static let maximumArrayElements = Int(Int32.max)
    /// The largest file inside a model archive, expanded: 1 GiB.
    static let maximumArchiveEntrySize = 1 << 30
    /// The most bytes all the files of a model archive may expand to, together: 2 GiB.
    static let maximumArchiveExpansion = 1 << 31
    /// The most entries a model archive may have.
    static let maximumArchiveEntries = 4096
    /// The deepest a pipeline may nest pipelines.
    static let maximumPipelineDepth = 32

    /// The most elements a stage may expand a sparse array to, for a model read from `length`
    /// bytes. A sparse array's size comes from the file (a vocabulary, a declared dimension),
    /// and a model that uses the array stores some vector as long as it (weights, shifts), so a
    /// legitimate model never needs more than its file's length; small models get 2^20.
    static func denseExpansion(forFileLength length: Int) -> Int {
        max(1 << 20, length)
    }
}
