import Foundation

#if canImport(Glibc)
/// The minor page faults of the calling thread so far: pages it made resident
/// (`RUSAGE_THREAD`, 1 on Linux, which Swift does not import without `_GNU_SOURCE`).
func threadPageFaults() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(1), &usage)
    return usage.ru_minflt
}
#endif
