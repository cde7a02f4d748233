"""--threads: results are byte-identical run to run for a thread count, and
the same for every thread count, on whole networks whose convolutions and
GEMMs are large enough to be split."""
import hashlib
import itertools
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from harness import EULERNPU, SANITIZED, SOURCE_DIR, CliTestCase

MAKE_MODELS = os.path.join(SOURCE_DIR, "tests", "models", "make_models.py")
SHAPES = {"resnet": "x=2,3,32,32", "mobilenet": "x=2,3,32,32", "transformer": "x=2,8,32"}


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class ThreadsTest(CliTestCase):
    @classmethod
    def setUpClass(cls):
        cls.models = tempfile.mkdtemp(prefix="eulernpu-threads-")
        cls.addClassCleanup(shutil.rmtree, cls.models, ignore_errors=True)
        subprocess.run(["/usr/bin/python3", MAKE_MODELS, cls.models, "--batch", "2"], check=True,
                       capture_output=True)

    def test_results_do_not_depend_on_thread_count(self):
        for name, shape in SHAPES.items():
            with self.subTest(model=name):
                art = self.path(name)
                self.ok("compile", "--model", os.path.join(self.models, f"{name}_opset13.onnx"),
                        "--input-shape", shape, "--out", art)
                digests = {}
                for threads in (1, 2, 3, 4):
                    for run_index in range(2):
                        out = self.path(f"{name}.{threads}.{run_index}.npz")
                        self.ok("run", "--artifact", art, "--input",
                                os.path.join(self.models, f"{name}_b2.input.npz"), "--out", out,
                                "--threads", str(threads))
                        digests[(threads, run_index)] = digest(out)
                for threads in (1, 2, 3, 4):
                    self.assertEqual(digests[(threads, 0)], digests[(threads, 1)],
                                     f"{name}: two runs with --threads {threads} differ")
                self.assertEqual(len(set(digests.values())), 1,
                                 f"{name}: results differ between thread counts: {digests}")

    def most_threads(self, *args, extra_env=None):
        """The most threads `eulernpu *args` had at once, sampled from /proc
        every 20 ms while it ran (OpenBLAS's own variables unset unless
        `extra_env` sets them)."""
        env = {k: v for k, v in os.environ.items()
               if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "EULERNPU_PLUGIN_PATH")}
        env.update(extra_env or {})
        p = subprocess.Popen([EULERNPU, *args], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, env=env)
        most = 0
        while p.poll() is None:
            try:
                most = max(most, len(os.listdir(f"/proc/{p.pid}/task")))
            except OSError:
                pass  # exited between poll() and listdir()
            time.sleep(0.02)
        _, err = p.communicate()
        self.assertEqual(p.returncode, 0, err)
        return most

    @unittest.skipIf(SANITIZED, "the sanitizers' runtime starts threads of its own")
    def test_one_thread_means_one_thread(self):
        # OpenBLAS included: it starts a worker per core when it loads
        # unless told otherwise, and those spin beside the run.
        art = self.path("resnet")
        self.ok("compile", "--model", os.path.join(self.models, "resnet_opset13.onnx"),
                "--input-shape", SHAPES["resnet"], "--out", art)
        bench = ["benchmark", "--artifact", art, "--time", "1.5"]
        self.assertEqual(self.most_threads(*bench, "--threads", "1"), 1)
        # The kit's own pool at 2; OpenBLAS adds its worker then too, which
        # only the latency shows (docs/performance.md), not a thread count.
        self.assertGreaterEqual(self.most_threads(*bench, "--threads", "2"), 2)
        # A user's own setting still wins: OpenBLAS's workers at --threads 1.
        self.assertGreaterEqual(
            self.most_threads(*bench, "--threads", "1", extra_env={"OPENBLAS_NUM_THREADS": "2"}), 2)


