"""The graph rewrites before quantization (docs/optimization.md) and the
quantizer on degenerate tensors.

Each rewrite on a small graph built the way exporters write it: `parse
--optimize` must apply it (the op types before and after are checked), and
the rewritten graph, compiled in float32, must give the unrewritten one's
outputs within float32 rounding. Each degenerate case (a constant epsilon,
an all-zero or near-zero channel beside a bias, a zero-range activation,
denormal values) must quantize into a valid artifact whose int8 outputs
follow the float ones.
"""
import os
import unittest

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from harness import CliTestCase

RTOL, ATOL = 1e-5, 1e-6


def model(nodes, inputs, outputs, inits, opset=13):
    g = h.make_graph(nodes, "g", inputs, outputs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 7
    return m


def vi(name, shape, dtype=T.FLOAT):
    return h.make_tensor_value_info(name, dtype, shape)


def const(name, array):
    return nh.from_array(np.asarray(array), name)


def bn_params(rng, prefix, c):
    return [const(prefix + ".scale", rng.uniform(0.5, 2, c).astype(np.float32)),
            const(prefix + ".bias", rng.normal(0, 1, c).astype(np.float32)),
            const(prefix + ".mean", rng.normal(0, 1, c).astype(np.float32)),
            const(prefix + ".var", rng.uniform(0.2, 3, c).astype(np.float32))]


def bn(x, y, prefix):
    return h.make_node("BatchNormalization", [x] + [prefix + s for s in
                       (".scale", ".bias", ".mean", ".var")], [y], prefix, epsilon=1e-3)


class OptimizeTest(CliTestCase):
    def check_rewrite(self, m, shape, before, after, rewrites, *extra):
        """parse --optimize turns op list `before` into `after`, reports
        `rewrites`, and the float32 outputs agree."""
        src = self.path("m.onnx")
        onnx.save(m, src)
        self.assertEqual([n.op_type for n in m.graph.node], before)
        plain, opt = self.path("plain.mblt"), self.path("opt.mblt")
        self.ok("parse", "--model", src, "--output", plain)
        r = self.ok("parse", "--model", src, "--optimize", *extra, "--output", opt)
        for name in rewrites:
            self.assertIn(name, r.stdout)
        self.assertEqual([n.op_type for n in onnx.load(opt).graph.node], after)
        rng = np.random.default_rng(3)
        inputs = self.path("in.npz")
        np.savez(inputs, x=rng.normal(0, 2, shape).astype(np.float32))
        outs = []
        for ir in (plain, opt):
            art, out = ir + ".art", ir + ".npz"
            # compile would rewrite the plain graph too.
            self.ok("compile", "--mblt", ir, "--out", art, "--no-optimize")
            self.ok("run", "--artifact", art, "--input", inputs, "--out", out)
            with np.load(out) as f:
                outs.append({k: f[k] for k in f.files})
        for key, want in outs[0].items():
            np.testing.assert_allclose(outs[1][key], want, rtol=RTOL, atol=ATOL, err_msg=key)

    # --- BatchNormalization --------------------------------------------------

    def test_batchnorm_folds_into_conv(self):
        rng = np.random.default_rng(0)
        w = const("w", rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32))
        b = const("b", rng.normal(0, 0.1, 4).astype(np.float32))
        m = model([h.make_node("Conv", ["x", "w", "b"], ["c"], "conv", pads=[1, 1, 1, 1]),
                   bn("c", "y", "bn")],
                  [vi("x", [1, 3, 6, 6])], [vi("y", [1, 4, 6, 6])], [w, b] + bn_params(rng, "bn", 4))
        self.check_rewrite(m, (1, 3, 6, 6), ["Conv", "BatchNormalization"], ["Conv"],
                           ["fold-batchnorm 1"])

    def test_batchnorm_folds_into_grouped_conv_transpose(self):
        rng = np.random.default_rng(1)
        # W is (C, O/group, k, k): 4 input channels, 2 groups of 3 outputs.
        w = const("w", rng.normal(0, 0.3, (4, 3, 2, 2)).astype(np.float32))
        m = model([h.make_node("ConvTranspose", ["x", "w"], ["c"], "deconv", group=2,
                               strides=[2, 2]),
                   bn("c", "y", "bn")],
                  [vi("x", [1, 4, 3, 3])], [vi("y", [1, 6, 6, 6])], [w] + bn_params(rng, "bn", 6))
        self.check_rewrite(m, (1, 4, 3, 3), ["ConvTranspose", "BatchNormalization"],
                           ["ConvTranspose"], ["fold-batchnorm 1"])

    def test_batchnorm_folds_into_gemm_either_layout(self):
        for trans_b in (0, 1):
            with self.subTest(transB=trans_b):
                rng = np.random.default_rng(2)
                shape = (5, 8) if trans_b else (8, 5)
                w = const("w", rng.normal(0, 0.3, shape).astype(np.float32))
                c = const("c", rng.normal(0, 0.1, 5).astype(np.float32))
                m = model([h.make_node("Gemm", ["x", "w", "c"], ["g"], "fc", transB=trans_b,
                                       beta=0.5),
                           bn("g", "y", "bn")],
                          [vi("x", [2, 8])], [vi("y", [2, 5])], [w, c] + bn_params(rng, "bn", 5))
                self.check_rewrite(m, (2, 8), ["Gemm", "BatchNormalization"], ["Gemm"],
                                   ["fold-batchnorm 1"])

    def test_batchnorm_without_a_producer_becomes_mul_and_add(self):
        rng = np.random.default_rng(4)
        m = model([h.make_node("Relu", ["x"], ["r"], "relu"), bn("r", "y", "bn")],
                  [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])], bn_params(rng, "bn", 3))
        self.check_rewrite(m, (1, 3, 4, 4), ["Relu", "BatchNormalization"], ["Relu", "Mul", "Add"],
                           ["batchnorm-to-affine 1"])

    def test_batchnorm_after_a_conv_read_twice_does_not_fold_into_it(self):
        rng = np.random.default_rng(5)
        w = const("w", rng.normal(0, 0.3, (3, 3, 1, 1)).astype(np.float32))
        m = model([h.make_node("Conv", ["x", "w"], ["c"], "conv"), bn("c", "b", "bn"),
                   h.make_node("Add", ["b", "c"], ["y"], "add")],
                  [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])], [w] + bn_params(rng, "bn", 3))
        self.check_rewrite(m, (1, 3, 4, 4), ["Conv", "BatchNormalization", "Add"],
                           ["Conv", "Mul", "Add", "Add"], ["batchnorm-to-affine 1"])

    # --- arithmetic and activations -------------------------------------------

    # --- Pad -------------------------------------------------------------

    def test_zero_pad_folds_into_the_conv_after_it(self):
        # tf2onnx's "SAME" padding of a stride-2 depthwise conv: end pads only.
        rng = np.random.default_rng(4)
        w = const("w", rng.normal(0, 0.3, (4, 1, 3, 3)).astype(np.float32))
        pads = const("pads", np.array([0, 0, 0, 0, 0, 0, 1, 1], np.int64))
        zero = const("zero", np.array(0.0, np.float32))
        for ins, inits in ((["x", "pads"], [w, pads]), (["x", "pads", "zero"], [w, pads, zero])):
            m = model([h.make_node("Pad", ins, ["p"], "pad"),
                       h.make_node("Conv", ["p", "w"], ["y"], "conv", group=4, strides=[2, 2],
                                   pads=[0, 1, 0, 0])],
                      [vi("x", [1, 4, 8, 8])], [vi("y", [1, 4, 4, 4])], inits)
            with self.subTest(inputs=ins):
                self.check_rewrite(m, (1, 4, 8, 8), ["Pad", "Conv"], ["Conv"], ["fold-pad 1"])

    def test_a_pad_that_is_not_zero_or_spatial_stays(self):
        # Reflect mode, a non-zero constant, -0, and a pad of the channels.
        rng = np.random.default_rng(5)
        cases = [  # Pad attributes, pads, constant value, W's input channels, Y
            ({"mode": "reflect"}, [0, 0, 1, 1, 0, 0, 1, 1], None, 2, [1, 2, 4, 4]),
            ({}, [0, 0, 1, 1, 0, 0, 1, 1], 0.5, 2, [1, 2, 4, 4]),
            ({}, [0, 0, 1, 1, 0, 0, 1, 1], -0.0, 2, [1, 2, 4, 4]),
            ({}, [0, 1, 0, 0, 0, 0, 0, 0], None, 3, [1, 2, 2, 2]),
        ]
        for attrs, p, value, wc, out in cases:
            inits = [const("w", rng.normal(0, 0.3, (2, wc, 3, 3)).astype(np.float32)),
                     const("pads", np.array(p, np.int64))]
            ins = ["x", "pads"]
            if value is not None:
                inits.append(const("v", np.array(value, np.float32)))
                ins.append("v")
            m = model([h.make_node("Pad", ins, ["p"], "pad", **attrs),
                       h.make_node("Conv", ["p", "w"], ["y"], "conv")],
                      [vi("x", [1, 2, 4, 4])], [vi("y", out)], inits)
            with self.subTest(attrs=attrs, pads=p, value=value):
                self.check_rewrite(m, (1, 2, 4, 4), ["Pad", "Conv"], ["Pad", "Conv"], [])

    def test_div_and_sub_by_constants(self):
        m = model([h.make_node("Div", ["x", "d"], ["a"], "div"),
                   h.make_node("Sub", ["a", "s"], ["y"], "sub")],
                  [vi("x", [2, 3])], [vi("y", [2, 3])],
                  [const("d", np.array([2, 3, 7], np.float32)), const("s", np.float32(0.25))])
        self.check_rewrite(m, (2, 3), ["Div", "Sub"], ["Mul", "Add"],
                           ["div-to-mul 1", "sub-to-add 1"])

    def test_division_by_zero_and_integer_division_stay(self):
        m = model([h.make_node("Div", ["x", "z"], ["y"], "div")],
                  [vi("x", [2])], [vi("y", [2])], [const("z", np.array([0, 2], np.float32))])
        self.check_rewrite(m, (2,), ["Div"], ["Div"], ["0 rewrites"])

    def test_hardsigmoid_spelled_out(self):
        m = model([h.make_node("Add", ["x", "three"], ["a"], "add"),
                   h.make_node("Clip", ["a", "zero", "six"], ["c"], "clip"),
                   h.make_node("Div", ["c", "six"], ["y"], "div")],
                  [vi("x", [4, 5])], [vi("y", [4, 5])],
                  [const("three", np.float32(3)), const("zero", np.float32(0)),
                   const("six", np.float32(6))])
        self.check_rewrite(m, (4, 5), ["Add", "Clip", "Div"], ["HardSigmoid"],
                           ["hardsigmoid 1", "div-to-mul 1"])

    def test_hardswish_spelled_out_at_opset_13_and_14(self):
        for opset, after in ((13, ["HardSigmoid", "Mul"]), (14, ["HardSwish"])):
            with self.subTest(opset=opset):
                m = model([h.make_node("Add", ["x", "three"], ["a"], "add"),
                           h.make_node("Clip", ["a", "zero", "six"], ["c"], "clip"),
                           h.make_node("Mul", ["x", "c"], ["m"], "mul"),
                           h.make_node("Div", ["m", "six"], ["y"], "div")],
                          [vi("x", [4, 5])], [vi("y", [4, 5])],
                          [const("three", np.float32(3)), const("zero", np.float32(0)),
                           const("six", np.float32(6))], opset=opset)
                self.check_rewrite(m, (4, 5), ["Add", "Clip", "Mul", "Div"], after,
                                   ["hardswish 1"])

    def test_equalization_balances_conv_then_depthwise_and_gemm_pairs(self):
        rng = np.random.default_rng(7)
        w1 = rng.normal(0, 0.3, (4, 3, 1, 1)).astype(np.float32)
        w1[2] *= 300  # one channel far larger than the rest
        w2 = rng.normal(0, 0.3, (4, 1, 3, 3)).astype(np.float32)  # depthwise
        g1 = rng.normal(0, 0.3, (36, 5)).astype(np.float32)
        g1[:, 1] *= 50
        g2 = rng.normal(0, 0.3, (2, 5)).astype(np.float32)  # transB
        m = model([h.make_node("Conv", ["x", "w1", "b1"], ["c1"], "pw"),
                   h.make_node("Relu", ["c1"], ["r1"], "relu1"),
                   h.make_node("Conv", ["r1", "w2"], ["c2"], "dw", group=4),
                   h.make_node("Flatten", ["c2"], ["f"], "flatten"),
                   h.make_node("Gemm", ["f", "g1"], ["d1"], "fc1"),
                   h.make_node("Relu", ["d1"], ["r2"], "relu2"),
                   h.make_node("Gemm", ["r2", "g2", "b2"], ["y"], "fc2", transB=1)],
                  [vi("x", [1, 3, 5, 5])], [vi("y", [1, 2])],
                  [const("w1", w1), const("b1", rng.normal(0, 1, 4).astype(np.float32)),
                   const("w2", w2), const("g1", g1), const("g2", g2),
                   const("b2", np.zeros(2, np.float32))])
        ops = [n.op_type for n in m.graph.node]
        self.check_rewrite(m, (1, 3, 5, 5), ops, ops, ["equalize"], "--equalize")
        # The large channels are balanced against their readers.
        eq = {t.name: nh.to_array(t) for t in onnx.load(self.path("opt.mblt")).graph.initializer}
        w1e = next(v for k, v in eq.items() if k.startswith("pw.weight_eq"))
        w2e = next(v for k, v in eq.items() if k.startswith("dw.weight_eq"))
        r1 = np.abs(w1e).reshape(4, -1).max(1)
        r2 = np.abs(w2e).reshape(4, -1).max(1)
        np.testing.assert_allclose(r1, r2, rtol=1e-3)
        self.assertLess(r1.max() / r1.min(), (np.abs(w1).reshape(4, -1).max(1).max() /
                                              np.abs(w1).reshape(4, -1).max(1).min()))

    def test_constant_subgraphs_fold(self):
        rng = np.random.default_rng(6)
        # Weights stored as float16 and transposed at run time.
        w16 = const("w16", rng.normal(0, 0.3, (6, 4)).astype(np.float16))
        m = model([h.make_node("Cast", ["w16"], ["w32"], "cast", to=T.FLOAT),
                   h.make_node("Transpose", ["w32"], ["wt"], "transpose", perm=[1, 0]),
                   h.make_node("MatMul", ["x", "wt"], ["y"], "matmul")],
                  [vi("x", [3, 4])], [vi("y", [3, 6])], [w16])
        self.check_rewrite(m, (3, 4), ["Cast", "Transpose", "MatMul"], ["MatMul"],
                           ["fold-constants 2"])


