#!/usr/bin/env bash
# The collection server on PostgreSQL: resolutions per second and latency for one SQLite
# server, one PostgreSQL replica and two PostgreSQL replicas behind nginx; download throughput
# from a replica's warm cache and cold from the database; and the time from a publish call's
# return until the other replica serves the change.
#
#   Benchmarks/server/replicas.sh [path/to/mlkit]   (default: .build/release/mlkit)
#
# Needs wrk, nginx, curl and PostgreSQL's server binaries (Debian: wrk nginx curl postgresql).
# PostgreSQL runs in a cluster of its own in a temporary folder (postgres-cluster.sh beside this,
# durable: fsync on), nginx with deploy/nginx/mlkit.conf. Environment: DURATION (seconds per
# wrk run, default 10), CONNECTIONS (default 32), ROUNDS (interleaved rounds, default 2).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
MLKIT=$(realpath "${1:-.build/release/mlkit}")
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-32}
ROUNDS=${ROUNDS:-2}
for tool in wrk nginx curl python3; do
    command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || { echo "$tool is missing" >&2; exit 1; }
done
[ -x "$MLKIT" ] || { echo "no mlkit binary at $MLKIT: swift build -c release --product mlkit" >&2; exit 1; }

WORK=$(mktemp -d -t mlkit-replicas-bench.XXXXXX)
chmod 755 "$WORK"
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
    bash Benchmarks/server/postgres-cluster.sh remove "$WORK/pg" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

PGPORT=$(bash Benchmarks/server/postgres-cluster.sh start "$WORK/pg" --durable)
bash Benchmarks/server/postgres-cluster.sh createdb "$WORK/pg" bench
DB="postgres://mlkit@127.0.0.1:$PGPORT/bench?sslmode=disable"

# start NAME PORT [--database URL]: a server in the background; prints nothing.
start() {
    local name=$1 port=$2
    shift 2
    "$MLKIT" serve --data "$WORK/$name" --port "$port" --log-level warning "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    PIDS+=($!)
    for _ in $(seq 200); do grep -q "^listening on " "$WORK/$name.out" 2>/dev/null && return; sleep 0.05; done
    echo "$name did not start:" >&2; cat "$WORK/$name.err" >&2; exit 1
}

SQLITE_PORT=$(free_port); R1_PORT=$(free_port); R2_PORT=$(free_port); LB_PORT=$(free_port)
SQLITE_TOKEN=$("$MLKIT" serve token create --data "$WORK/sqlite" --scope publish)
PG_TOKEN=$("$MLKIT" serve token create --database "$DB" --scope publish)
start sqlite "$SQLITE_PORT"
start r1 "$R1_PORT" --database "$DB"
start r2 "$R2_PORT" --database "$DB"

# nginx with the committed configuration, its addresses replaced.
sed -e "s|^\( *\)listen .*|\1listen 127.0.0.1:$LB_PORT;|" \
    -e "/server 127.0.0.1:8082/d" \
    -e "s|server 127.0.0.1:8081 \(.*\)|server 127.0.0.1:$R1_PORT \1\n    server 127.0.0.1:$R2_PORT \1|" \
    deploy/nginx/mlkit.conf >"$WORK/site.conf"
cat >"$WORK/nginx.conf" <<EOF
$([ "$(id -u)" -eq 0 ] && echo "user nobody nogroup;")
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $WORK/nginx-body;
    proxy_temp_path $WORK/nginx-proxy;
    include $WORK/site.conf;
}
EOF
/usr/sbin/nginx -p "$WORK" -c "$WORK/nginx.conf"