def conv_ref(x, w, b, strides, pads, dilations, group):
    """ONNX Conv in float64, any spatial rank; pads are (begins..., ends...)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + n]) for i in range(n)])
    k = w.shape[2:]
    out_sp = [(xp.shape[2 + i] - dilations[i] * (k[i] - 1) - 1) // strides[i] + 1
              for i in range(n)]
    m, cg = w.shape[0], w.shape[1]
    mg = m // group
    out = np.zeros((x.shape[0], m, *out_sp))
    for g in range(group):
        xg = xp[:, g * cg:(g + 1) * cg]
        wg = w[g * mg:(g + 1) * mg]
        for tap in itertools.product(*[range(d) for d in k]):
            window = xg[(slice(None), slice(None)) + tuple(
                slice(tap[i] * dilations[i], tap[i] * dilations[i] + strides[i] * (out_sp[i] - 1) + 1,
                      strides[i]) for i in range(n))]
            out[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc->nm...", window,
                                                     wg[(slice(None), slice(None)) + tap])
    return out + b.astype(np.float64).reshape((1, m) + (1,) * n)


# Layers big enough that cpu_ref splits their GEMMs into blocks, one per
# path: column blocks with per-block im2col (contiguous rows, dilation, 3-D
# slabs, strided and asymmetric padding), row blocks over a shared im2col,
# the 1x1 conv that reads X directly, groups, Gemm with C, MatMul, batched.
CONVS = {
    # name: (input, out channels, kernel, strides, pads, dilations, group)
    "conv3x3": ("x", 64, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    "conv3x3_dilated": ("x", 64, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 1),
    "conv3x3_asym": ("x", 96, (3, 3), (1, 1), (0, 1, 2, 1), (1, 1), 1),
    "conv3x3_s2": ("x", 192, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),
    "conv3x3_s4_rows": ("x", 512, (3, 3), (4, 4), (1, 1, 1, 1), (1, 1), 1),
    "conv1x1": ("x", 512, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    "conv_grouped": ("x", 128, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),
    "conv3d": ("x3", 32, (3, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1), (1, 1, 1), 1),
}
INPUTS = {"x": (2, 64, 32, 32), "x3": (1, 16, 8, 16, 15), "a": (128, 256), "a3": (4, 128, 256)}


def split_gemm_model(rng):
    weights, nodes, outputs = [], [], []

    def weight(name, shape):
        value = rng.uniform(-1, 1, shape).astype(np.float32)
        weights.append(numpy_helper.from_array(value, name))
        return value

    params = {}
    for name, (src, m, k, strides, pads, dil, group) in CONVS.items():
        w = weight(name + ".w", (m, INPUTS[src][1] // group, *k))
        b = weight(name + ".b", (m,))
        params[name] = (src, w, b, strides, pads, dil, group)
        nodes.append(helper.make_node("Conv", [src, name + ".w", name + ".b"], [name],
                                      kernel_shape=list(k), strides=list(strides), pads=list(pads),
                                      dilations=list(dil), group=group))
        outputs.append(name)
    weight("fc.w", (512, 256))
    weight("fc.b", (512,))
    weight("fc.c", (128, 1))
    weight("mm.w", (256, 640))
    weight("bmm.w", (4, 256, 256))
    nodes += [
        helper.make_node("Gemm", ["a", "fc.w", "fc.b"], ["gemm_bias"], transB=1),
        helper.make_node("Gemm", ["a", "fc.w", "fc.c"], ["gemm_col"], transB=1, alpha=0.5,
                         beta=2.0),
        helper.make_node("MatMul", ["a", "mm.w"], ["matmul"]),
        helper.make_node("MatMul", ["a3", "bmm.w"], ["matmul_batched"]),
    ]
    outputs += ["gemm_bias", "gemm_col", "matmul", "matmul_batched"]
    graph = helper.make_graph(
        nodes, "split_gemms",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in INPUTS.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, params, {w.name: numpy_helper.to_array(w) for w in weights}


class SplitGemmThreadsTest(CliTestCase):
    def test_split_gemms_match_numpy_and_do_not_depend_on_thread_count(self):
        rng = np.random.default_rng(7)
        model, params, w = split_gemm_model(rng)
        onnx.save(model, self.path("split.onnx"))
        inputs = {n: rng.uniform(-1, 1, s).astype(np.float32) for n, s in INPUTS.items()}
        np.savez(self.path("in.npz"), **inputs)
        art = self.path("split.enpa")
        self.ok("compile", "--model", self.path("split.onnx"), "--out", art)
        digests = set()
        for threads in (1, 2, 3, 4):
            out = self.path(f"out.{threads}.npz")
            self.ok("run", "--artifact", art, "--input", self.path("in.npz"), "--out", out,
                    "--threads", str(threads))
            digests.add(digest(out))
        self.assertEqual(len(digests), 1, "results differ between thread counts")

        got = dict(np.load(self.path("out.1.npz")))
        a = inputs["a"].astype(np.float64)
        expected = {
            name: conv_ref(inputs[src], cw, cb, strides, pads, dil, group)
            for name, (src, cw, cb, strides, pads, dil, group) in params.items()
        }
        expected["gemm_bias"] = a @ w["fc.w"].T.astype(np.float64) + w["fc.b"]
        expected["gemm_col"] = 0.5 * (a @ w["fc.w"].T.astype(np.float64)) + 2.0 * w["fc.c"]
        expected["matmul"] = a @ w["mm.w"].astype(np.float64)
        expected["matmul_batched"] = inputs["a3"].astype(np.float64) @ w["bmm.w"]
        for name, want in expected.items():
            with self.subTest(output=name):
                self.assertEqual(got[name].shape, want.shape)
                np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-3)


if __name__ == "__main__":
    unittest.main()
