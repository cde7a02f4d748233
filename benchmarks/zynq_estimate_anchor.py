"""zynq_ps's latency estimate against a published measurement
(docs/backends/zynq_ps.md, "Latency estimate").

Coral's Edge TPU benchmark page (https://coral.ai/docs/edgetpu/benchmarks/)
times the quantized TensorFlow Lite MobileNet v1 and v2 (224x224) on its
"Embedded CPU", a quad-core Cortex-A53 at 1.5 GHz (the Dev Board's NXP
i.MX 8M): 164 ms and 122 ms. This script writes both networks with their
published layer shapes and random weights (latency depends on shapes, not
values), quantizes them with eulernpu, compiles them for zynq_ps on a device
file describing that board (a Cortex-A53 at 1.5 GHz, 4 cores, 1 MiB L2,
32-bit LPDDR4 at 3200 MT/s) and prints `run --estimate-only`'s latency at 1
thread and at 4 beside the measurement.

    /usr/bin/python3 benchmarks/zynq_estimate_anchor.py --eulernpu BIN [--check-docs]

--check-docs fails unless docs/backends/zynq_ps.md's table (between
<!-- anchor-table:begin --> and <!-- anchor-table:end -->) is what this run
printed; --write-docs rewrites it.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "backends", "zynq_ps.md")
BEGIN, END = "<!-- anchor-table:begin -->", "<!-- anchor-table:end -->"
SOURCE = "https://coral.ai/docs/edgetpu/benchmarks/"
# Coral's "Embedded CPU" column, ms per inference.
MEASURED_MS = {"mobilenet_v1": 164.0, "mobilenet_v2": 122.0}
DEVICE = """# A Cortex-A53 board as Coral's benchmark page describes its Embedded CPU
# (NXP i.MX 8M: 4 x Cortex-A53 at 1.5 GHz, 1 MiB L2, 32-bit LPDDR4 at 3200 MT/s).
name: imx8m-a53
description: NXP i.MX 8M, 4 x Cortex-A53 at 1.5 GHz (the anchor of the latency estimate)
cpu: cortex-a53
arch: aarch64
cores: 4
clock_mhz: 1500
neon_bits: 128
l1d_kib: 32
l1i_kib: 32
l2_kib: 1024
ddr_gbps: 12.8
"""


class Builder:
    def __init__(self, seed=1):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def conv(self, x, cin, cout, k, stride=1, group=1, act="relu6"):
        w, b, y = self.name("w"), self.name("b"), self.name("conv")
        scale = np.sqrt(2.0 / (cin // group * k * k)) * 0.5
        self.inits.append(nh.from_array(
            (self.rng.standard_normal((cout, cin // group, k, k)) * scale).astype(np.float32), w))
        self.inits.append(nh.from_array((self.rng.standard_normal(cout) * 0.01)
                                        .astype(np.float32), b))
        self.nodes.append(h.make_node("Conv", [x, w, b], [y], y, kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[k // 2] * 4, group=group))
        if act is None:
            return y
        r = self.name("relu6")
        lo, hi = self.name("lo"), self.name("hi")
        self.inits += [nh.from_array(np.array(0, np.float32), lo),
                       nh.from_array(np.array(6, np.float32), hi)]
        self.nodes.append(h.make_node("Clip", [y, lo, hi], [r], r))
        return r

    def add(self, a, b):
        s = self.name("add")
        self.nodes.append(h.make_node("Add", [a, b], [s], s))
        return s

    def head(self, x, channels):
        p, f, y = self.name("pool"), self.name("flat"), "logits"
        self.nodes.append(h.make_node("GlobalAveragePool", [x], [p], p))
        self.nodes.append(h.make_node("Flatten", [p], [f], f))
        w, b = self.name("fc_w"), self.name("fc_b")
        self.inits.append(nh.from_array((self.rng.standard_normal((1000, channels)) *
                                         np.sqrt(1.0 / channels)).astype(np.float32), w))
        self.inits.append(nh.from_array(np.zeros(1000, np.float32), b))
        self.nodes.append(h.make_node("Gemm", [f, w, b], [y], "fc", transB=1))
        return y

    def model(self, name):
        g = h.make_graph(self.nodes, name,
                         [h.make_tensor_value_info("input", T.FLOAT, [1, 3, 224, 224])],
                         [h.make_tensor_value_info("logits", T.FLOAT, [1, 1000])], self.inits)
        return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def mobilenet_v1():
    """Howard et al. 2017, Table 1 (width 1.0)."""
    b = Builder()
    x = b.conv("input", 3, 32, 3, 2)
    cin = 32
    for cout, stride in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + \
            [(512, 1)] * 5 + [(1024, 2), (1024, 1)]:
        x = b.conv(x, cin, cin, 3, stride, group=cin)
        x = b.conv(x, cin, cout, 1)
        cin = cout
    b.head(x, 1024)
    return b.model("mobilenet_v1")


def mobilenet_v2():
    """Sandler et al. 2018, Table 2 (width 1.0)."""
    b = Builder()
    x = b.conv("input", 3, 32, 3, 2)
    cin = 32
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = x if t == 1 else b.conv(x, cin, hidden, 1)
            y = b.conv(y, hidden, hidden, 3, stride, group=hidden)
            y = b.conv(y, hidden, c, 1, act=None)
            x = b.add(x, y) if stride == 1 and cin == c else y
            cin = c
    x = b.conv(x, cin, 1280, 1)
    b.head(x, 1280)
    return b.model("mobilenet_v2")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"zynq_estimate_anchor: {' '.join(cmd)} failed:\n{r.stdout}{r.stderr}")
    return r


def measure(eulernpu, work):
    devices = os.path.join(work, "devices")
    os.makedirs(devices)
    with open(os.path.join(devices, "imx8m-a53.zynq.yaml"), "w") as f:
        f.write(DEVICE)
        # The Cortex-A53's cost figures, as the shipped A53 devices state them.
        with open(os.path.join(ROOT, "plugins", "zynq_ps", "devices", "zcu104.zynq.yaml")) as z:
            f.write("cost:" + z.read().split("cost:", 1)[1])
    calib = os.path.join(work, "calib")
    os.makedirs(calib)
    rng = np.random.default_rng(7)
    for i in range(2):
        np.savez(os.path.join(calib, f"{i}.npz"),
                 input=rng.uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32))
    rows = []
    for name, build in (("mobilenet_v1", mobilenet_v1), ("mobilenet_v2", mobilenet_v2)):
        model = os.path.join(work, name + ".onnx")
        onnx.save(build(), model)
        art = os.path.join(work, name + ".zynq")
        run([eulernpu, "--plugin-dir", devices, "compile", "--model", model,
             "--calib-data-path", calib, "--sensitivity-samples", "0", "--backend", "zynq_ps",
             "--target-device", "imx8m-a53", "--out", art])
        reports = {}
        for threads in (1, 4):
            rep = os.path.join(work, f"{name}.{threads}.json")
            run([eulernpu, "run", "--artifact", art, "--estimate-only", "--threads",
                 str(threads), "--report", rep])
            with open(rep) as f:
                reports[threads] = json.load(f)
        one = reports[1]["totals"]
        gemm_us = sum(op["time_us"] for op in reports[1]["ops"] if op["kernel"] == "int8 gemm")
        rows.append((name, one["macs"], one["latency_ms"], reports[4]["totals"]["latency_ms"],
                     gemm_us / 1000 / one["latency_ms"], MEASURED_MS[name]))
    return rows


def table(rows):
    lines = ["| model | MACs | estimate, 1 thread | of it in the int8 GEMM | estimate, 4 threads "
             "| measured (Coral, Embedded CPU) | estimate / measured, 1 thread |",
             "|---|---|---|---|---|---|---|"]
    for name, macs, one, four, gemm_share, measured in rows:
        lines.append(f"| {name} | {macs / 1e6:.0f} M | {one:.1f} ms | {100 * gemm_share:.0f} % | "
                     f"{four:.1f} ms | {measured:.0f} ms | {one / measured:.2f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--eulernpu", required=True)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check-docs", action="store_true")
    mode.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="eulernpu-anchor-") as work:
        text = table(measure(args.eulernpu, work))
    print(f"zynq_ps estimate against {SOURCE}\n{text}")
    with open(DOC) as f:
        doc = f.read()
    head, rest = doc.split(BEGIN, 1)
    body, tail = rest.split(END, 1)
    if args.write_docs:
        with open(DOC, "w") as f:
            f.write(head + BEGIN + "\n" + text + "\n" + END + tail)
    elif args.check_docs and body.strip() != text:
        sys.exit(f"zynq_estimate_anchor: {DOC} has\n{body.strip()}\nbut this run printed\n{text}\n"
                 "(rerun with --write-docs after a deliberate change)")


if __name__ == "__main__":
    main()
