#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Per-thread scratch space for prediction, so that after a thread's first prediction the
/// featurizer's buffers and the score vector are reused and nothing is allocated. A word
/// tagger's buffers (``tagging``) live here too, made on a thread's first tagging.
///
/// Each thread gets its own workspace through POSIX thread-specific storage; the workspace is
/// released when the thread exits. A workspace is only ever touched by its own thread.
final class PredictionWorkspace {
    /// The featurizer's buffers, behind a pointer: a stored property of a class would be
    /// checked for exclusive access at run time on every prediction.
    let features: UnsafeMutablePointer<FeatureBuffer>
    /// Room for class scores.
    private var scores: UnsafeMutablePointer<Float>
    private var scoreCapacity: Int
    /// A word tagger's buffers.
    private(set) lazy var tagging = TaggingWorkspace()

    private init() {
        scoreCapacity = 64
        scores = .allocate(capacity: scoreCapacity)
        features = .allocate(capacity: 1)
        features.initialize(to: FeatureBuffer())
    }

    deinit {
        scores.deallocate()
        features.deinitialize(count: 1)
        features.deallocate()
    }

    /// Calls `body` with room for `count` scores.
    func withScores<R>(count: Int, _ body: (UnsafeMutableBufferPointer<Float>) -> R) -> R {
        if count > scoreCapacity {
            scores.deallocate()
            scoreCapacity = count
            scores = .allocate(capacity: count)
        }
        return body(UnsafeMutableBufferPointer(start: scores, count: count))
    }

    /// This thread's workspace.
    static var current: PredictionWorkspace {
        if let existing = pthread_getspecific(key) {
            return Unmanaged<PredictionWorkspace>.fromOpaque(existing).takeUnretainedValue()
        }
        let workspace = PredictionWorkspace()
        pthread_setspecific(key, Unmanaged.passRetained(workspace).toOpaque())
        return workspace
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            #if canImport(Glibc)
            guard let pointer else { return }
            #endif
            Unmanaged<PredictionWorkspace>.fromOpaque(pointer).release()
        }
        return key
    }()
}