class FloatCompileTest(CliTestCase):
    """A float32 compile applies the rewrites unless --no-optimize."""

    def conv_bn_relu(self, opset=13):
        rng = np.random.default_rng(21)
        w = const("w", rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32))
        m = model([h.make_node("Conv", ["x", "w"], ["c"], "conv", pads=[1, 1, 1, 1]),
                   bn("c", "b", "bn"),
                   h.make_node("Div", ["b", "d"], ["q"], "div"),
                   h.make_node("Relu", ["q"], ["y"], "relu")],
                  [vi("x", [1, 3, 6, 6])], [vi("y", [1, 4, 6, 6])],
                  [w, const("d", np.float32(4.0))] + bn_params(rng, "bn", 4), opset=opset)
        src = self.path(f"m{opset}.onnx")
        onnx.save(m, src)
        return src

    def compile_and_run(self, src, *extra):
        art = self.path("a%d.art" % len(os.listdir(self.tmp)))
        r = self.ok("compile", "--model", src, "--out", art, *extra)
        inputs = self.path("in.npz")
        np.savez(inputs, x=np.random.default_rng(5).normal(0, 2, (1, 3, 6, 6)).astype(np.float32))
        out = art + ".npz"
        self.ok("run", "--artifact", art, "--input", inputs, "--out", out)
        with np.load(out) as f:
            return r.stdout, f["y"]

    def test_compile_folds_and_no_optimize_keeps_the_graph(self):
        src = self.conv_bn_relu()
        stdout, y = self.compile_and_run(src)
        self.assertEqual(stdout, "Optimize OK: 2 rewrites (div-to-mul 1, fold-batchnorm 1)\n"
                                 "Compile  OK: 3 ops lowered · plan written\n")
        plain_stdout, plain = self.compile_and_run(src, "--no-optimize")
        self.assertEqual(plain_stdout, "Compile  OK: 4 ops lowered · plan written\n")
        np.testing.assert_allclose(y, plain, rtol=RTOL, atol=ATOL)

    def test_float_compile_keeps_the_opset(self):
        # Only the int8 graph needs opset 13; a float compile converts nothing.
        stdout, _ = self.compile_and_run(self.conv_bn_relu(opset=9))
        self.assertNotIn("raise-opset", stdout)
        self.assertIn("fold-batchnorm 1", stdout)

    def test_a_quantized_weight_stays_int8(self):
        # DequantizeLinear of an int8 initializer, as QDQ exporters write it:
        # folding it would turn the int8 weight into a float32 one.
        wq = const("wq", np.arange(-6, 6, dtype=np.int8).reshape(4, 3))
        m = model([h.make_node("DequantizeLinear", ["wq", "s"], ["w"], "dq"),
                   h.make_node("MatMul", ["x", "w"], ["y"], "matmul")],
                  [vi("x", [2, 4])], [vi("y", [2, 3])], [wq, const("s", np.float32(0.5))])
        src = self.path("qdq.onnx")
        onnx.save(m, src)
        art = self.path("qdq.art")
        r = self.ok("compile", "--model", src, "--out", art)
        self.assertEqual(r.stdout, "Compile  OK: 2 ops lowered · plan written\n")


