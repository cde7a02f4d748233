"""The quantizer on every op family it turns into integers: two small
networks with random weights (a conv net with depthwise conv, HardSwish,
a residual Add, AveragePool, Sigmoid, Concat, ConvTranspose, nearest Resize,
Pad, Mul, GlobalAveragePool, Gemm and Softmax; and an attention block with
activation-by-activation MatMuls, a constant Mul, Softmax, a bias Add, Tanh
and Gelu). Each must become an all-integer graph between one
QuantizeLinear and the DequantizeLinears of its outputs, pass ONNX's
checker, reach 25 dB SQNR against the float32 model on fresh inputs (random
weights and eight int8 requantizations in a row: the trained models of
test_quantize.py are held to 30 dB), and
give the same bytes for every --threads.
"""
import os
import unittest

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from harness import CliTestCase


def weights(rng, name, *shape, scale=None):
    fan = np.prod(shape[1:]) if len(shape) > 1 else shape[0]
    a = rng.normal(0, scale or (1 / np.sqrt(fan)), shape).astype(np.float32)
    return nh.from_array(a, name)


def conv_net(rng):
    inits = [weights(rng, "w1", 8, 3, 3, 3), weights(rng, "b1", 8, scale=0.1),
             weights(rng, "wd", 8, 1, 3, 3), weights(rng, "w2", 8, 8, 1, 1),
             weights(rng, "wt", 16, 4, 2, 2), weights(rng, "fc", 10, 4),
             weights(rng, "fcb", 10, scale=0.1),
             nh.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads"),
             nh.from_array(np.array([], np.float32), "roi"),
             nh.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    nodes = [
        h.make_node("Conv", ["x", "w1", "b1"], ["c1"], "conv1", pads=[1, 1, 1, 1]),
        h.make_node("Relu", ["c1"], ["r1"], "relu1"),
        h.make_node("Conv", ["r1", "wd"], ["dw"], "dw", pads=[1, 1, 1, 1], group=8),
        h.make_node("HardSwish", ["dw"], ["hs"], "hswish"),
        h.make_node("Conv", ["hs", "w2"], ["c2"], "pw"),
        h.make_node("Add", ["c2", "r1"], ["res"], "residual"),
        h.make_node("AveragePool", ["res"], ["ap"], "pool", kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("Sigmoid", ["ap"], ["sg"], "sig"),
        h.make_node("Concat", ["ap", "sg"], ["cat"], "cat", axis=1),
        h.make_node("ConvTranspose", ["cat", "wt"], ["up"], "deconv", strides=[2, 2]),
        h.make_node("Resize", ["up", "roi", "scales"], ["rs"], "resize", mode="nearest"),
        h.make_node("Pad", ["rs", "pads"], ["pd"], "pad"),
        h.make_node("Mul", ["pd", "pd"], ["sq"], "square"),
        h.make_node("GlobalAveragePool", ["sq"], ["gap"], "gap"),
        h.make_node("Flatten", ["gap"], ["fl"], "flat"),
        h.make_node("Gemm", ["fl", "fc", "fcb"], ["logits"], "fc", transB=1),
        h.make_node("Softmax", ["logits"], ["probs"], "softmax", axis=1),
    ]
    g = h.make_graph(nodes, "convnet", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 16, 16])],
                     [h.make_tensor_value_info("probs", T.FLOAT, [1, 10]),
                      h.make_tensor_value_info("logits", T.FLOAT, [1, 10])], inits)
    ops = ["QuantizeLinear", "QConv", "QConv", "QLookup", "QConv", "QAdd", "QAveragePool",
           "QLookup", "QConcat", "QConvTranspose", "Resize", "Pad", "QMul",
           "QGlobalAveragePool", "Flatten", "QGemm", "QSoftmax", "DequantizeLinear",
           "DequantizeLinear"]
    return h.make_model(g, opset_imports=[h.make_opsetid("", 14)]), (1, 3, 16, 16), ops


def attention(rng):
    inits = [weights(rng, "wq", 16, 16), weights(rng, "wk", 16, 16), weights(rng, "wv", 16, 16),
             weights(rng, "bo", 16, scale=0.1), nh.from_array(np.array(0.25, np.float32), "scale")]
    nodes = [
        h.make_node("MatMul", ["x", "wq"], ["q"], "q"),
        h.make_node("MatMul", ["x", "wk"], ["k"], "k"),
        h.make_node("MatMul", ["x", "wv"], ["v"], "v"),
        h.make_node("Transpose", ["k"], ["kt"], "kt", perm=[0, 2, 1]),
        h.make_node("MatMul", ["q", "kt"], ["s"], "scores"),
        h.make_node("Mul", ["s", "scale"], ["ss"], "scale"),
        h.make_node("Softmax", ["ss"], ["p"], "softmax", axis=-1),
        h.make_node("MatMul", ["p", "v"], ["o"], "context"),
        h.make_node("Add", ["o", "bo"], ["ob"], "bias"),
        h.make_node("Tanh", ["ob"], ["t"], "tanh"),
        h.make_node("Gelu", ["t"], ["y"], "gelu"),
    ]
    g = h.make_graph(nodes, "attn", [h.make_tensor_value_info("x", T.FLOAT, [1, 8, 16])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 8, 16])], inits)
    # Tanh then Gelu read nothing else: one pointwise region, one table.
    ops = ["QuantizeLinear", "QGemm", "QGemm", "QGemm", "Transpose", "QMatMul", "QMul",
           "QSoftmax", "QMatMul", "QAdd", "QLookup", "DequantizeLinear"]
    return h.make_model(g, opset_imports=[h.make_opsetid("", 20)]), (1, 8, 16), ops


