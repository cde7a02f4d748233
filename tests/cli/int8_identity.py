"""The int8 identity suite: every quantized test model, on every target
device and core mode a backend lists, gives cpu_ref's bytes (DESIGN.md:
int8 outputs are byte-identical on every backend).

Any backend runs it, vendor plugins included: quantize_models() compiles
the models once on cpu_ref and keeps their int8 graphs (.mblt), inputs and
cpu_ref's outputs; check_backend() compiles each .mblt for the backend on
each device and mode its `capabilities --json` lists, runs it and compares
the output files byte for byte. `run` is the caller's way of calling
eulernpu (the build's host, or an installed one with --plugin-dir).

As a script: int8_identity.py --backend B [--eulernpu PATH] [--plugin-dir D]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx

from harness import SOURCE_DIR
from test_quantize_ops import attention, conv_net

DIGITS = os.path.join(SOURCE_DIR, "examples", "digits")
CALIB = os.path.join(DIGITS, "calib")
BATCH = 8


def wide_conv(rng):
    """Two 3x3 convs over 64 channels (the second strided), padded: their
    tiles need halos, padding taps and K slices on a small SRAM."""
    def w(name, *shape):
        return onnx.numpy_helper.from_array(
            rng.normal(0, 1 / np.sqrt(np.prod(shape[1:])), shape).astype(np.float32), name)
    h = onnx.helper
    nodes = [h.make_node("Conv", ["x", "w1", "b1"], ["c1"], "wide1", pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c1"], ["r1"], "relu"),
             h.make_node("Conv", ["r1", "w2"], ["y"], "wide2", pads=[1, 0, 1, 2],
                         strides=[2, 2])]
    g = h.make_graph(nodes, "wideconv",
                     [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 64, 9, 11])],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
                     [w("w1", 24, 64, 3, 3),
                      onnx.numpy_helper.from_array(
                          rng.normal(0, 0.1, 24).astype(np.float32), "b1"),
                      w("w2", 16, 24, 3, 3)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 14)]), (1, 64, 9, 11), []



def _must(r, what):
    if r.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{r.stdout}{r.stderr}")


def quantize_models(run, root):
    """Quantizes the suite's models into `root`; returns name -> base path
    (base.mblt, base.in.npz, base.cpu.npz: cpu_ref's outputs)."""
    rng = np.random.default_rng(11)
    with np.load(os.path.join(DIGITS, "test_inputs.npz")) as f:
        digits_in = {k: f[k][:BATCH] for k in f.files}
    specs = []
    for name in ("mlp", "cnn"):
        specs.append((name, os.path.join(DIGITS, name + ".onnx"), CALIB, digits_in,
                      ["--input-shape", f"input={BATCH},1,8,8"]))
    for build in (conv_net, attention, wide_conv):
        model, shape, _ = build(np.random.default_rng(7))
        path = os.path.join(root, model.graph.name + ".onnx")
        onnx.save(model, path)
        calib = os.path.join(root, model.graph.name + "_calib")
        os.mkdir(calib)
        for i in range(8):
            np.save(os.path.join(calib, f"s{i}.npy"), rng.normal(0, 1, shape).astype(np.float32))
        specs.append((model.graph.name, path, calib,
                      {"x": rng.normal(0, 1, shape).astype(np.float32)}, []))
    models = {}
    for name, path, calib, inputs, extra in specs:
        base = os.path.join(root, name)
        np.savez(base + ".in.npz", **inputs)
        _must(run("compile", "--model", path, "--calib-data-path", calib, "--out",
                  base + ".cpu", "--save-quantized-ir", base + ".mblt", *extra), name)
        _must(run("run", "--artifact", base + ".cpu", "--input", base + ".in.npz", "--out",
                  base + ".cpu.npz"), name)
        models[name] = base
    return models


def targets(run, backend):
    """(device, core mode) pairs `backend` lists, in its order."""
    r = run("capabilities", "--json")
    _must(r, "capabilities")
    for b in json.loads(r.stdout)["backends"]:
        if b["name"] == backend:
            return [(d["name"], m) for d in b["devices"] for m in d["core_modes"]]
    raise RuntimeError(f"no backend '{backend}' in capabilities")


def check_backend(test, run, backend, models, out_dir):
    """Checks every model on every target of `backend` inside subTests of
    `test`; returns the targets checked."""
    checked = targets(run, backend)
    test.assertTrue(checked, f"{backend} lists no device")
    for name in sorted(models):
        for device, mode in checked:
            with test.subTest(backend=backend, model=name, device=device, mode=mode):
                art = os.path.join(out_dir, f"{name}-{backend}-{device}-{mode}")
                r = run("compile", "--mblt", models[name] + ".mblt", "--backend", backend,
                        "--target-device", device, "--inference-scheme", mode,
                        "--cpu-offload", "none", "--out", art)
                test.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                r = run("run", "--artifact", art, "--input", models[name] + ".in.npz",
                        "--out", art + ".npz")
                test.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                with open(art + ".npz", "rb") as got, open(models[name] + ".cpu.npz", "rb") as want:
                    test.assertEqual(got.read(), want.read(), "outputs differ from cpu_ref's")
    return checked


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", required=True)
    parser.add_argument("--eulernpu", default=os.path.join(SOURCE_DIR, "build", "bin", "eulernpu"))
    parser.add_argument("--plugin-dir", action="append", default=[])
    args = parser.parse_args()
    prefix = [args.eulernpu] + [a for d in args.plugin_dir for a in ("--plugin-dir", d)]

    def run(*a):
        env = dict(os.environ)
        env.pop("EULERNPU_PLUGIN_PATH", None)
        return subprocess.run(prefix + list(a), capture_output=True, text=True, env=env,
                              timeout=600)

    counts = {}

    class Suite(unittest.TestCase):
        def test_int8_identity(self):
            with tempfile.TemporaryDirectory(prefix="eulernpu-identity-") as root:
                models = quantize_models(run, root)
                checked = check_backend(self, run, args.backend, models, root)
                counts.update(models=len(models), targets=len(checked))

    result = unittest.TextTestRunner(verbosity=2).run(
        unittest.defaultTestLoader.loadTestsFromTestCase(Suite))
    if not result.wasSuccessful():
        sys.exit(1)
    print(f"{args.backend}: {counts['models']} models x {counts['targets']} targets "
          f"byte-identical to cpu_ref")


if __name__ == "__main__":
    main()