class QuantizeCase(CliTestCase):
    def quantize(self, m, shape, min_sqnr=30.0, scale=1.0):
        src = self.path("m.onnx")
        onnx.save(m, src)
        rng = np.random.default_rng(11)
        calib = self.path("calib")
        os.mkdir(calib)
        for i in range(8):
            np.save(os.path.join(calib, f"s{i}.npy"), (scale * rng.normal(0, 1, shape)).astype(np.float32))
        inputs = self.path("in.npz")
        np.savez(inputs, x=(scale * rng.normal(0, 1, shape)).astype(np.float32))
        f32, i8, qir = self.path("f32"), self.path("i8"), self.path("q.mblt")
        self.ok("compile", "--model", src, "--out", f32)
        self.ok("compile", "--model", src, "--calib-data-path", calib, "--out", i8,
                "--save-quantized-ir", qir)
        q = onnx.load(qir)
        onnx.checker.check_model(q)
        outs = []
        for art in (f32, i8):
            out = art + ".npz"
            self.ok("run", "--artifact", art, "--input", inputs, "--out", out)
            with np.load(out) as f:
                outs.append(f["y"].astype(np.float64))
        ref, got = outs
        noise = np.sum((ref - got) ** 2)
        if np.sum(ref * ref) > 0 and noise > 0:
            self.assertGreaterEqual(10 * np.log10(np.sum(ref * ref) / noise), min_sqnr)
        return q


