#!/usr/bin/env bash
# Side-by-side comparison of mlkit with peer text classifiers, in one command:
#
#   bash Benchmarks/compare/run.sh            # full run: every dataset and method (< 30 min on 2 cores)
#   bash Benchmarks/compare/run.sh --quick    # smoke run: vader-sentiment only, 1 repetition (< 3 min)
#   bash Benchmarks/compare/run.sh --datasets fortunes-topic --methods fasttext-tuned mlkit-svm
#
# Arguments go to compare.py (see `compare.py --help`), except --no-docs, which
# run.sh takes for itself.  Steps:
#   1. create/update the venv Benchmarks/compare/.venv from requirements.txt
#      (git-ignored; re-installed only when requirements.txt changes);
#   2. build the datasets into datasets/out/ if any is missing;
#   3. build mlkit in release mode (the mlkit product, and MLKitProbe of the Benchmarks package);
#   4. run every method, peers then mlkit, dataset by dataset (compare.py):
#      results/compare-<time>.json;
#   5. write results/report-<time>.md and results/chart-<time>.png (report.py).
#      A full run (no --quick, --datasets or --methods, and no --no-docs) also
#      regenerates the comparison block of docs/benchmarks.md and the chart
#      docs/benchmarks/comparison.png that the README links to.
# Environment: PYTHON (interpreter for the venv, default python3; the pins
# are for CPython 3.11).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="$HERE/.venv"
PY="$VENV/bin/python"
STAMP="$(date -u +%Y%m%dT%H%M%SZ)"
RESULTS="$HERE/results"
OUT="$RESULTS/compare-$STAMP.json"
DATASETS=(vader-sentiment vader-sentiment-3 fortunes-topic fortunes-language debian-sections wordnet-lexnames wordnet-hypernyms)
BIN="$REPO/.build/release"
PROBE="$REPO/Benchmarks/.build/release/MLKitProbe"

log() { printf '\n== %s (%s, load %s)\n' "$*" "$(date -u +%H:%M:%S)" "$(cut -d' ' -f1-3 /proc/loadavg)"; }

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

build_mlkit() {
    log "building mlkit in release mode (swift build -c release)"
    # MLKitProbe lives in the Benchmarks package, which builds mlkit's library again in its own .build.
    (cd "$REPO" && swift build -c release --package-path Benchmarks --product MLKitProbe \
        && swift build -c release --product mlkit)
}

run_compare() {
    log "comparison -> ${OUT#"$REPO/"}"
    "$PY" "$HERE/compare.py" --out "$OUT" --mlkit-probe "$PROBE" --mlkit-cli "$BIN/mlkit" \
        --setup-seconds "$1" "${@:2}"
}

make_report() {
    local docs=("$@")
    log "report"
    "$PY" "$HERE/report.py" "$OUT" --md "$RESULTS/report-$STAMP.md" --png "$RESULTS/chart-$STAMP.png" \
        "${docs[@]}"
}

main() {
    local t0=$SECONDS arg publish=1 args=()
    for arg in "$@"; do
        case "$arg" in
            --no-docs) publish=0; continue ;;
            --quick|--datasets|--methods|--datasets=*|--methods=*) publish=0 ;;
        esac
        args+=("$arg")
    done
    setup_venv
    build_datasets
    build_mlkit
    run_compare "$(( SECONDS - t0 ))" "${args[@]}"
    if (( publish )); then
        make_report --docs "$REPO/docs/benchmarks.md" --png-link benchmarks/comparison.png
        mkdir -p "$REPO/docs/benchmarks"
        cp "$RESULTS/chart-$STAMP.png" "$REPO/docs/benchmarks/comparison.png"
        log "updated docs/benchmarks.md and docs/benchmarks/comparison.png"
    else
        make_report
    fi
    log "done in $(( SECONDS - t0 )) s"
}

main "$@"
