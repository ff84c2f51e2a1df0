"""Times mlkit's Core ML evaluator against onnxruntime, in alternation: see README.md.

    bench.py --probe PATH --python PATH --model MODEL.mlmodel --onnx MODEL.onnx [--rounds 7]
             [--calls N] [--peer-calls N] [--loads N] [TEXT...]

Each round runs `CoreMLProbe speed` and then `onnx_peer.py speed`, each in a fresh process, so
that both meet the same load on a shared machine. It prints every round, then the median over
the rounds of each figure and the ratio mlkit / onnxruntime (below 1: mlkit is faster), and
writes them as JSON with --out.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

TEXTS = ["I love rainbows", "I am sad on cloudy days"]


def run(command):
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--probe", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--onnx", required=True)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--loads", type=int, default=30)
    parser.add_argument("--calls", type=int, default=200000)
    parser.add_argument("--peer-calls", type=int, default=20000)
    parser.add_argument("--out")
    parser.add_argument("texts", nargs="*")
    arguments = parser.parse_args()
    texts = arguments.texts or TEXTS
    peer = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx_peer.py")
    rounds = []
    for round_index in range(arguments.rounds):
        mlkit = run([arguments.probe, "speed", arguments.model, "--loads", str(arguments.loads),
                     "--calls", str(arguments.calls)] + texts)
        onnx = run([arguments.python, peer, "speed", arguments.onnx, "--loads", str(arguments.loads),
                    "--calls", str(arguments.peer_calls)] + texts)
        load = os.getloadavg()[0]
        rounds.append({"mlkit": mlkit, "onnxruntime": onnx, "loadavg": load})
        print("round %d (load average %.1f): load %.2f / %.2f ms; " % (round_index + 1, load, mlkit["load_ms_median"],
              onnx["load_ms_median"]) + "; ".join("%s %.3f / %.2f us" % (text, mlkit["texts"][text]["text_us"],
                                                                          onnx["texts"][text]["text_us"]) for text in texts),
              flush=True)

    def median(side, key, text=None):
        values = [r[side]["texts"][text][key] if text else r[side][key] for r in rounds]
        return statistics.median(values)

    summary = {"rounds": len(rounds), "date": time.strftime("%Y-%m-%d"), "texts": {}}
    for key in ["load_ms_median", "load_ms_min"]:
        summary[key] = {"mlkit": median("mlkit", key), "onnxruntime": median("onnxruntime", key)}
        summary[key]["ratio"] = summary[key]["mlkit"] / summary[key]["onnxruntime"]
    for text in texts:
        entry = {}
        for key in ["text_us", "counts_us"]:
            entry[key] = {"mlkit": median("mlkit", key, text), "onnxruntime": median("onnxruntime", key, text)}
            entry[key]["ratio"] = entry[key]["mlkit"] / entry[key]["onnxruntime"]
        last = rounds[-1]
        entry["probabilities"] = {side: {label: value for label, value in last[side]["texts"][text].items()
                                         if not label.endswith("_us")} for side in ["mlkit", "onnxruntime"]}
        summary["texts"][text] = entry
    summary["loadavg"] = [r["loadavg"] for r in rounds]
    print()
    print("median over %d rounds         mlkit    onnxruntime   ratio" % len(rounds))
    for key, name in [("load_ms_median", "load (ms, median of loads)"), ("load_ms_min", "load (ms, fastest)")]:
        print("%-28s %8.3f %12.3f %9.3f" % (name, summary[key]["mlkit"], summary[key]["onnxruntime"], summary[key]["ratio"]))
    for text in texts:
        for key, name in [("text_us", "from the text (us)"), ("counts_us", "from word counts (us)")]:
            figures = summary["texts"][text][key]
            print("%-28s %8.3f %12.3f %9.3f   %s" % (name, figures["mlkit"], figures["onnxruntime"], figures["ratio"], text))
    if arguments.out:
        with open(arguments.out, "w") as handle:
            json.dump({"summary": summary, "rounds": rounds}, handle, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
