#!/usr/bin/env bash
# A PostgreSQL cluster of its own, in a folder, listening on 127.0.0.1 on a free port, for the
# tests and the benchmarks. It never touches a system-wide cluster: its data, socket and log
# stay in FOLDER.
#
#   Benchmarks/server/postgres-cluster.sh start FOLDER [--durable] [--owner PID]
#       Creates the cluster in FOLDER/data if there is none (superuser `mlkit`, trust
#       authentication on loopback, no password), starts it (on the port it had before, or a
#       free one), and prints its port. Without --durable, the cluster skips fsync, as a test
#       cluster may (a commit is still written to the operating system before it returns).
#       With --owner, a watcher stops the cluster and removes FOLDER once process PID has
#       gone, so that a test run killed midway leaves nothing behind.
#   Benchmarks/server/postgres-cluster.sh stop FOLDER      stops it at once (pg_ctl stop -m immediate)
#   Benchmarks/server/postgres-cluster.sh remove FOLDER    stops it and removes FOLDER
#   Benchmarks/server/postgres-cluster.sh createdb FOLDER NAME
#
# initdb and postgres refuse to run as root: as root, the script runs them as the user
# `nobody` (or $MLKIT_POSTGRES_USER). The PostgreSQL binaries come from $MLKIT_POSTGRES_BIN,
# else from the newest /usr/lib/postgresql/*/bin (Debian's `postgresql` package), else PATH.
set -euo pipefail

# Close every inherited descriptor but the standard ones: postgres and the watcher outlive this
# script, and a descriptor they kept (such as the one a parent process watches to learn that
# this script has exited) would make the caller wait for them.
for fd in $(ls /proc/$$/fd 2>/dev/null); do
    if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
done

usage() { echo "usage: $0 start|stop|remove|createdb FOLDER [...]" >&2; exit 64; }
[ $# -ge 2 ] || usage
command=$1
folder=$2
shift 2

bin=${MLKIT_POSTGRES_BIN:-}
if [ -z "$bin" ]; then
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    if [ -z "$bin" ] && command -v initdb >/dev/null; then bin=$(dirname "$(command -v initdb)"); fi
fi
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
    echo "PostgreSQL's server binaries (initdb, pg_ctl) are missing: apt-get install -y postgresql" >&2
    exit 69
fi

# As root, run the server's programs as an unprivileged user.
as_owner=()
if [ "$(id -u)" -eq 0 ]; then
    as_owner=(runuser -u "${MLKIT_POSTGRES_USER:-nobody}" --)
fi
run() { "${as_owner[@]}" "$@"; }

data=$folder/data
socket=$folder/socket
log=$folder/postgres.log

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

stop() {
    if [ -f "$data/postmaster.pid" ]; then
        run "$bin/pg_ctl" stop -D "$data" -m immediate -w -t 60 >/dev/null 2>&1 || true
    fi
}

case $command in
start)
    durable=0
    owner=
    while [ $# -gt 0 ]; do
        case $1 in
        --durable) durable=1 ;;
        --owner) owner=$2; shift ;;
        *) usage ;;
        esac
        shift
    done
    mkdir -p "$folder"
    folder=$(cd "$folder" && pwd)
    data=$folder/data socket=$folder/socket log=$folder/postgres.log
    if [ ! -f "$data/PG_VERSION" ]; then
        mkdir -p "$data" "$socket"
        chmod 755 "$folder"
        chmod 700 "$data"
        if ! run test -x "$folder"; then
            echo "$folder: the user that runs postgres (${as_owner[*]:-$(id -un)}) cannot reach it; choose a folder whose parents it may enter" >&2
            exit 73
        fi
        touch "$log"
        if [ ${#as_owner[@]} -gt 0 ]; then chown "${MLKIT_POSTGRES_USER:-nobody}" "$data" "$socket" "$log"; fi
        nosync=(-N)
        [ "$durable" -eq 1 ] && nosync=()
        if ! run "$bin/initdb" -D "$data" -U mlkit -A trust -E UTF8 --locale=C "${nosync[@]}" >"$folder/initdb.log" 2>&1; then
            echo "initdb failed:" >&2
            cat "$folder/initdb.log" >&2
            exit 70
        fi
        {
            echo "listen_addresses = '127.0.0.1'"
            echo "unix_socket_directories = '$socket'"
            echo "max_connections = 300"
            if [ "$durable" -eq 0 ]; then
                # A commit still reaches the operating system before it returns, so stopping
                # postgres with `-m immediate` (as the outage test does) loses nothing.
                echo "fsync = off"
                echo "full_page_writes = off"
            fi
        } | run tee -a "$data/postgresql.conf" >/dev/null
    fi
    port=$(cat "$folder/port" 2>/dev/null || true)
    for attempt in 1 2 3 4 5; do
        [ -n "$port" ] || port=$(free_port)
        if run "$bin/pg_ctl" start -D "$data" -l "$log" -w -t 60 -o "-p $port" >/dev/null 2>&1; then
            echo "$port" >"$folder/port"
            if [ -n "$owner" ]; then
                # The watcher: once the owner has gone, stop the cluster and remove its folder.
                nohup bash -c "while kill -0 $owner 2>/dev/null; do sleep 2; done; \"\$0\" remove \"$folder\"" "$0" \
                    >/dev/null 2>&1 </dev/null &
            fi
            echo "$port"
            exit 0
        fi
        # The port may have been taken in the meantime; a saved one is given up after a try.
        port=
        sleep 0.2
    done
    echo "postgres did not start:" >&2
    tail -20 "$log" >&2
    exit 70
    ;;
stop)
    stop
    ;;
remove)
    stop
    rm -rf "$folder"
    ;;
createdb)
    [ $# -eq 1 ] || usage
    port=$(cat "$folder/port")
    "$bin/psql" -X -q -h 127.0.0.1 -p "$port" -U mlkit -d postgres -v ON_ERROR_STOP=1 \
        -c "CREATE DATABASE \"$1\"" >/dev/null
    ;;
*)
    usage
    ;;
esac
