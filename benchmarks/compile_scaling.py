"""How compile time and memory grow with the node count: Relu chains and
a branching graph (each node adds a Relu and a residual Add, so half the
values stay alive for a step longer) of N nodes, compiled for cpu_ref.
For each size it prints the wall time (the minimum of --repeat runs of the
whole eulernpu command), the peak resident memory, and both per node
relative to the smallest size: 1.0 everywhere is linear growth.

    /usr/bin/python3 benchmarks/compile_scaling.py [--eulernpu BIN] [--sizes 10000,100000]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import TensorProto as T
from onnx import helper as h

HERE = os.path.dirname(os.path.abspath(__file__))


def relu_chain(n):
    nodes = [h.make_node("Relu", [f"t{i}"], [f"t{i + 1}"], f"r{i}") for i in range(n)]
    return nodes, f"t{n}"


def residual_chain(n):
    # Pairs of Relu then Add(previous, relu): n nodes in all.
    nodes, prev = [], "t0"
    for i in range(n // 2):
        nodes.append(h.make_node("Relu", [prev], [f"r{i}"], f"relu{i}"))
        nodes.append(h.make_node("Add", [prev, f"r{i}"], [f"a{i}"], f"add{i}"))
        prev = f"a{i}"
    return nodes, prev


def save_model(path, nodes, output):
    g = h.make_graph(nodes, "scaling", [h.make_tensor_value_info("t0", T.FLOAT, [1, 16])],
                     [h.make_tensor_value_info(output, T.FLOAT, [1, 16])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


# Runs the command and prints its peak RSS: a fresh process per run, since
# RUSAGE_CHILDREN keeps the largest child ever seen.
_PEAK = ("import resource, subprocess, sys; "
         "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, "
         "stderr=subprocess.DEVNULL); "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def measure(cmd, repeat):
    """Minimum wall time and peak RSS (KiB) over `repeat` runs."""
    best, peak = float("inf"), 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-c", _PEAK, *cmd], check=True, capture_output=True,
                           text=True)
        best = min(best, time.perf_counter() - t0)
        peak = max(peak, int(r.stdout))
    return best, peak


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eulernpu", default=os.path.join(HERE, "..", "build", "bin", "eulernpu"))
    ap.add_argument("--sizes", default="10000,20000,50000,100000")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    exe = os.path.abspath(args.eulernpu)
    sizes = [int(s) for s in args.sizes.split(",")]
    tmp = tempfile.mkdtemp(prefix="eulernpu-scaling-")
    try:
        print(f"{'graph':<10}{'nodes':>8}{'seconds':>10}{'peak MiB':>10}"
              f"{'time/node':>11}{'mem/node':>10}")
        for label, build in (("relu", relu_chain), ("residual", residual_chain)):
            base = None
            for n in sizes:
                model = os.path.join(tmp, f"{label}{n}.onnx")
                save_model(model, *build(n))
                out = os.path.join(tmp, f"{label}{n}.artifact")
                seconds, kib = measure([exe, "compile", "--model", model, "--out", out],
                                       args.repeat)
                shutil.rmtree(out, ignore_errors=True)
                if base is None:
                    base = (seconds / n, kib / n)
                print(f"{label:<10}{n:>8}{seconds:>10.2f}{kib / 1024:>10.0f}"
                      f"{seconds / n / base[0]:>11.2f}{kib / n / base[1]:>10.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