class QuantizeOpsTest(CliTestCase):
    def check(self, build):
        rng = np.random.default_rng(7)
        model, shape, ops = build(rng)
        path = self.path("model.onnx")
        onnx.save(model, path)
        calib = self.path("calib")
        os.mkdir(calib)
        for i in range(32):
            np.save(os.path.join(calib, f"s{i:02d}.npy"), rng.normal(0, 1, shape).astype(np.float32))
        inputs = self.path("in.npz")
        np.savez(inputs, x=rng.normal(0, 1, shape).astype(np.float32))
        f32, i8, qir = self.path("f32"), self.path("i8"), self.path("i8.mblt")
        self.ok("compile", "--model", path, "--out", f32)
        self.ok("compile", "--model", path, "--calib-data-path", calib, "--out", i8,
                "--save-quantized-ir", qir)
        quantized = onnx.load(qir)
        onnx.checker.check_model(quantized)
        self.assertEqual([n.op_type for n in quantized.graph.node], ops)
        outs = {}
        for name, art, threads in (("f32", f32, "1"), ("i8", i8, "1"), ("i8t", i8, "3")):
            out = self.path(name + ".npz")
            self.ok("run", "--artifact", art, "--input", inputs, "--out", out, "--threads", threads)
            with open(out, "rb") as f:
                outs[name + ".bytes"] = f.read()
            with np.load(out) as f:
                outs[name] = {k: f[k] for k in f.files}
        self.assertEqual(outs["i8.bytes"], outs["i8t.bytes"])
        for key, ref in outs["f32"].items():
            ref = ref.astype(np.float64)
            noise = ref - outs["i8"][key]
            sqnr = 10 * np.log10(np.sum(ref * ref) / np.sum(noise * noise))
            print(f"{quantized.graph.name} {key}: int8 SQNR {sqnr:.2f} dB")
            self.assertGreaterEqual(sqnr, 25.0, key)

    def test_conv_net(self):
        self.check(conv_net)

    def test_attention_block(self):
        self.check(attention)

    def test_boundary_ops_on_edge_values(self):
        # The per-tensor QuantizeLinear / DequantizeLinear every quantized
        # graph begins and ends with, on the values where a fast path could
        # differ from ONNX's definition: halfway points (round half to
        # even), NaN (0), infinities and huge values (saturate), denormals,
        # against numpy computing the definition in float32.
        rng = np.random.default_rng(5)
        scale = np.float32(0.75)
        # x / scale lands exactly on these (0.75 · k.5 is exact in float32).
        halfway = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, 127.5, -128.5, -129.5,
                            130.5, -126.5], np.float32) * scale
        edge = np.concatenate([halfway, np.array([np.nan, np.inf, -np.inf, 3e38, -3e38, 1e-45,
                                                  -1e-45, 0.0, -0.0], np.float32)])
        x = np.concatenate([edge, rng.normal(0, 60, 4096 - edge.size).astype(np.float32)])
        for dtype, zp in ((T.INT8, -3), (T.UINT8, 130)):
            np_type = np.int8 if dtype == T.INT8 else np.uint8
            info = np.iinfo(np_type)
            g = h.make_graph(
                [h.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], "q"),
                 h.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], "dq")],
                "qdq", [h.make_tensor_value_info("x", T.FLOAT, [1, x.size])],
                [h.make_tensor_value_info("q", dtype, [1, x.size]),
                 h.make_tensor_value_info("y", T.FLOAT, [1, x.size])],
                [nh.from_array(np.array(scale), "s"), nh.from_array(np.array(zp, np_type), "z")])
            path = self.path(f"qdq_{np_type.__name__}.onnx")
            onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
            art, inputs, out = self.path("qdq.art"), self.path("qdq_in.npz"), self.path("qdq.npz")
            np.savez(inputs, x=x[None])
            self.ok("compile", "--model", path, "--out", art)
            self.ok("run", "--artifact", art, "--input", inputs, "--out", out, "--threads", "2")
            with np.errstate(invalid="ignore", over="ignore"):
                v = np.divide(x, scale, dtype=np.float32)
                v = np.where(np.isnan(v), np.float32(0), np.rint(v))
                want_q = np.clip(v.astype(np.float64) + zp, info.min, info.max).astype(np_type)
            want_y = ((want_q.astype(np.float32) - np.float32(zp)) * scale).astype(np.float32)
            with np.load(out) as f:
                np.testing.assert_array_equal(f["q"][0], want_q)
                np.testing.assert_array_equal(f["y"][0], want_y)


if __name__ == "__main__":
    unittest.main()
