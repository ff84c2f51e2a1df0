#!/usr/bin/env bash
# Builds one fuzz harness with libFuzzer and the address sanitizer (Swift and C code) plus the
# undefined-behaviour sanitizer (C code: swiftc on Linux has no -sanitize=undefined, and Swift
# code traps on overflow and out-of-bounds access by itself), writes its seeds when its corpus
# is empty, and runs it.
#
#   Fuzz/run.sh NAME SECONDS [libFuzzer options...]
#   Fuzz/run.sh all SECONDS      every harness in turn, SECONDS each (what CI runs)
#   Fuzz/run.sh build            builds every harness, runs none
#
# NAME is a harness of Package.swift (model-file, ...). The corpus grows in Fuzz/corpus/NAME,
# crashing inputs land in Fuzz/findings/NAME, and the run's log in Fuzz/logs/ (all ignored by
# git). The last line printed is a summary: executions, coverage, and the number of findings.
# The exit status is libFuzzer's: 0 when nothing was found. MLKIT_FUZZ_CONFIG=debug builds
# without optimization.
set -euo pipefail
cd "$(dirname "$0")"

if [ $# -lt 2 ] && [ "${1:-}" != build ]; then
    echo "usage: $0 NAME|all SECONDS [libFuzzer options...], or $0 build" >&2
    exit 64
fi
name=$1
seconds=${2:-0}
shift $(( $# < 2 ? $# : 2 ))
config=${MLKIT_FUZZ_CONFIG:-release}

# SwiftPM's --sanitize=fuzzer lets libFuzzer supply `main`. One --sanitize only: SwiftPM passes
# each as a separate -sanitize= flag, in no fixed order, and swiftc keeps the last, so the
# address sanitizer comes through -Xswiftc (last on the line) and -Xcc instead. -Xcc also adds
# the undefined-behaviour checks to the C code (the ICU shim, the CRC and BLAS shims, swift-crypto's
# BoringSSL).
build=(swift build -c "$config" --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address
       -Xcc -fsanitize=address,undefined -Xcc -fno-sanitize=vptr,function)

if [ "$name" = build ]; then
    exec "${build[@]}"
fi
if [ "$name" = all ]; then
    "${build[@]}" >&2
    status=0
    for harness in $(sed -n '/^let harnesses = \[/,/^\]/s/^ *"\([a-z-]*\)",$/\1/p' Package.swift); do
        ./run.sh "$harness" "$seconds" "$@" || status=1
    done
    exit "$status"
fi

"${build[@]}" --product "$name" >&2
binary="$("${build[@]}" --show-bin-path)/$name"

corpus=corpus/$name
findings=findings/$name
mkdir -p "$corpus" "$findings" logs
log=logs/$name-$(date +%Y%m%d-%H%M%S).log
# A hang is an input that takes over a second; one allocation over 1 GiB is a finding too. Leak
# detection is off: the harnesses look for crashes, traps and memory errors, and it would run
# every new input twice.
options=(-max_total_time="$seconds" -timeout=1 -rss_limit_mb=2048 -malloc_limit_mb=1024 -detect_leaks=0
         -artifact_prefix="$findings/" -print_final_stats=1)
[ -f "dictionaries/$name.dict" ] && options+=(-dict="dictionaries/$name.dict")

# The Swift runtime's own crash handler would read memory that the address sanitizer watches:
# a trap goes straight to libFuzzer instead, which reports it with the input.
export SWIFT_BACKTRACE=enable=no
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Allocation stacks of 5 frames: deep enough to name the caller, and 2-3 times faster than 30.
export ASAN_OPTIONS=detect_leaks=0:malloc_context_size=5:allocator_may_return_null=0
export MLKIT_FUZZ_SEEDS="$PWD/$corpus"
status=0
"$binary" "${options[@]}" "$@" "$corpus" 2>&1 | tee "$log" >&2 || status=$?

# The final statistics, or in -fork mode (which prints none) the last status line's count.
executions=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{s += $2} END {print s + 0}')
[ "$executions" -gt 0 ] || executions=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
coverage=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
found=$(find "$findings" -type f | wc -l)
echo "$name: $executions executions in ${seconds} s, ${coverage:-no coverage line}, $found finding(s) in Fuzz/$findings, log Fuzz/$log"
exit "$status"
