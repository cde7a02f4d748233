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
is faster), and with --json FILE writes every figure. Unless --no-int8, the
model is also calibrated on its suite calibration samples and compiled to
int8, and its int8 artifact benchmarked in the same rounds: the int8 column
is its latency and its ratio to eulernpu's own float32 latency, and the
calibration column the wall time of that whole `compile --calib-data-path`
command (one thread, as calibration runs by default; best of three) and its ratio to N
float32 runs (N the calibration samples, a run the 1-thread median). The
next column is what each sample adds: the same command with
--calib-samples 1 timed too, (t_N - t_1) / (N - 1) as a ratio to one
float32 run (the command's fixed part, parsing, lowering and writing, left
out).

usage: /usr/bin/python3 benchmarks/ort_side_by_side.py [--eulernpu BIN]
           [--model ID]... [--threads 1,2] [--iterations 20] [--warmup 3]
           [--rounds 5] [--no-int8] [--json FILE] [--write-docs]
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
import time

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


def prepare(spec, eulernpu, tmp, int8):
    """Compiles the model; returns (artifact, int8 artifact or None, eulernpu
    input npz, ORT job inputs, calibrating compile's wall seconds on all
    samples and on one, or None)."""
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
    q_art = None
    if int8:
        calib = os.path.join(tmp, "calib")
        inputs.write_samples(spec["id"], "calib", spec["calibration_samples"], calib)
        q_art = os.path.join(tmp, "model_int8.art")
        # Best of three, the two commands interleaved: a whole command's time
        # varies from run to run by more than one sample adds on the small
        # models.
        calib_s = [float("inf"), float("inf")]
        for _ in range(3):
            for k, (extra, out) in enumerate((([], q_art),
                                              (["--calib-samples", "1"], os.path.join(tmp, "one.art")))):
                t0 = time.monotonic()
                r = subprocess.run([eulernpu, "compile", "--model", suite.model_path(spec),
                                    *suite.compile_args(spec), "--calib-data-path", calib, *extra,
                                    "--out", out], capture_output=True, text=True, timeout=3600)
                calib_s[k] = min(calib_s[k], time.monotonic() - t0)
                if r.returncode != 0:
                    print(f"  {spec['id']}: {'no int8 artifact' if out == q_art else 'no one-sample compile'}: "
                          f"{r.stderr.strip().splitlines()[:1]}", file=sys.stderr)
                    if out == q_art:
                        q_art = None
                    calib_s = None  # no calibration figures without both times
                    break
            if calib_s is None:
                break
    return art, q_art, npz, ort_inputs, (calib_s if int8 else None)


