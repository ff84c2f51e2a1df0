#!/usr/bin/env bash
# Side-by-side comparison of mlkit with peer text classifiers, in one command:
#
#   bash Benchmarks/compare/run.sh            # full run: every dataset, 3 repetitions
#   bash Benchmarks/compare/run.sh --quick    # smoke run: 2 small datasets, 1 repetition
#   bash Benchmarks/compare/run.sh --datasets fortunes-topic --methods fasttext-tuned
#
# Arguments go to peers.py (see `peers.py --help`; do not pass --out, this
# script names the files).  Steps:
#   1. create/update the venv Benchmarks/compare/.venv from requirements.txt
#      (git-ignored; re-installed when requirements.txt changes);
#   2. build the datasets into datasets/out/ if any is missing;
#   3. run the peers (peers.py), then mlkit (run_mlkit, below);
#   4. merge the results into results/report-<time>.md and a chart
#      results/chart-<time>.png (report.py).
# Environment: PYTHON (interpreter for the venv, default python3; the pins
# are for CPython 3.11).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="$HERE/.venv"
PY="$VENV/bin/python"
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
RESULTS="$HERE/results"
PEERS_OUT="$RESULTS/peers-$STAMP.json"
MLKIT_OUT="$RESULTS/mlkit-$STAMP.json"
DATASETS=(vader-sentiment vader-sentiment-3 fortunes-topic fortunes-language debian-sections)

log() { printf '\n== %s\n' "$*"; }

setup_venv() {
    local python="${PYTHON:-python3}" want have
    want="$(sha256sum "$HERE/requirements.txt" | cut -d' ' -f1)"
    have="$(cat "$VENV/.requirements.sha256" 2>/dev/null || true)"
    if [[ -x "$PY" && "$want" == "$have" ]]; then
        log "venv up to date ($VENV)"
        return
    fi
    log "installing requirements into $VENV"
    "$python" -c 'import sys; v = sys.version_info[:2]; v == (3, 11) or print(
        f"warning: pins are for Python 3.11, this is {v[0]}.{v[1]}", file=sys.stderr)'
    [[ -x "$PY" ]] || "$python" -m venv "$VENV"
    "$PY" -m pip install --quiet --upgrade pip
    "$PY" -m pip install --quiet -r "$HERE/requirements.txt"
    echo "$want" > "$VENV/.requirements.sha256"
}

build_datasets() {
    local ds missing=0
    for ds in "${DATASETS[@]}"; do
        [[ -f "$REPO/datasets/out/$ds.train.json" && -f "$REPO/datasets/out/$ds.test.json" ]] || missing=1
    done
    if (( missing )); then
        log "building datasets (bash datasets/build_all.sh)"
        bash "$REPO/datasets/build_all.sh"
    else
        log "datasets present in datasets/out/"
    fi
}

run_peers() {
    log "peers -> ${PEERS_OUT#"$REPO/"}"
    "$PY" "$HERE/peers.py" --out "$PEERS_OUT" "$@"
}

# ---------------------------------------------------------------------------
# run_mlkit: THE MLKIT SIDE GOES HERE (not wired yet).
#
# To do: build mlkit in release mode (swift build -c release), then for every
# dataset run `mlkit train` on datasets/out/NAME.train.json and
# `mlkit evaluate` on NAME.test.json, best of 3 for every timing, one process
# per run for peak RSS, and write "$MLKIT_OUT" in the same format as
# peers.py's output (results/README.md): rows with method names starting with
# "mlkit" so that report.py computes mlkit's ratio to the best peer.
# Arguments: the same ones peers.py got ("$@", e.g. --quick / --datasets).
# ---------------------------------------------------------------------------
run_mlkit() {
    log "mlkit"
    echo "mlkit: not yet wired"
}

make_report() {
    local inputs=("$PEERS_OUT")
    [[ -f "$MLKIT_OUT" ]] && inputs+=("$MLKIT_OUT")
    log "report"
    "$PY" "$HERE/report.py" "${inputs[@]}" \
        --md "$RESULTS/report-$STAMP.md" --png "$RESULTS/chart-$STAMP.png"
}

main() {
    local t0=$SECONDS
    setup_venv
    build_datasets
    run_peers "$@"
    run_mlkit "$@"
    make_report
    log "done in $(( SECONDS - t0 )) s"
}

main "$@"
