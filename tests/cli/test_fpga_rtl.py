"""The PL engine's RTL against the backend's C++ model of it
(docs/backends/fpga_board.md, "Co-simulation"): quantized test models run
on fpga_board with a PL trace, and Verilator replays every traced tile on
plugins/fpga_board/rtl/engine_core.v, built at the trace's engine size:
each tile must take the cycles the model counts and give its bytes."""
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
import unittest

import numpy as np
import onnx

from harness import SOURCE_DIR, CliTestCase, run
import int8_identity

RTL = os.path.join(SOURCE_DIR, "plugins", "fpga_board", "rtl", "engine_core.v")
BENCH = os.path.join(SOURCE_DIR, "tests", "fpga", "engine_tb.cpp")
# (board, --pl-config or None): the size the board gets by itself, and one
# whose lane count (12) is not a power of two and whose S port is wider
# than 64 bits.
SIZES = [("pynq-z2", None), ("zcu104", "B1152")]


def long_k(root):
    """A Gemm whose reduction (6,200 inputs: 775 steps of 8, 517 of 12) is
    longer than the engine's 512-word buffers: its tiles accumulate across
    two buffer loads, the first tile of each without requantizing."""
    rng = np.random.default_rng(5)
    k, n = 6200, 24
    h = onnx.helper
    w = onnx.numpy_helper.from_array((rng.normal(0, 1, (k, n)) / np.sqrt(k)).astype(np.float32),
                                     "w")
    b = onnx.numpy_helper.from_array(rng.normal(0, 0.1, n).astype(np.float32), "b")
    g = h.make_graph([h.make_node("Gemm", ["x", "w", "b"], ["y"], "fc")], "longk",
                     [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3, k])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [3, n])], [w, b])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    path = os.path.join(root, "longk.onnx")
    onnx.save(model, path)
    calib = os.path.join(root, "longk_calib")
    os.mkdir(calib)
    for i in range(4):
        np.save(os.path.join(calib, f"s{i}.npy"), rng.normal(0, 1, (3, k)).astype(np.float32))
    base = os.path.join(root, "longk")
    np.savez(base + ".in.npz", x=rng.normal(0, 1, (3, k)).astype(np.float32))
    for args in (("compile", "--model", path, "--calib-data-path", calib, "--out", base + ".cpu",
                  "--save-quantized-ir", base + ".mblt"),
                 ("run", "--artifact", base + ".cpu", "--input", base + ".in.npz", "--out",
                  base + ".cpu.npz")):
        r = run(*args)
        assert r.returncode == 0, r.stdout + r.stderr
    return base


def trace_size(path):
    with open(path, "rb") as f:
        head = f.read(28)
    assert head[:8] == b"ENPTRACE", path
    return struct.unpack("<5i", head[8:])[1:]  # PP, ICP, OCP, depth


class FpgaRtlTest(CliTestCase):

    @classmethod
    def setUpClass(cls):
        if shutil.which("verilator") is None:
            raise unittest.SkipTest("verilator is not installed (scripts/setup.sh installs it)")
        cls.root = tempfile.mkdtemp(prefix="eulernpu-rtl-")
        cls.models = int8_identity.quantize_models(run, cls.root)
        cls.models["longk"] = long_k(cls.root)
        cls.benches = {}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def bench(self, pp, icp, ocp, depth):
        """engine_tb built with Verilator for one engine size."""
        key = (pp, icp, ocp, depth)
        if key not in self.benches:
            mdir = os.path.join(self.root, "obj_%d_%d_%d_%d" % key)
            defs = f"-DPP={pp} -DICP={icp} -DOCP={ocp} -DDEPTH={depth}"
            start = time.monotonic()
            r = subprocess.run(
                ["verilator", "--cc", "--exe", "--build", "-j", "2", "-Wall", "-Wno-fatal",
                 "--Mdir", mdir, f"-GPP={pp}", f"-GICP={icp}", f"-GOCP={ocp}",
                 f"-GDEPTH={depth}", "-CFLAGS", f"{defs} -O1 -std=c++17", RTL, BENCH],
                capture_output=True, text=True, timeout=900)
            self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
            print(f"\nverilator build {key}: {time.monotonic() - start:.0f} s", flush=True)
            type(self).benches[key] = os.path.join(mdir, "Vengine_core")
        return self.benches[key]

    def test_rtl_matches_the_model_tile_by_tile(self):
        for board, config in SIZES:
            for name in sorted(self.models):
                with self.subTest(board=board, size=config, model=name):
                    art = os.path.join(self.root, f"{name}-{board}-{config}.fpga")
                    extra = ["--pl-config", config] if config else []
                    self.ok("compile", "--mblt", self.models[name] + ".mblt", "--backend",
                            "fpga_board", "--target-device", board, "--out", art, *extra)
                    trace = art + ".trace"
                    out = art + ".npz"
                    self.ok("run", "--artifact", art, "--input", self.models[name] + ".in.npz",
                            "--out", out, "--backend-option", f"pl_trace={trace}",
                            "--backend-option", "pl_trace_tiles=12")
                    # The run that wrote the trace gave cpu_ref's bytes.
                    self.ok("compare", "--got", out, "--expected",
                            self.models[name] + ".cpu.npz", "--tol", "0")
                    exe = self.bench(*trace_size(trace))
                    r = subprocess.run([exe, trace], capture_output=True, text=True,
                                       timeout=600)
                    self.assertEqual(r.returncode, 0, r.stdout + r.stderr[-4000:])
                    m = re.match(r"^(\d+) tiles \((\d+) requantized\), \d+ cycles: "
                                 r"RTL matches the model\n$", r.stdout)
                    self.assertIsNotNone(m, r.stdout)
                    if name == "longk":  # tiles that only accumulate ran too
                        self.assertLess(int(m.group(2)), int(m.group(1)), r.stdout)
                    print(f"{name} on {board} {config or ''}: {r.stdout.strip()}", flush=True)


if __name__ == "__main__":
    unittest.main()