publish() { # BASE TOKEN: a collection with a default and a 50% targeted deployment; prints the model's SHA-256
    local base=$1 token=$2 sha
    local auth=(-H "Authorization: Bearer $token")
    curl -sf -X PUT "$base/v1/collections/sentiment" "${auth[@]}" \
        -d '{"description": "benchmark", "modelIdentifiers": ["polarity"]}' >/dev/null
    sha=$(curl -sf "$base/v1/models" "${auth[@]}" --data-binary "@trained/sentiment.mlkit" | sed 's/.*"sha256":"\([0-9a-f]*\)".*/\1/')
    curl -sf "$base/v1/collections/sentiment/deployments" "${auth[@]}" \
        -d "{\"models\": {\"polarity\": {\"sha256\": \"$sha\", \"version\": \"1.0\"}}}" >/dev/null
    curl -sf "$base/v1/collections/sentiment/deployments" "${auth[@]}" \
        -d "{\"models\": {\"polarity\": {\"sha256\": \"$sha\", \"version\": \"1.1\"}}, \"targeting\": {\"languageCodes\": [\"en\"]}, \"rolloutPercentage\": 50}" >/dev/null
    echo "$sha"
}
SQLITE=http://127.0.0.1:$SQLITE_PORT R1=http://127.0.0.1:$R1_PORT R2=http://127.0.0.1:$R2_PORT LB=http://127.0.0.1:$LB_PORT
publish "$SQLITE" "$SQLITE_TOKEN" >/dev/null
SHA=$(publish "$R1" "$PG_TOKEN")

cat >"$WORK/resolve.lua" <<'LUA'
math.randomseed(42)
request = function()
  return wrk.format("GET", "/v1/collections/sentiment?languageCode=en-GB&deviceClass=phone&osVersion=17.4&installationID=" .. math.random(1, 1000000000))
end
LUA

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); mlkit: $MLKIT"
echo
echo "== resolutions: GET /v1/collections/sentiment, $CONNECTIONS connections, ${DURATION}s a run, $ROUNDS interleaved rounds"
for round in $(seq "$ROUNDS"); do
    for target in "sqlite $SQLITE" "postgres-1 $R1" "postgres-2-nginx $LB"; do
        set -- $target
        out=$(wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$WORK/resolve.lua" "$2")
        rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
        p50=$(echo "$out" | awk '$1 == "50%" {print $2}')
        p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
        errors=$(echo "$out" | awk '/Non-2xx|Socket errors/ {print}' | tr '\n' ' ')
        echo "round $round  $1: $rps req/s, p50 $p50, p99 $p99 (load $(cut -d' ' -f1 /proc/loadavg)) $errors"
    done
done

echo
echo "== downloads of the $(stat -c %s trained/sentiment.mlkit)-byte model from replica 2"
ms() { echo $(( $(date +%s%N) / 1000000 )); }
for round in 1 2 3; do
    rm -f "$WORK/r2/cache/$SHA"
    t0=$(ms); curl -sf -o /dev/null "$R2/v1/models/$SHA"; t1=$(ms)
    curl -sf -o /dev/null "$R2/v1/models/$SHA"; t2=$(ms)
    echo "round $round: cold (from PostgreSQL into the cache) $((t1 - t0)) ms, warm (from the cache) $((t2 - t1)) ms"
done
out=$(wrk -t1 -c8 -d"${DURATION}s" "$R2/v1/models/$SHA")
echo "warm cache, 8 connections, wrk: $(echo "$out" | awk '/Transfer\/sec/ {print $2}')/s"

echo
echo "== publish to visible: activate through replica 1, poll replica 2 until it serves the change (20 times)"
auth=(-H "Authorization: Bearer $PG_TOKEN")
IDS=()
for version in a b; do
    IDS+=("$(curl -sf "$R1/v1/collections/sentiment/deployments" "${auth[@]}" \
        -d "{\"models\": {\"polarity\": {\"sha256\": \"$SHA\", \"version\": \"$version\"}}, \"activate\": false}" \
        | sed 's/.*"deploymentID":"\([^"]*\)".*/\1/')")
done
delays=()
for i in $(seq 20); do
    id=${IDS[$((i % 2))]}
    curl -sf -X POST "$R1/v1/collections/sentiment/deployments/$id/activate" "${auth[@]}" >/dev/null
    t0=$(date +%s%N)
    polls=0
    until curl -sf "$R2/v1/collections/sentiment?installationID=x" | grep -q "\"deploymentID\":\"$id\""; do polls=$((polls + 1)); done
    t1=$(date +%s%N)
    delays+=("$(( (t1 - t0) / 1000 ))us/$polls")
done
echo "delay (microseconds until replica 2's answer arrived / polls that missed): ${delays[*]}"
