#!/usr/bin/env bash
# Load benchmark of the collection server (`mlkit serve`), with wrk from Debian's packages.
#
#   Benchmarks/server/run.sh [path/to/mlkit]    (default: .build/release/mlkit; build it with
#                                                 `swift build -c release --product mlkit`)
#
# It starts the server on 127.0.0.1 on a free port over a temporary data folder, publishes the
# bundled sentiment model (trained/sentiment.mlkit, 3.3 MB) in a collection with a default and a
# targeted 50% rollout deployment, then measures with wrk:
#   1. GET /v1/collections/sentiment with a device context and a random installation ID per
#      request (so the rollout hash runs every time): requests/s and latency percentiles;
#   2. GET /v1/models/<sha256>: transfer rate of whole-file downloads.
# GET /healthz on the same server runs first, as the in-run peer: the framework's floor for a
# request with no work. It prints the load average before and after each run and the server's
# CPU time, because the machine is shared. Environment: DURATION (seconds, default 10), CONNECTIONS (default 32),
# DOWNLOAD_CONNECTIONS (default 8), WRK_THREADS (default 1).
set -euo pipefail
cd "$(dirname "$0")/../.."

MLKIT=${1:-.build/release/mlkit}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-32}
DOWNLOAD_CONNECTIONS=${DOWNLOAD_CONNECTIONS:-8}
WRK_THREADS=${WRK_THREADS:-1}
MODEL=trained/sentiment.mlkit

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }
[ -x "$MLKIT" ] || { echo "no mlkit binary at $MLKIT: swift build -c release --product mlkit" >&2; exit 1; }

DATA=$(mktemp -d -t mlkit-serve-bench.XXXXXX)
SERVER_PID=
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
    rm -rf "$DATA"
}
trap cleanup EXIT

TOKEN=$("$MLKIT" serve token create --data "$DATA/collections" --scope publish)
"$MLKIT" serve --data "$DATA/collections" --port 0 --log-level warning >"$DATA/serve.out" 2>"$DATA/serve.err" &
SERVER_PID=$!
for _ in $(seq 100); do grep -q "^listening on " "$DATA/serve.out" 2>/dev/null && break; sleep 0.1; done
BASE=$(sed -n 's/^listening on //p' "$DATA/serve.out")
[ -n "$BASE" ] || { echo "the server did not start:" >&2; cat "$DATA/serve.err" >&2; exit 1; }

auth=(-H "Authorization: Bearer $TOKEN")
curl -sf -X PUT "$BASE/v1/collections/sentiment" "${auth[@]}" \
    -d '{"description": "benchmark", "modelIdentifiers": ["polarity"]}' >/dev/null
SHA=$(curl -sf "$BASE/v1/models" "${auth[@]}" --data-binary "@$MODEL" | sed 's/.*"sha256":"\([0-9a-f]*\)".*/\1/')
curl -sf "$BASE/v1/collections/sentiment/deployments" "${auth[@]}" \
    -d "{\"models\": {\"polarity\": {\"sha256\": \"$SHA\", \"version\": \"1.0\"}}}" >/dev/null
curl -sf "$BASE/v1/collections/sentiment/deployments" "${auth[@]}" \
    -d "{\"models\": {\"polarity\": {\"sha256\": \"$SHA\", \"version\": \"1.1\"}}, \"targeting\": {\"languageCodes\": [\"en\"], \"osVersion\": \">=14\"}, \"rolloutPercentage\": 50}" >/dev/null

cat >"$DATA/resolve.lua" <<'LUA'
math.randomseed(42)
request = function()
  return wrk.format("GET", "/v1/collections/sentiment?languageCode=en-GB&deviceClass=phone&osVersion=17.4&installationID=" .. math.random(1, 1000000000))
end
LUA

server_cpu() { awk '{print ($14 + $15) / 100}' "/proc/$SERVER_PID/stat"; }

echo "machine: $(nproc) cores; mlkit: $MLKIT; model: $MODEL ($(stat -c %s "$MODEL") bytes)"
echo
echo "== GET /healthz (the same server's floor: routing and a fixed body, no resolution), $CONNECTIONS connections, ${DURATION}s"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
before=$(server_cpu)
wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency "$BASE/healthz"
after=$(server_cpu)
echo "server CPU: $(awk "BEGIN {print $after - $before}") s over ${DURATION} s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "== GET /v1/collections/sentiment (resolved collection), $CONNECTIONS connections, ${DURATION}s"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
curl -sf "$BASE/v1/collections/sentiment?languageCode=en" >/dev/null
before=$(server_cpu)
wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$DATA/resolve.lua" "$BASE"
after=$(server_cpu)
echo "server CPU: $(awk "BEGIN {print $after - $before}") s over ${DURATION} s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "== GET /v1/models/$SHA (download), $DOWNLOAD_CONNECTIONS connections, ${DURATION}s"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
before=$(server_cpu)
wrk -t"$WRK_THREADS" -c"$DOWNLOAD_CONNECTIONS" -d"${DURATION}s" --latency "$BASE/v1/models/$SHA"
after=$(server_cpu)
echo "server CPU: $(awk "BEGIN {print $after - $before}") s over ${DURATION} s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
