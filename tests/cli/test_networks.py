"""Real networks end to end: a MobileNet-style CNN, a ResNet-style CNN and a
transformer encoder layer, exported the way torch.onnx writes them at
several opsets (tests/models/make_models.py), parsed, compiled for batch 1
and 3 and run on cpu_ref, then compared with a float64 numpy reference
(tests/models/numpy_ref.py).

Single-op conformance cases cannot catch what only whole exported graphs
show: exporter decompositions (HardSwish, LayerNormalization, GELU),
opset-dependent attribute/input forms, scalar constants, shape chains over
a dynamic batch that must fold, and error that accumulates over layers.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx

from harness import SOURCE_DIR, CliTestCase, run

MAKE_MODELS = os.path.join(SOURCE_DIR, "tests", "models", "make_models.py")
BATCHES = (1, 3)

# The result is float32, the reference float64 from the same float32
# weights and inputs, so the difference is float32 rounding alone: each
# operation rounds by at most 6e-8 relative, a dot product of K terms
# (K <= 288 here: a 3x3x32 conv) loses up to K such steps and typically
# sqrt(K), over about 15 layers whose activations the generator keeps near
# 1. Measured: cpu_ref is within 2e-6 absolute of the reference on every
# output (outputs reach about 10), 5% of this tolerance at worst, leaving
# room for kernels that sum in another order. Faults are far above it: a
# BatchNormalization epsilon of 1e-3 instead of 1e-5 in one layer, a
# HardSigmoid beta off by 1e-3 or a tanh-approximated GELU already exceed
# it 3 to 20 times, a wrong pad or softmax axis by 1000 times and more.
# atol covers outputs near zero (small probabilities, logits and residual
# sums that cancel), whose error follows the O(1) operands, not the output.
RTOL = 1e-4
ATOL = 1e-5

# What a Reshape target computed from the dynamic batch is made of; once
# --input-shape fixes the batch, parse must have folded all of it.
SHAPE_CHAIN_OPS = {"Shape", "Gather", "Unsqueeze", "Concat"}


class NetworkTest(CliTestCase):
    @classmethod
    def setUpClass(cls):
        cls.models_dir = tempfile.mkdtemp(prefix="eulernpu-networks-")
        cls.addClassCleanup(shutil.rmtree, cls.models_dir, ignore_errors=True)
        cls.manifest = generate(cls.models_dir)

    def run_network(self, name):
        """Every opset variant of model `name` at every batch size; a
        failure names the model, opset and batch in the subtest and in its
        message."""
        model = self.manifest[name]
        for variant in model["variants"]:
            for batch in BATCHES:
                with self.subTest(model=name, opset=variant["opset"], batch=batch):
                    self.check_variant(model, variant, batch)

    def check_variant(self, model, variant, batch):
        label = f"{model['name']} opset {variant['opset']} batch {batch}"
        src = os.path.join(self.models_dir, variant["file"])
        item_dims = ",".join(str(d) for d in model["item_shape"])
        input_shape = f"{model['input']}={batch},{item_dims}"
        stem = f"{model['name']}_opset{variant['opset']}_b{batch}"
        files = model["batches"][str(batch)]
        expected = dict(np.load(os.path.join(self.models_dir, files["expected"])))
        # Separate steps, so a parse problem does not hide what compile and
        # run would say (or the other way round).
        with self.subTest(step="parse"):
            self.check_ir(label, src, input_shape, self.path(stem + ".mblt"), variant, expected)
        with self.subTest(step="compile+run"):
            art = self.path(stem + ".artifact")
            result = self.path(stem + ".out.npz")
            self.eulernpu(label, "compile", "--model", src, "--input-shape", input_shape,
                          "--out", art)
            self.eulernpu(label, "run", "--artifact", art,
                          "--input", os.path.join(self.models_dir, files["input"]), "--out", result)
            got = np.load(result)
            self.assertEqual(sorted(got.files), sorted(expected), f"{label}: output names differ")
            for key, want in expected.items():
                self.assertEqual(got[key].dtype, np.float32, f"{label}: output '{key}' dtype")
                # assert_allclose reports the largest absolute and relative
                # differences and how many elements are off.
                np.testing.assert_allclose(got[key], want, rtol=RTOL, atol=ATOL,
                                           err_msg=f"{label}: output '{key}' differs from numpy")

    def check_ir(self, label, src, input_shape, mblt, variant, expected):
        """The IR file is valid ONNX, the shape chains are folded away and,
        the batch being fixed, every value has a static shape."""
        self.eulernpu(label, "parse", "--model", src, "--input-shape", input_shape,
                      "--output", mblt)
        ir = onnx.load(mblt)
        if variant["onnx_checker"]:
            try:
                onnx.checker.check_model(ir, full_check=True)
            except Exception as e:  # the checker raises several unrelated types
                self.fail(f"{label}: the IR file is not valid ONNX: {e}")
        left = sorted({n.op_type for n in ir.graph.node} & SHAPE_CHAIN_OPS)
        self.assertEqual(left, [], f"{label}: parse left shape-chain nodes in the IR")
        shapes = {v.name: static_dims(v) for v in [*ir.graph.value_info, *ir.graph.output]}
        # Nodes are in order, so the first one with an unshaped output is
        # where inference stopped.
        for node in ir.graph.node:
            for out in node.output:
                self.assertIsNotNone(
                    shapes.get(out),
                    f"{label}: the IR has no static shape for '{out}', output of node "
                    f"'{node.name}' ({node.op_type}): shape inference stopped there")
        for key, want in expected.items():
            self.assertEqual(shapes.get(key), want.shape, f"{label}: IR output '{key}' shape")

    def eulernpu(self, label, *args):
        r = run(*args)
        self.assertEqual(r.returncode, 0,
                         f"{label}: eulernpu {args[0]} failed:\n"
                         f"  eulernpu {' '.join(args)}\n{r.stdout}{r.stderr}")
        return r

    def test_mobilenet(self):
        self.run_network("mobilenet")

    def test_resnet(self):
        self.run_network("resnet")

    def test_transformer(self):
        self.run_network("transformer")

    def test_the_variants_cover_the_exporter_quirks(self):
        """The opsets are where the exported forms differ; losing one would
        silently drop a quirk from the test."""
        opsets = {name: [v["opset"] for v in m["variants"]] for name, m in self.manifest.items()}
        self.assertEqual(sorted(opsets), ["mobilenet", "resnet", "transformer"])
        everything = {o for vs in opsets.values() for o in vs}
        self.assertTrue({9, 11, 13, 17} <= everything, opsets)
        self.assertIn(20, opsets["transformer"])  # the Gelu operator
        for name, vs in opsets.items():
            self.assertGreaterEqual(len(vs), 2, f"{name} has fewer than two opsets")

    def test_generator_is_deterministic(self):
        """A failure must reproduce: a second run writes the same models and
        the same inputs and references."""
        again = self.path("again")
        generate(again)
        for name in sorted(os.listdir(self.models_dir)):
            first, second = os.path.join(self.models_dir, name), os.path.join(again, name)
            if name.endswith(".npz"):
                # npz files carry zip timestamps: compare the arrays.
                a, b = np.load(first), np.load(second)
                self.assertEqual(a.files, b.files, name)
                for key in a.files:
                    np.testing.assert_array_equal(a[key], b[key], err_msg=f"{name}: {key}")
            else:
                with open(first, "rb") as f1, open(second, "rb") as f2:
                    self.assertEqual(f1.read(), f2.read(), f"{name} differs between runs")


def static_dims(value_info):
    """The dims of a value, or None unless its shape is known and static."""
    tensor_type = value_info.type.tensor_type
    if not tensor_type.HasField("shape"):
        return None
    dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in tensor_type.shape.dim)
    return None if None in dims else dims


def generate(out_dir):
    """Runs the generator as a user would and returns its manifest by
    model name."""
    r = subprocess.run([sys.executable, MAKE_MODELS, out_dir, *(f"--batch={b}" for b in BATCHES)],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"{MAKE_MODELS} failed:\n{r.stdout}{r.stderr}")
    with open(os.path.join(out_dir, "manifest.json"), encoding="utf-8") as f:
        return {m["name"]: m for m in json.load(f)["models"]}


if __name__ == "__main__":
    unittest.main()