class DegenerateQuantizationTest(QuantizeCase):
    """Every case compiles to a valid int8 artifact that follows float32."""

    def test_add_of_a_tiny_epsilon_gets_a_zero_multiplier(self):
        # var + 1e-12 as LayerNorm exports write it: the constant's scale is
        # below 2^-32 of the activation's, so its rescale is (0, 1) — valid,
        # and it adds nothing. (Varying values: a scalar would make the
        # Relu + Add one table, test_quantize_ops.)
        eps = (np.arange(1, 17) * 1e-12).astype(np.float32)
        m = model([h.make_node("Relu", ["x"], ["r"], "relu"),
                   h.make_node("Add", ["r", "eps"], ["y"], "add")],
                  [vi("x", [4, 16])], [vi("y", [4, 16])], [const("eps", eps)])
        q = self.quantize(m, (4, 16))
        add = next(n for n in q.graph.node if n.op_type == "QAdd")
        attrs = {a.name: a.i for a in add.attribute}
        self.assertEqual((attrs["b_multiplier"], attrs["b_shift"]), (0, 1))

    def test_conv_with_a_zero_channel_and_a_near_zero_channel_beside_biases(self):
        rng = np.random.default_rng(12)
        w = rng.normal(0, 0.3, (4, 2, 3, 3)).astype(np.float32)
        w[1] = 0  # pruned
        w[2] *= 1e-30  # dead, its bias alive: the scale floor keeps the bias in int32
        b = np.array([0.1, 0.5, -2.0, 0.0], np.float32)
        m = model([h.make_node("Conv", ["x", "w", "b"], ["y"], "conv", pads=[1, 1, 1, 1])],
                  [vi("x", [1, 2, 5, 5])], [vi("y", [1, 4, 5, 5])], [const("w", w), const("b", b)])
        q = self.quantize(m, (1, 2, 5, 5))
        self.assertIn("QConv", [n.op_type for n in q.graph.node])

    def test_zero_range_activation_and_denormal_values(self):
        # z is 0 everywhere (a zero-range activation); d holds denormals.
        m = model([h.make_node("Relu", ["x"], ["p"], "relu"),
                   h.make_node("Neg", ["p"], ["n"], "neg"),
                   h.make_node("Relu", ["n"], ["z"], "relu0"),  # -relu(x) <= 0: always 0
                   h.make_node("Mul", ["x", "tiny"], ["d"], "denormal"),
                   h.make_node("Add", ["z", "d"], ["s"], "sum"),
                   h.make_node("Add", ["s", "x"], ["y"], "out")],
                  [vi("x", [4, 8])], [vi("y", [4, 8])], [const("tiny", np.float32(1e-40))])
        self.quantize(m, (4, 8))

    def test_opset_9_model_is_raised_to_13(self):
        # The failure exported opset-9 models met: QuantizeLinear needs opset 10+.
        rng = np.random.default_rng(13)
        w = const("w", rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32))
        m = model([h.make_node("Conv", ["x", "w"], ["c"], "conv", pads=[1, 1, 1, 1]),
                   bn("c", "b", "bn"),
                   h.make_node("Clip", ["b"], ["r"], "relu6", min=0.0, max=6.0),
                   h.make_node("Slice", ["r"], ["y"], "crop", starts=[1], ends=[5], axes=[2])],
                  [vi("x", [1, 3, 6, 6])], [vi("y", [1, 4, 4, 6])],
                  [w] + bn_params(rng, "bn", 4), opset=9)
        q = self.quantize(m, (1, 3, 6, 6))
        self.assertEqual([o.version for o in q.opset_import if o.domain == ""], [13])
        self.assertNotIn("BatchNormalization", [n.op_type for n in q.graph.node])


