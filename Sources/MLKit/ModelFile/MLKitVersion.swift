/// mlkit's version, recorded in every model file it writes.
public enum MLKitVersion {
    /// The version string.
    public static let current = "0.1.0"
}
