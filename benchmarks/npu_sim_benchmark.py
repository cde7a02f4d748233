"""npu_sim on a ResNet-50-sized int8 graph: how long the cycle estimate
takes (planning at compile time, the report at run time) and how the
functional simulation compares with cpu_ref's int8 run of the same model.
Every figure is a median of wall-clock times of whole eulernpu commands
measured in this script, and each ratio compares two of them.

    /usr/bin/python3 benchmarks/npu_sim_benchmark.py [--eulernpu BIN] [--repeat N]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(cmd, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eulernpu", default=os.path.join(HERE, "..", "build", "bin", "eulernpu"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--device", default="npu8")
    args = ap.parse_args()
    exe = os.path.abspath(args.eulernpu)
    tmp = tempfile.mkdtemp(prefix="eulernpu-npu-bench-")
    try:
        model, calib = os.path.join(tmp, "resnet50.onnx"), os.path.join(tmp, "calib")
        subprocess.run([sys.executable, os.path.join(HERE, "make_resnet50.py"), model,
                        "--calib", calib, "2"], check=True)
        np.savez(os.path.join(tmp, "input.npz"),
                 input=np.load(os.path.join(calib, "sample_000.npy")))
        qir = os.path.join(tmp, "resnet50.int8.mblt")
        cpu = os.path.join(tmp, "cpu_ref.int8")
        subprocess.run([exe, "compile", "--model", model, "--calib-data-path", calib,
                        "--sensitivity-samples", "0", "--save-quantized-ir", qir, "--out", cpu],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        npu = os.path.join(tmp, "npu_sim.int8")
        inp = os.path.join(tmp, "input.npz")
        # The model's size as the docs quote it: NPU ops and MACs of its plan.
        report = os.path.join(tmp, "estimate.json")
        subprocess.run([exe, "compile", "--mblt", qir, "--backend", "npu_sim", "--target-device",
                        args.device, "--out", npu], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        subprocess.run([exe, "run", "--artifact", npu, "--estimate-only", "--report", report],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(report) as f:
            est = json.load(f)
        npu_ops = sum(1 for op in est["ops"] if op["unit"] == "npu")
        print(f"ResNet-50 int8: {npu_ops} NPU ops, {est['totals']['macs'] / 1e9:.2f} G MACs")
        rows = []
        for mode in ("single", "global4"):
            compile_cpu = timed([exe, "compile", "--mblt", qir, "--out", cpu], args.repeat)
            compile_npu = timed([exe, "compile", "--mblt", qir, "--backend", "npu_sim",
                                 "--target-device", args.device, "--inference-scheme", mode,
                                 "--out", npu], args.repeat)
            estimate = timed([exe, "run", "--artifact", npu, "--estimate-only"], args.repeat)
            run_cpu = timed([exe, "run", "--artifact", cpu, "--input", inp, "--out",
                             os.path.join(tmp, "cpu.npz")], args.repeat)
            run_npu = timed([exe, "run", "--artifact", npu, "--input", inp, "--out",
                             os.path.join(tmp, "npu.npz")], args.repeat)
            rows.append((mode, compile_cpu, compile_npu, estimate, run_cpu, run_npu))
        print(f"ResNet-50 int8 (1x3x224x224) on {args.device}, median of {args.repeat} runs, "
              "seconds of whole commands:")
        print(f"{'mode':8} {'compile cpu_ref':>16} {'compile npu_sim':>16} {'ratio':>6} "
              f"{'estimate':>9} {'run cpu_ref':>12} {'run npu_sim':>12} {'ratio':>6}")
        for mode, cc, cn, est, rc, rn in rows:
            print(f"{mode:8} {cc:16.3f} {cn:16.3f} {cn / cc:6.2f} {est:9.3f} {rc:12.3f} "
                  f"{rn:12.3f} {rn / rc:6.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
