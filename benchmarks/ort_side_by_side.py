#!/usr/bin/python3
"""eulernpu (cpu_ref, float32) against ONNX Runtime on the real-model suite.

For each model of tests/real_models/models.json (fetched by
scripts/fetch_models.sh --ort, which also installs onnxruntime-node): its
first held-out sample, the model compiled for cpu_ref as the suite compiles
it, then at each thread count, for --rounds rounds, `eulernpu benchmark
--json` and benchmarks/ort_bench.js one after the other (interleaved, so
that a machine's slow spell hits both). Each figure is the median over the
rounds of each round's median latency; peak memory is each process's
largest resident set. Prints a table with the ratio eulernpu / ONNX Runtime
per model and thread count and their geometric mean (below 1.0: eulernpu
is faster), and with --json FILE writes every figure.

usage: /usr/bin/python3 benchmarks/ort_side_by_side.py [--eulernpu BIN]
           [--model ID]... [--threads 1,2] [--iterations 20] [--warmup 3]
           [--rounds 3] [--json FILE] [--write-docs]
"""
import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "real_models"))
import inputs  # noqa: E402
import suite  # noqa: E402


def cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def run_json(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} ...: exit {r.returncode}\n{r.stderr.strip()[-2000:]}")
    return json.loads(r.stdout)


def prepare(spec, eulernpu, tmp):
    """Compiles the model; returns (artifact, eulernpu input npz, ORT job inputs)."""
    sample = inputs.generate(spec, "heldout", 0)
    npz = os.path.join(tmp, "input.npz")
    np.savez(npz, **suite.runtime_inputs(spec, sample))
    ort_inputs = []
    for j, (name, a) in enumerate(sample.items()):
        f = os.path.join(tmp, f"in{j}.bin")
        a.astype(a.dtype.newbyteorder("<"), order="C").tofile(f)
        ort_inputs.append({"name": name, "dtype": a.dtype.name, "shape": list(a.shape), "file": f})
    art = os.path.join(tmp, "model.art")
    r = subprocess.run([eulernpu, "compile", "--model", suite.model_path(spec), *suite.compile_args(spec),
                        "--out", art], capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"compile failed:\n{r.stderr.strip()[-2000:]}")
    return art, npz, ort_inputs


def measure(spec, eulernpu, node, threads, args, tmp):
    art, npz, ort_inputs = prepare(spec, eulernpu, tmp)
    env = dict(os.environ, NODE_PATH=suite.ort_node_modules())
    rows = []
    for t in threads:
        job = os.path.join(tmp, f"job{t}.json")
        with open(job, "w", encoding="utf-8") as f:
            json.dump({"model": suite.model_path(spec), "threads": t, "iterations": args.iterations,
                       "warmup": args.warmup, "inputs": ort_inputs}, f)
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(run_json([eulernpu, "benchmark", "--artifact", art, "--input", npz, "--threads",
                                  str(t), "--iterations", str(args.iterations), "--warmup",
                                  str(args.warmup), "--json"]))
            theirs.append(run_json([node, os.path.join(HERE, "ort_bench.js"), job], env=env))
        e_ms = statistics.median(o["median_ms"] for o in ours)
        o_ms = statistics.median(o["median_ms"] for o in theirs)
        e_mem = max(o["peak_memory_bytes"] for o in ours)
        o_mem = max(o["peak_memory_bytes"] for o in theirs)
        rows.append({"model": spec["id"], "category": spec.get("category", ""), "threads": t,
                     "eulernpu_ms": e_ms, "ort_ms": o_ms, "ratio": e_ms / o_ms,
                     "eulernpu_peak_bytes": e_mem, "ort_peak_bytes": o_mem, "memory_ratio": e_mem / o_mem,
                     "ort_version": theirs[0]["ort_version"]})
    return rows


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


DOC = os.path.join(ROOT, "docs", "performance.md")
BEGIN, END = "<!-- ort-table:begin -->", "<!-- ort-table:end -->"


def write_docs(table):
    """Replaces the table between the markers of docs/performance.md."""
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(DOC + ".tmp", "w", encoding="utf-8") as f:
        f.write(head + BEGIN + "\n" + "\n".join(table) + "\n" + END + tail)
    os.replace(DOC + ".tmp", DOC)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--eulernpu", default=os.path.join(ROOT, "build", "bin", "eulernpu"))
    ap.add_argument("--model", action="append", default=[], help="only this model (repeatable)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", help="write every figure to this file")
    ap.add_argument("--write-docs", action="store_true",
                    help="put the table into docs/performance.md (between its markers)")
    args = ap.parse_args(argv)
    node = shutil.which("node")
    if node is None:
        ap.error("node is not installed (scripts/setup.sh installs npm, which brings it)")
    if not os.path.isdir(os.path.join(suite.ort_node_modules(), "onnxruntime-node")):
        ap.error(f"onnxruntime-node is not in {suite.ort_node_modules()}: run scripts/fetch_models.sh --ort")
    threads = [int(t) for t in args.threads.split(",")]
    models = [m for m in suite.load_models()["models"] if not args.model or m["id"] in args.model]
    rows, failed = [], []
    for spec in models:
        tmp = tempfile.mkdtemp(prefix=f"eulernpu-ort-{spec['id']}-")
        try:
            rows += measure(spec, args.eulernpu, node, threads, args, tmp)
        except RuntimeError as e:
            failed.append((spec["id"], str(e).splitlines()[0]))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for r in rows[-len(threads):] if rows and rows[-1]["model"] == spec["id"] else []:
            print(f"  {r['model']:22s} {r['threads']} thread(s): eulernpu {r['eulernpu_ms']:9.3f} ms, "
                  f"ONNX Runtime {r['ort_ms']:9.3f} ms, ratio {r['ratio']:.2f}", file=sys.stderr, flush=True)

    ort_version = rows[0]["ort_version"] if rows else "?"
    print(f"eulernpu cpu_ref float32 / ONNX Runtime {ort_version} (CPU provider, all graph optimizations), "
          f"median latency over {args.rounds} interleaved rounds of {args.iterations} runs; "
          f"{cpu_name()}, {os.cpu_count()} cores")
    print()
    head = "| model | " + " | ".join(f"{t} thread{'s' if t > 1 else ''}: eulernpu ms / ORT ms (ratio)"
                                     for t in threads) + " | peak MiB eulernpu / ORT (ratio) |"
    table = [head, "|" + "---|" * (len(threads) + 2)]
    for mid in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == mid]
        cells = [f"{r['eulernpu_ms']:.2f} / {r['ort_ms']:.2f} ({r['ratio']:.2f})" for r in mine]
        mem = max(mine, key=lambda r: r["memory_ratio"])
        cells.append(f"{mem['eulernpu_peak_bytes'] / 2**20:.0f} / {mem['ort_peak_bytes'] / 2**20:.0f} "
                     f"({mem['memory_ratio']:.2f})")
        table.append(f"| {mid} | " + " | ".join(cells) + " |")
    means = [f"{geomean([r['ratio'] for r in rows if r['threads'] == t]):.2f}" for t in threads]
    mem_mean = geomean([r["memory_ratio"] for r in rows])
    table.append("| geometric mean | " + " | ".join(f"({m})" for m in means) + f" | ({mem_mean:.2f}) |")
    print("\n".join(table))
    if args.write_docs and not failed:
        write_docs(table)
    for mid, why in failed:
        print(f"\n{mid}: not measured: {why}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"cpu": cpu_name(), "cores": os.cpu_count(), "rows": rows,
                       "failed": [{"model": m, "error": e} for m, e in failed]}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