def measure(spec, eulernpu, node, threads, args, tmp):
    art, q_art, npz, ort_inputs, calib_s = prepare(spec, eulernpu, tmp, not args.no_int8)
    env = dict(os.environ, NODE_PATH=suite.ort_node_modules())
    rows = []
    for t in threads:
        job = os.path.join(tmp, f"job{t}.json")
        with open(job, "w", encoding="utf-8") as f:
            json.dump({"model": suite.model_path(spec), "threads": t, "iterations": args.iterations,
                       "warmup": args.warmup, "inputs": ort_inputs}, f)
        ours, theirs, int8 = [], [], []
        bench = [eulernpu, "benchmark", "--input", npz, "--threads", str(t), "--iterations",
                 str(args.iterations), "--warmup", str(args.warmup), "--json", "--artifact"]
        for _ in range(args.rounds):
            ours.append(run_json(bench + [art]))
            theirs.append(run_json([node, os.path.join(HERE, "ort_bench.js"), job], env=env))
            if q_art:
                int8.append(run_json(bench + [q_art]))
        e_ms = statistics.median(o["median_ms"] for o in ours)
        o_ms = statistics.median(o["median_ms"] for o in theirs)
        e_mem = max(o["peak_memory_bytes"] for o in ours)
        o_mem = max(o["peak_memory_bytes"] for o in theirs)
        rows.append({"model": spec["id"], "category": spec.get("category", ""), "threads": t,
                     "eulernpu_ms": e_ms, "ort_ms": o_ms, "ratio": e_ms / o_ms,
                     "eulernpu_peak_bytes": e_mem, "ort_peak_bytes": o_mem, "memory_ratio": e_mem / o_mem,
                     "ort_version": theirs[0]["ort_version"]})
        if int8:
            q_ms = statistics.median(o["median_ms"] for o in int8)
            rows[-1].update({"int8_ms": q_ms, "int8_ratio": q_ms / e_ms})
        if calib_s is not None and t == 1:
            n = spec["calibration_samples"]
            all_s, one_s = calib_s
            per_sample = (all_s - one_s) / (n - 1) if n > 1 else float("nan")
            rows[-1].update({"calibrate_s": all_s, "calibrate_one_sample_s": one_s,
                             "calibration_samples": n,
                             "calibrate_ratio": all_s / (n * e_ms / 1000),
                             "calibrate_per_sample_ratio": per_sample / (e_ms / 1000)})
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
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-int8", action="store_true", help="float32 only: no int8 column")
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
    if isinstance(ort_version, dict):  # onnxruntime-node reports {"common": ..., "node": ...}
        ort_version = ort_version.get("common") or ort_version.get("node") or "?"
    print(f"eulernpu cpu_ref float32 / ONNX Runtime {ort_version} (CPU provider, all graph optimizations), "
          f"median latency over {args.rounds} interleaved rounds of {args.iterations} runs; "
          f"{cpu_name()}, {os.cpu_count()} cores")
    print()
    int8 = not args.no_int8
    head = "| model | " + " | ".join(f"{t} thread{'s' if t > 1 else ''}: eulernpu ms / ORT ms (ratio)"
                                     for t in threads) + " | peak MiB eulernpu / ORT (ratio) |"
    if int8:
        head += " " + " | ".join(f"int8 ms, {t} thread{'s' if t > 1 else ''} (/ float32)"
                                 for t in threads) + " |"
    calib = any("calibrate_s" in r for r in rows)
    if calib:
        head += " calibrate N samples: s (/ N float32 runs) | each sample adds (/ 1 float32 run) |"
    table = [head, "|" + "---|" * ((2 if int8 else 1) * len(threads) + 2 + (2 if calib else 0))]
    for mid in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == mid]
        cells = [f"{r['eulernpu_ms']:.2f} / {r['ort_ms']:.2f} ({r['ratio']:.2f})" for r in mine]
        mem = max(mine, key=lambda r: r["memory_ratio"])
        cells.append(f"{mem['eulernpu_peak_bytes'] / 2**20:.0f} / {mem['ort_peak_bytes'] / 2**20:.0f} "
                     f"({mem['memory_ratio']:.2f})")
        if int8:
            cells += [f"{r['int8_ms']:.2f} ({r['int8_ratio']:.2f})" if "int8_ms" in r else "—"
                      for r in mine]
        if calib:
            c = next((r for r in mine if "calibrate_s" in r), None)
            cells.append(f"N={c['calibration_samples']}: {c['calibrate_s']:.2f} "
                         f"({c['calibrate_ratio']:.1f})" if c else "—")
            if c and c["calibrate_per_sample_ratio"] <= 0:
                cells.append("(below timing noise)")
            else:
                cells.append(f"({c['calibrate_per_sample_ratio']:.1f})" if c else "—")
        table.append(f"| {mid} | " + " | ".join(cells) + " |")
    means = [f"{geomean([r['ratio'] for r in rows if r['threads'] == t]):.2f}" for t in threads]
    mem_mean = geomean([r["memory_ratio"] for r in rows])
    last = "| geometric mean | " + " | ".join(f"({m})" for m in means) + f" | ({mem_mean:.2f}) |"
    if int8:
        last += " " + " | ".join(
            f"({geomean([r['int8_ratio'] for r in rows if r['threads'] == t and 'int8_ratio' in r]):.2f})"
            for t in threads) + " |"
    if calib:
        last += f" ({geomean([r['calibrate_ratio'] for r in rows if 'calibrate_ratio' in r]):.1f}) |"
        # A negative or zero difference (timing noise on a tiny model) has no logarithm.
        each = [r["calibrate_per_sample_ratio"] for r in rows
                if r.get("calibrate_per_sample_ratio", 0) > 0]
        last += f" ({geomean(each):.1f}) |"
    table.append(last)
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
