#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How many connections the server holds at once, so that stalled or slow clients (slowloris)
/// cannot exhaust it.
///
/// Three measures work together: every connection that has not sent a whole request head, or
/// has sent nothing of its body, for the idle timeout is closed
/// (``CollectionServer/Configuration/idleTimeout``); the soft limit on open files is raised to
/// the hard one at start-up, as the limit of 1,024 that many systems set by default is reached
/// by 1,024 idle sockets; and no more connections are accepted than leave room, under that
/// limit, for each to hold a model file open and for the database and logs. Past that, new
/// connections wait in the listen queue instead of failing the server's own file opens.
enum ConnectionLimits {
    /// Descriptors kept for the database, the logs and the listening socket.
    static let reserve = 64

    /// Raises the soft limit on open files to the hard limit (at most 2^20).
    /// - Returns: The soft limit in force afterwards.
    static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(resourceLimit, &limit) == 0 else { return 1024 }
        let hard = min(limit.rlim_max, rlim_t(1 << 20))
        if limit.rlim_cur < hard {
            var raised = limit
            raised.rlim_cur = hard
            if setrlimit(resourceLimit, &raised) == 0 { return Int(hard) }
        }
        return Int(min(limit.rlim_cur, rlim_t(1 << 20)))
    }

    /// The connections accepted at once under `openFiles`: each may hold its socket and one
    /// file (a model being sent, or an upload being written).
    static func maximumConnections(openFiles: Int) -> Int {
        max(8, (openFiles - reserve) / 2)
    }

    #if canImport(Glibc)
    private static let resourceLimit = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceLimit = RLIMIT_NOFILE
    #endif
}
