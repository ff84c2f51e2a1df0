#!/usr/bin/env python3
"""Merge comparison result files into markdown tables and a PNG chart.

    python3 Benchmarks/compare/report.py results/compare.json [more.json ...] \
        --md results/report.md --png results/accuracy-vs-train-time.png \
        [--docs docs/benchmarks.md --png-link benchmarks/comparison.png]

Every input is a result JSON as written by compare.py (see results/README.md);
rows from later files replace rows with the same (dataset, method) from
earlier ones.  Rows whose method starts with "mlkit" are mlkit's; for each
of them the table adds a line with mlkit's ratio to the best peer on every
column (best = highest accuracy, macro-F1 and docs/s; lowest train time,
latency, RSS and model size).  The chart plots accuracy against training
time (log scale), one subplot per dataset, one point per method.

With --docs, the tables also replace what lies between the lines
`<!-- compare:begin -->` and `<!-- compare:end -->` in that markdown file
(the rest of the file is left as it is), with headings one level down and a
link to the chart (--png-link, relative to that file).

Relative paths are taken from the current directory.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

COLUMNS = [  # key, header, higher is better, format
    ("accuracy", "accuracy", True, "{:.4f}"),
    ("macro_f1", "macro-F1", True, "{:.4f}"),
    ("train_s", "train s", False, "{:.2f}"),
    ("predict_docs_per_s", "predict docs/s", True, "{:,.0f}"),
    ("latency_us", "latency µs", False, "{:,.1f}"),
    ("peak_rss_mb", "peak RSS MB", False, "{:,.0f}"),
    ("model_bytes", "model size", False, None),
]


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000.0
    return str(n)


def fmt(key: str, value) -> str:
    if value is None:
        return "–"
    for k, _, _, f in COLUMNS:
        if k == key:
            return human_bytes(value) if f is None else f.format(value)
    return str(value)


def ratio_text(key: str, value, best) -> str:
    """mlkit's value over the best peer's: 3 decimals for scores, else 2
    significant digits at least (0.0021× rather than 0.00×)."""
    if value is None or not best:
        return "–"
    r = value / best
    if key in ("accuracy", "macro_f1"):
        return f"{r:.3f}×"
    return f"{r:.2f}×" if r >= 0.1 else f"{r:.2g}×"


def is_mlkit(method: str) -> bool:
    return method.startswith("mlkit")


def load(paths: list[Path]) -> tuple[list[dict], dict[tuple[str, str], dict], dict]:
    docs, rows, baselines = [], {}, {}
    for p in paths:
        doc = json.loads(p.read_text(encoding="utf-8"))
        doc["_path"] = p.name
        docs.append(doc)
        baselines.update(doc.get("baselines", {}))
        for r in doc.get("rows", []):
            rows[(r["dataset"], r["method"])] = r
    return docs, rows, baselines


def machine_lines(docs: list[dict]) -> list[str]:
    out = []
    for d in docs:
        m = d.get("machine", {})
        pk = ", ".join(f"{k} {v}" for k, v in m.get("packages", {}).items())
        mlkit = d.get("mlkit")
        reps = d.get("reps", "?")
        if reps == 1:
            reps = "1 repetition"
        elif "repeat_below_s" in d:
            reps = f"up to {reps} repetitions (repeated while one takes under {d['repeat_below_s']:g} s)"
        else:
            reps = f"{reps} repetitions"
        setup = (f", setup (venv, datasets, release build) {d['setup_s']:.0f} s"
                 if d.get("setup_s") is not None else "")
        cpu = sum(rep.get("child_cpu_s", 0) for r in d.get("rows", []) for rep in r.get("reps", []))
        if cpu:
            setup += f", CPU time of the measured children {cpu / 60:.1f} min"
        out.append(f"* `{d['_path']}` ({d.get('created_utc', '?')}, "
                   f"{'quick, ' if d.get('quick') else ''}{reps}, "
                   f"{d.get('latency_calls', '?')} latency calls, comparison wall "
                   f"{d.get('wall_s', '?')} s{setup}): {m.get('cpu', '?')}, "
                   f"{m.get('cores', '?')} cores, {m.get('memory_gib', '?')} GiB, "
                   f"{m.get('os', '?')}, Python {m.get('python', '?')}; {pk}"
                   + (f"; mlkit {mlkit.get('commit', '?')}, {mlkit.get('swift', '?')}, "
                      f"release build" if mlkit else "") + ". "
                   f"Load average (1/5/15 min) at start {m.get('load_avg_start')}, "
                   f"at end {m.get('load_avg_end')}.")
    return out


def dataset_table(ds: str, rows: list[dict], baseline: dict | None) -> list[str]:
    out = [f"## {ds}", ""]
    if baseline:
        out += [f"{baseline['n_train']:,} train / {baseline['n_test']:,} test documents, "
                f"{baseline['n_labels']} labels. A child that only loads the data peaks "
                f"at {baseline['peak_rss_mb']:.0f} MB RSS.", ""]
    out.append("| method | " + " | ".join(h for _, h, _, _ in COLUMNS) + " | load (1 min) |")
    out.append("| --- | " + " | ".join("---:" for _ in COLUMNS) + " | ---: |")
    ok = [r for r in rows if "error" not in r]
    peers = [r for r in ok if not is_mlkit(r["method"])]
    best = {}
    for key, _, higher, _ in COLUMNS:
        vals = [r[key] for r in peers if r.get(key) is not None]
        if vals:
            best[key] = max(vals) if higher else min(vals)
    for r in sorted(rows, key=lambda r: is_mlkit(r["method"])):   # run order, mlkit last
        load = r.get("load_avg", [None])[0]
        if "error" in r:
            out.append(f"| {r['method']} | failed: {r['error']} |" + " |" * len(COLUMNS))
            continue
        cells = []
        for key, _, higher, _ in COLUMNS:
            cell = fmt(key, r.get(key))
            if not is_mlkit(r["method"]) and best.get(key) == r.get(key):
                cell = f"**{cell}**"
            cells.append(cell)
        out.append(f"| {r['method']} | " + " | ".join(cells) +
                   f" | {load if load is not None else '–'} |")
        if is_mlkit(r["method"]) and best:
            ratios = []
            for key, _, _, _ in COLUMNS:
                v, b = r.get(key), best.get(key)
                ratios.append(ratio_text(key, v, b))
            out.append(f"| ↳ {r['method']} ÷ best peer | " + " | ".join(ratios) + " | |")
    notes = []
    for r in ok:
        n = r.get("notes", {})
        if "ftz_bytes" in n:
            notes.append(f"{r['method']} quantized to .ftz (qnorm, retrain, cutoff 100000): "
                         f"{human_bytes(n['ftz_bytes'])}, accuracy {n['ftz_accuracy']:.4f}, "
                         f"macro-F1 {n['ftz_macro_f1']:.4f}, quantize {n['quantize_s']:.0f} s, "
                         f"peak RSS {n.get('ftz_peak_rss_mb', 0):.0f} MB")
        if n.get("converged") is False:
            notes.append(f"{r['method']}: did not converge (n_iter {n.get('n_iter')})")
        if is_mlkit(r["method"]) and "algorithm" in n:
            text = (f"{r['method']}: {n['algorithm']} ({n.get('settings', '')}); batch "
                    f"prediction on {n.get('threads', '?')} threads, "
                    f"{float(n['predict_docs_per_s_1_thread']):,.0f} docs/s on one; "
                    f"model load {float(n['load_ms']):,.1f} ms")
            if "cli_evaluate_accuracy" in n:
                same = abs(n["cli_evaluate_accuracy"] - r["accuracy"]) < 1e-4
                text += (f"; `mlkit evaluate` on the same file: accuracy "
                         f"{n['cli_evaluate_accuracy']:.4f}" + ("" if same else " (differs!)"))
            notes.append(text)
    if notes:
        out += [""] + [f"* {x}" for x in notes]
    return out + [""]


def chart(path: Path, by_ds: dict[str, list[dict]]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    names = list(by_ds)
    ncols = min(3, len(names))
    nrows = math.ceil(len(names) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(max(5.2 * ncols, 7), 4.4 * nrows), squeeze=False)
    families = {  # method prefix -> (legend name, colour, marker)
        "mlkit": ("mlkit", "C3", "*"), "sklearn": ("scikit-learn", "C0", "o"),
        "fasttext": ("fastText", "C1", "s"), "vw": ("Vowpal Wabbit", "C2", "^")}
    seen = set()
    for ax, ds in zip(axes.flat, names):
        for r in by_ds[ds]:
            if "error" in r or not r.get("train_s"):
                continue
            family = r["method"].split("-", 1)[0]
            legend, colour, marker = families.get(family, (family, "C7", "D"))
            ax.scatter(r["train_s"], r["accuracy"], s=90 if family == "mlkit" else 40,
                       marker=marker, color=colour, zorder=3,
                       label=legend if legend not in seen else None)
            seen.add(legend)
            short = r["method"].split("-", 1)[1] if "-" in r["method"] else r["method"]
            ax.annotate(short, (r["train_s"], r["accuracy"]), fontsize=7,
                        xytext=(4, 3), textcoords="offset points", color=colour)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.margins(x=0.25, y=0.1)
        ax.set_title(ds, fontsize=10)
        ax.set_xlabel("training time (s, log scale)")
        ax.set_ylabel("test accuracy")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.suptitle("Test accuracy against training time (best of repetitions); up and left is better",
                 fontsize=11)
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.06 / nrows, 1, 1 - 0.06 / nrows))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


BEGIN, END = "<!-- compare:begin -->", "<!-- compare:end -->"


def replace_block(path: Path, block: str) -> None:
    """Replace the text between the BEGIN and END lines of path (atomically)."""
    text = path.read_text(encoding="utf-8")
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{path}: no '{BEGIN}' ... '{END}' block to replace")
    new = (text[:start + len(BEGIN)] + "\n<!-- Generated by Benchmarks/compare/run.sh "
           "(report.py): do not edit by hand. -->\n\n" + block + "\n" + text[end:])
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(new, encoding="utf-8")
    tmp.replace(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", type=Path, help="result JSON files")
    ap.add_argument("--md", type=Path, help="markdown output (default: print to stdout)")
    ap.add_argument("--png", type=Path, help="chart output (PNG)")
    ap.add_argument("--docs", type=Path, help="markdown file whose compare:begin/end block "
                    "is replaced by the tables")
    ap.add_argument("--png-link", help="the chart's path relative to --docs")
    args = ap.parse_args()

    docs, rows, baselines = load(args.inputs)
    by_ds: dict[str, list[dict]] = {}
    for (ds, _), r in rows.items():
        by_ds.setdefault(ds, []).append(r)

    body = ["Best of the repetitions for training time and docs/s, the first repetition's "
            "median for latency; bold = best peer in the column; "
            "↳ rows: mlkit's value divided by the best peer's (above 1 is better for "
            "accuracy, macro-F1 and docs/s, below 1 for the rest). "
            "Timings are noisy on a shared machine: see the load averages.", "",
            *machine_lines(docs), ""]
    for ds in by_ds:
        body += dataset_table(ds, by_ds[ds], baselines.get(ds))
    lines = ["# Text classification: peers" +
             (" and mlkit" if any(is_mlkit(m) for _, m in rows) else ""), "", *body]
    text = "\n".join(lines)
    if args.docs:
        block = [line[:1] + line if line.startswith("## ") else line for line in body]
        if args.png_link:
            block[:0] = [f"![Accuracy against training time, one point per method]"
                         f"({args.png_link})", ""]
        replace_block(args.docs, "\n".join(block).rstrip("\n") + "\n")
        print(f"updated {args.docs}")
    if args.md:
        args.md.parent.mkdir(parents=True, exist_ok=True)
        args.md.write_text(text, encoding="utf-8")
        print(f"wrote {args.md}")
    else:
        print(text)
    if args.png:
        chart(args.png, by_ds)
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
