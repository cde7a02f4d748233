"""Wall time of a sharded calibration on this machine against one process,
on a real model of the suite (tests/real_models) and its calibration set:

  baseline   eulernpu calibrate --shard 0/1          (one process, every sample)
  N shards   eulernpu calibrate --shard K/N, N processes at once (the
             merge is part of quantize --calib-stats, a read of N files)

Each configuration runs with --threads 1 per process, so N shards use N
cores. Prints the wall time of each, its ratio to the baseline, and checks
that the statistics the shards merge into give the baseline's artifact
byte for byte.

    /usr/bin/python3 benchmarks/scale_out.py [--model det_ppocrv4] [--shards 2,3] [--samples N]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "real_models"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cli"))
import inputs  # noqa: E402
import suite  # noqa: E402
from harness import EULERNPU  # noqa: E402


def run_all(cmds):
    """Starts every command at once; returns the wall time until all ended."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for c in cmds]
    for p, c in zip(procs, cmds):
        err = p.communicate()[1]
        if p.returncode != 0:
            sys.exit(f"{' '.join(c)} failed:\n{err}")
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="det_ppocrv4", help="a model id of tests/real_models")
    ap.add_argument("--shards", default="2,3")
    ap.add_argument("--samples", type=int, default=0, help="calibration samples (0: the suite's)")
    # One pass: a preset of two (best) shards its second pass separately.
    ap.add_argument("--preset", default="default", choices=["default", "fast", "entropy", "mse"])
    args = ap.parse_args()
    spec = inputs.model_spec(args.model)
    count = args.samples or spec["calibration_samples"]
    tmp = tempfile.mkdtemp(prefix="eulernpu-scale-out-")
    try:
        calib = os.path.join(tmp, "calib")
        inputs.write_samples(spec["id"], "calib", count, calib)
        common = ["--model", suite.model_path(spec), *suite.compile_args(spec),
                  "--calib-data-path", calib, "--preset", args.preset, "--threads", "1"]
        base = [EULERNPU, "-q", "calibrate", *common]
        print(f"model {spec['id']}, {count} calibration samples, preset {args.preset}, "
              f"{os.cpu_count()} cores")
        t1 = run_all([base + ["--out", os.path.join(tmp, "one.calib")]])
        print(f"{'processes':>9s} {'wall s':>8s} {'ratio':>6s}")
        print(f"{1:9d} {t1:8.2f} {1.0:6.2f}")
        for n in [int(x) for x in args.shards.split(",")]:
            parts = [os.path.join(tmp, f"p{n}.{k}.calib") for k in range(n)]
            tn = run_all([base + ["--shard", f"{k}/{n}", "--out", parts[k]] for k in range(n)])
            # The shards' statistics and the one process's give the same artifact.
            qa, qb = os.path.join(tmp, f"a{n}.mxq"), os.path.join(tmp, f"b{n}.mxq")
            q = [EULERNPU, "-q", "quantize", *common, "--sensitivity-samples", "0"]
            run_all([q + ["--calib-stats", *parts, "--out", qa]])
            run_all([q + ["--calib-stats", os.path.join(tmp, "one.calib"), "--out", qb]])
            with open(qa, "rb") as a, open(qb, "rb") as b:
                same = a.read() == b.read()
            print(f"{n:9d} {tn:8.2f} {tn / t1:6.2f}  artifact {'identical' if same else 'DIFFERS'}")
            if not same:
                sys.exit(1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