class PointwiseRegionTest(QuantizeCase):
    """Exporters' activation chains become one int8 table each."""

    def test_silu_gelu_and_mish_are_one_table_each(self):
        nodes = [
            # SiLU: x * Sigmoid(x)
            h.make_node("Sigmoid", ["x"], ["sg"], "silu.sigmoid"),
            h.make_node("Mul", ["x", "sg"], ["a"], "silu"),
            # a Gemm between the activations keeps their regions apart (a
            # chain of them would be one table of their composition)
            h.make_node("Gemm", ["a", "w"], ["a2"], "fc0"),
            # GELU, torch's erf form: x * 0.5 * (1 + erf(x / sqrt(2)))
            h.make_node("Div", ["a2", "sqrt2"], ["g0"], "gelu.div"),
            h.make_node("Erf", ["g0"], ["g1"], "gelu.erf"),
            h.make_node("Add", ["g1", "one"], ["g2"], "gelu.add"),
            h.make_node("Mul", ["a2", "g2"], ["g3"], "gelu.mul"),
            h.make_node("Mul", ["g3", "half"], ["b"], "gelu"),
            h.make_node("Gemm", ["b", "w"], ["c"], "fc"),
            # Mish: x * tanh(softplus(x))
            h.make_node("Softplus", ["c"], ["m0"], "mish.softplus"),
            h.make_node("Tanh", ["m0"], ["m1"], "mish.tanh"),
            h.make_node("Mul", ["c", "m1"], ["y"], "mish"),
        ]
        rng = np.random.default_rng(14)
        m = model(nodes, [vi("x", [4, 8])], [vi("y", [4, 8])],
                  [const("sqrt2", np.float32(np.sqrt(2))), const("one", np.float32(1)),
                   const("half", np.float32(0.5)),
                   const("w", rng.normal(0, 0.4, (8, 8)).astype(np.float32))])
        # Random weights and five requantizations in a row: the bar of
        # test_quantize_ops.py's random-weight chains.
        q = self.quantize(m, (4, 8), min_sqnr=25.0)
        self.assertEqual([n.op_type for n in q.graph.node],
                         ["QuantizeLinear", "QLookup", "QGemm", "QLookup", "QGemm", "QLookup",
                          "DequantizeLinear"])


if __name__ == "__main__":
    unittest.main()
