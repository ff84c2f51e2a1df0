#!/usr/bin/env bash
# The Core ML benchmark: mlkit's evaluator against onnxruntime on the reference model, in one
# interleaved run, release build (README.md).
#
#   bash Benchmarks/coreml/run.sh [--rounds 7] [--model PATH] [--out results.json]
#
# It needs the reference SentimentPolarity.mlmodel (../shared/seed-artifacts/ beside the
# checkout, or --model), makes the git-ignored venv .venv-coreml-bench from requirements.txt,
# builds CoreMLProbe in release mode, converts the model to ONNX in a temporary folder, and runs
# bench.py. With datasets/out/ built (datasets/README.md), it also measures the exports of every
# algorithm against the models (CoreMLProbe export).
set -euo pipefail
cd "$(dirname "$0")/../.."
model="../shared/seed-artifacts/SentimentPolarity.mlmodel"
arguments=()
while [ $# -gt 0 ]; do
    case "$1" in
        --model) model="$2"; shift 2 ;;
        *) arguments+=("$1"); shift ;;
    esac
done
[ -f "$model" ] || { echo "run.sh: no model at $model (pass --model PATH)" >&2; exit 66; }

venv=.venv-coreml-bench
if [ ! -x "$venv/bin/python" ] || ! cmp -s Benchmarks/coreml/requirements.txt "$venv/requirements.txt"; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q -r Benchmarks/coreml/requirements.txt
    cp Benchmarks/coreml/requirements.txt "$venv/requirements.txt"
fi
swift build -c release --package-path Benchmarks --product CoreMLProbe >&2
probe="$(swift build -c release --package-path Benchmarks --show-bin-path)/CoreMLProbe"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$venv/bin/python" Benchmarks/coreml/onnx_peer.py convert "$model" "$work/model.onnx"
"$venv/bin/python" Benchmarks/coreml/bench.py --probe "$probe" --python "$venv/bin/python" \
    --model "$model" --onnx "$work/model.onnx" ${arguments[@]+"${arguments[@]}"}

for name in vader-sentiment vader-sentiment-3 fortunes-topic; do
    if [ -f "datasets/out/$name.train.json" ]; then
        echo
        echo "exports on $name:"
        "$probe" export "datasets/out/$name.train.json" "datasets/out/$name.test.json"
    fi
done
