"""The integer ops of domain ai.eulernpu (docs/quantization.md, "The quantized
graph") through compile + run on cpu_ref, byte for byte against a numpy int64
reference written from the document's formulas; the same bytes for every
thread count; and the errors a malformed op gets."""
import math
import os
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from harness import CliTestCase

DOMAIN = "ai.eulernpu"
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


# --- the reference: docs/quantization.md in numpy int64 ------------------------

def encode(r):
    """(M, S) with r ~ M * 2^-S, M in [2^30, 2^31), S in [1, 62]; (0, 1) below 2^-32."""
    if r < 2.0 ** -32:
        return 0, 1
    m, e = math.frexp(r)
    q = round(m * 2 ** 31)  # Python rounds half to even
    if q == 1 << 31:
        q, e = 1 << 30, e + 1
    return q, 31 - e


def rounding_multiply(v, m, s):
    """saturate_int32((v * M + 2^(S-1)) >> S); M and S broadcast against v."""
    v = np.asarray(v, np.int64)
    m = np.asarray(m, np.int64)
    s = np.asarray(s, np.int64)
    return np.clip((v * m + np.left_shift(np.int64(1), s - 1)) >> s, INT32_MIN, INT32_MAX)


def requantize(acc, m, s, zp, qmin=-128, qmax=127):
    return np.clip(rounding_multiply(acc, m, s) + zp, qmin, qmax).astype(np.int8)


def channel(v, ndim):
    """A per-output-channel vector shaped to broadcast over (N, O, spatial...)."""
    return np.asarray(v, np.int64).reshape((1, -1) + (1,) * (ndim - 2))


def conv_ref(x, w, bias, m, s, strides, pads, dilations, group, xzp, yzp, qmin=-128, qmax=127):
    """acc = Bias[o] + sum W * (X - x_zp) over the taps; padded taps add 0."""
    n = x.ndim - 2
    xp = np.pad(x.astype(np.int64) - xzp,
                [(0, 0), (0, 0)] + [(pads[i], pads[i + n]) for i in range(n)])
    o_ch, c_ch = w.shape[0], x.shape[1]
    og, cg = o_ch // group, c_ch // group
    kernel = w.shape[2:]
    out = [(x.shape[2 + i] + pads[i] + pads[i + n] - dilations[i] * (kernel[i] - 1) - 1)
           // strides[i] + 1 for i in range(n)]
    acc = np.zeros((x.shape[0], o_ch, *out), np.int64)
    for tap in np.ndindex(*kernel):
        sl = tuple(slice(tap[i] * dilations[i], tap[i] * dilations[i] + strides[i] * (out[i] - 1)
                         + 1, strides[i]) for i in range(n))
        patch = xp[(slice(None), slice(None)) + sl]
        for g in range(group):
            wg = w[(slice(g * og, (g + 1) * og), slice(None)) + tap].astype(np.int64)
            acc[:, g * og:(g + 1) * og] += np.einsum("oc,nc...->no...", wg,
                                                     patch[:, g * cg:(g + 1) * cg])
    acc += channel(bias, acc.ndim)
    return requantize(acc, channel(m, acc.ndim), channel(s, acc.ndim), yzp, qmin, qmax)


def conv_transpose_ref(x, w, bias, m, s, strides, pads, dilations, out_pad, group, xzp, yzp,
                       qmin=-128, qmax=127):
    """Each input tap i, kernel tap k adds (X - x_zp) * W[c, oc, k] at i*s - pad + k*d;
    positions no input reaches hold Bias."""
    n = x.ndim - 2
    c_ch, og = w.shape[0], w.shape[1]
    cg = c_ch // group
    kernel = w.shape[2:]
    full = [strides[i] * (x.shape[2 + i] - 1) + out_pad[i] + dilations[i] * (kernel[i] - 1) + 1
            for i in range(n)]
    big = np.zeros((x.shape[0], og * group, *full), np.int64)
    xc = x.astype(np.int64) - xzp
    for tap in np.ndindex(*kernel):
        sl = tuple(slice(tap[i] * dilations[i], tap[i] * dilations[i] + strides[i] *
                         (x.shape[2 + i] - 1) + 1, strides[i]) for i in range(n))
        for g in range(group):
            wg = w[(slice(g * cg, (g + 1) * cg), slice(None)) + tap].astype(np.int64)
            contrib = np.einsum("co,nc...->no...", wg, xc[:, g * cg:(g + 1) * cg])
            big[(slice(None), slice(g * og, (g + 1) * og)) + sl] += contrib
    crop = tuple(slice(pads[i], full[i] - pads[i + n]) for i in range(n))
    acc = big[(slice(None), slice(None)) + crop] + channel(bias, big.ndim)
    return requantize(acc, channel(m, acc.ndim), channel(s, acc.ndim), yzp, qmin, qmax)


def gemm_ref(a, w, bias, m, s, azp, yzp, qmin=-128, qmax=127):
    acc = (a.astype(np.int64) - azp) @ w.astype(np.int64).T + np.asarray(bias, np.int64)
    return requantize(acc, np.asarray(m, np.int64), np.asarray(s, np.int64), yzp, qmin, qmax)


def matmul_ref(a, b, azp, bzp, yzp, m, s, qmin=-128, qmax=127):
    acc = np.matmul(a.astype(np.int64) - azp, b.astype(np.int64) - bzp)
    return requantize(acc, m, s, yzp, qmin, qmax)


def add_ref(a, b, p, subtract=False):
    """The left-shift-20 scheme of docs/quantization.md."""
    a2 = rounding_multiply((a.astype(np.int64) - p["a_zero_point"]) * (1 << 20),
                           p["a_multiplier"], p["a_shift"])
    b2 = rounding_multiply((b.astype(np.int64) - p["b_zero_point"]) * (1 << 20),
                           p["b_multiplier"], p["b_shift"])
    total = a2 - b2 if subtract else a2 + b2
    return requantize(total, p["y_multiplier"], p["y_shift"], p["y_zero_point"],
                      p.get("qmin", -128), p.get("qmax", 127))


def mul_ref(a, b, p):
    acc = (a.astype(np.int64) - p["a_zero_point"]) * (b.astype(np.int64) - p["b_zero_point"])
    return requantize(acc, p["multiplier"], p["shift"], p["y_zero_point"], p.get("qmin", -128),
                      p.get("qmax", 127))


def pool_out_size(in_size, k, s, d, pb, pe, ceil_mode):
    """ONNX AveragePool's output size (a window never starts in the end padding)."""
    span = d * (k - 1) + 1
    num = in_size + pb + pe - span
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= in_size + pb:
        out -= 1
    return out


def average_pool_ref(x, kernel, strides, pads, dilations, ceil_mode, include_pad, m, s, xzp, yzp):
    """acc = sum (X - x_zp) over the window's taps inside X; n counts padding taps
    with count_include_pad = 1, never the ceil_mode overhang; (M[n], S[n])."""
    nd = x.ndim - 2
    outs = [pool_out_size(x.shape[2 + i], kernel[i], strides[i], dilations[i], pads[i],
                          pads[i + nd], ceil_mode) for i in range(nd)]
    y = np.zeros(x.shape[:2] + tuple(outs), np.int8)
    xc = x.astype(np.int64) - xzp
    for pos in np.ndindex(*outs):
        axes = []
        count = 1
        for i in range(nd):
            taps = [pos[i] * strides[i] - pads[i] + k * dilations[i] for k in range(kernel[i])]
            inside = [t for t in taps if 0 <= t < x.shape[2 + i]]
            padded = [t for t in taps if -pads[i] <= t < x.shape[2 + i] + pads[i + nd]]
            count *= len(padded) if include_pad else len(inside)
            axes.append(inside)
        acc = np.zeros(x.shape[:2], np.int64)
        for idx in np.ndindex(*[len(a) for a in axes]):
            acc += xc[(slice(None), slice(None)) + tuple(axes[i][idx[i]] for i in range(nd))]
        y[(slice(None), slice(None)) + pos] = requantize(acc, m[count], s[count], yzp)
    return y


def softmax_ref(x, exp_table, axis):
    xi = x.astype(np.int64)
    mx = xi.max(axis=axis, keepdims=True)
    e = np.asarray(exp_table, np.int64)[mx - xi]
    total = e.sum(axis=axis, keepdims=True)
    q = (2 * 256 * e + total) // (2 * total) - 128
    return np.clip(q, -128, 127).astype(np.int8)


def exp_table(scale):
    return np.round(np.ldexp(np.exp(-scale * np.arange(256)), 20)).astype(np.int32)


# --- models ----------------------------------------------------------------------

def qmodel(nodes, inputs, inits=(), outputs=("y",)):
    """A model of `nodes` with int8 graph inputs (name -> array) and initializers."""
    graph = helper.make_graph(
        nodes, "qops",
        [helper.make_tensor_value_info(k, TensorProto.INT8, v.shape) for k, v in inputs.items()],
        [helper.make_tensor_value_info(o, TensorProto.INT8, None) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(DOMAIN, 1)])
    model.ir_version = 8
    return model


def qnode(op, inputs, **attrs):
    return helper.make_node(op, inputs, ["y"], name=op.lower(), domain=DOMAIN, **attrs)


def int8(rng, shape, lo=-128, hi=127):
    return rng.integers(lo, hi + 1, shape).astype(np.int8)


def multipliers(rng, count, lo=2.0 ** -12, hi=2.0 ** -6):
    pairs = [encode(float(r)) for r in np.exp(rng.uniform(np.log(lo), np.log(hi), count))]
    return (np.array([p[0] for p in pairs], np.int32), np.array([p[1] for p in pairs], np.int32))


class QOpsTest(CliTestCase):
    def run_model(self, model, inputs, threads=None, name="m", backend="cpu_ref"):
        src = self.path(f"{name}.onnx")
        onnx.save(model, src)
        np.savez(self.path(f"{name}.in.npz"), **inputs)
        art = self.path(f"{name}.{backend}.artifact")
        if not os.path.exists(art):
            self.ok("compile", "--model", src, "--backend", backend, "--out", art)
        out = self.path(f"{name}.out.{threads}.npz")
        extra = ["--threads", str(threads)] if threads else []
        self.ok("run", "--artifact", art, "--input", self.path(f"{name}.in.npz"), "--out", out,
                *extra)
        return np.load(out)["y"]

    def check(self, model, inputs, want, name="m", backends=("cpu_ref",)):
        for backend in backends:
            self.check_on(model, inputs, want, name, backend)

    def check_on(self, model, inputs, want, name, backend):
        name = f"{name} on {backend}"
        got = self.run_model(model, inputs, name=name.replace(" ", "-"), backend=backend)
        self.assertEqual(got.dtype, np.int8, name)
        self.assertEqual(got.shape, want.shape, name)
        diff = np.argwhere(got != want)
        self.assertEqual(len(diff), 0, f"{name}: {len(diff)} bytes differ, first at "
                         f"{diff[:1].tolist()}: got {got[tuple(diff[0])] if len(diff) else ''}, "
                         f"want {want[tuple(diff[0])] if len(diff) else ''}")

    # --- QConv ---------------------------------------------------------------

    def conv_case(self, rng, name, x_shape, o, group, kernel, strides=None, pads=None,
                  dilations=None, xzp=0, yzp=0, qmin=-128, qmax=127, mult=None, bias_scale=2000):
        n = len(kernel)
        strides = strides or [1] * n
        pads = pads or [0] * (2 * n)
        dilations = dilations or [1] * n
        x = int8(rng, x_shape)
        w = int8(rng, (o, x_shape[1] // group, *kernel), -127, 127)
        bias = rng.integers(-bias_scale, bias_scale + 1, o).astype(np.int32)
        m, s = mult if mult is not None else multipliers(rng, o)
        attrs = dict(strides=strides, pads=pads, dilations=dilations, group=group,
                     kernel_shape=list(kernel), x_zero_point=xzp, y_zero_point=yzp)
        if qmin != -128:
            attrs["qmin"] = qmin
        if qmax != 127:
            attrs["qmax"] = qmax
        model = qmodel([qnode("QConv", ["x", "w", "b", "m", "s"], **attrs)], {"x": x},
                       [("w", w), ("b", bias), ("m", m), ("s", s)])
        want = conv_ref(x, w, bias, m, s, strides, pads, dilations, group, xzp, yzp, qmin, qmax)
        # zynq_ps runs QConv over the weights it packed (all but depthwise).
        self.check(model, {"x": x}, want, name, backends=("cpu_ref", "zynq_ps"))

    def test_qconv_matches_the_reference(self):
        rng = np.random.default_rng(1)
        cases = [
            ("plain2d", (1, 3, 7, 6), 4, 1, (3, 3)),
            ("strides_pads", (2, 4, 9, 8), 6, 1, (3, 2), [2, 3], [1, 0, 2, 1]),
            ("dilations", (1, 2, 11, 10), 3, 1, (3, 3), [1, 2], [2, 2, 2, 2], [2, 3]),
            ("groups", (1, 6, 8, 8), 9, 3, (3, 3), [1, 1], [1, 1, 1, 1]),
            ("depthwise", (2, 5, 9, 7), 5, 5, (3, 3), [2, 1], [1, 2, 0, 1]),
            ("depthwise_dilated", (1, 4, 10, 10), 4, 4, (3, 2), [1, 2], [2, 1, 2, 1], [2, 2]),
            ("depthwise_multiplier", (1, 3, 6, 6), 6, 3, (3, 3), [1, 1], [1, 1, 1, 1]),
            ("conv1d", (2, 4, 17), 5, 1, (5,), [2], [2, 3], [2]),
            ("depthwise1d", (1, 3, 12), 3, 3, (4,), [3], [1, 2]),
            ("conv3d", (1, 2, 5, 6, 4), 3, 1, (2, 3, 2), [1, 2, 1], [1, 0, 1, 0, 1, 1]),
            ("pointwise_large", (1, 16, 40, 40), 8, 1, (1, 1)),
            ("wide_k", (1, 32, 12, 12), 4, 2, (5, 5), [1, 1], [2, 2, 2, 2]),
        ]
        for i, case in enumerate(cases):
            name, x_shape, o, group, kernel, *rest = case
            with self.subTest(name):
                self.conv_case(rng, name, x_shape, o, group, kernel, *rest, xzp=(i * 37) % 256 - 128,
                               yzp=(i * 53) % 256 - 128)

    def test_qconv_clamps_zero_points_and_multiplier_limits(self):
        rng = np.random.default_rng(2)
        # A fused Relu/Clip narrows [qmin, qmax]; large multipliers saturate at
        # both ends; shift 1 with M just below 2^31 and shift 62 (everything
        # rounds to 0); M = 0.
        self.conv_case(rng, "clamp", (1, 4, 6, 6), 4, 1, (3, 3), [1, 1], [1, 1, 1, 1], xzp=-128,
                       yzp=-20, qmin=-20, qmax=90)
        self.conv_case(rng, "clamp_depthwise", (1, 4, 6, 6), 4, 4, (3, 3), [1, 1], [1, 1, 1, 1],
                       xzp=127, yzp=5, qmin=5, qmax=6)
        o = 6
        limits = (np.array([(1 << 31) - 1, 1 << 30, 0, (1 << 31) - 1, 1 << 30, 0], np.int32),
                  np.array([1, 62, 1, 20, 31, 62], np.int32))
        self.conv_case(rng, "limits", (1, 3, 5, 5), o, 1, (3, 3), mult=limits, xzp=10, yzp=-3)
        self.conv_case(rng, "limits_depthwise", (1, 6, 5, 5), o, 6, (3, 3), mult=limits, xzp=-7,
                       yzp=3, bias_scale=50)

    def test_qconv_transpose_matches_the_reference(self):
        rng = np.random.default_rng(3)
        cases = [
            # x shape, o per group, group, kernel, strides, pads, dilations, output_padding
            ("plain", (1, 3, 4, 5), 2, 1, (3, 3), [1, 1], [0, 0, 0, 0], [1, 1], [0, 0]),
            ("stride2", (2, 4, 5, 4), 3, 1, (3, 2), [2, 2], [1, 0, 1, 1], [1, 1], [1, 0]),
            ("groups", (1, 6, 4, 4), 2, 3, (2, 2), [2, 3], [0, 1, 1, 0], [1, 1], [1, 2]),
            ("dilated", (1, 2, 5, 5), 3, 1, (3, 3), [1, 2], [2, 1, 0, 2], [2, 2], [1, 1]),
            ("unreached", (1, 2, 3, 3), 2, 1, (1, 1), [3, 3], [0, 0, 0, 0], [1, 1], [2, 2]),
            ("conv1d", (2, 3, 7), 4, 1, (4,), [3], [1, 2], [1], [2]),
            ("conv3d", (1, 2, 3, 3, 2), 2, 2, (2, 2, 2), [2, 1, 2], [0] * 6, [1, 1, 1],
             [1, 0, 0]),
        ]
        for i, (name, x_shape, og, group, kernel, strides, pads, dil, out_pad) in enumerate(cases):
            with self.subTest(name):
                x = int8(rng, x_shape)
                w = int8(rng, (x_shape[1], og, *kernel), -127, 127)
                o = og * group
                bias = rng.integers(-3000, 3001, o).astype(np.int32)
                # One weight scale for all channels when group > 1: M, S repeat.
                m, s = multipliers(rng, 1 if group > 1 else o)
                m, s = np.resize(m, o), np.resize(s, o)
                xzp, yzp = (i * 41) % 256 - 128, (i * 23) % 256 - 128
                model = qmodel([qnode("QConvTranspose", ["x", "w", "b", "m", "s"],
                                      strides=strides, pads=pads, dilations=dil,
                                      output_padding=out_pad, group=group, x_zero_point=xzp,
                                      y_zero_point=yzp, qmin=-100, qmax=120)],
                               {"x": x}, [("w", w), ("b", bias), ("m", m), ("s", s)])
                want = conv_transpose_ref(x, w, bias, m, s, strides, pads, dil, out_pad, group,
                                          xzp, yzp, -100, 120)
                self.check(model, {"x": x}, want, name)

    # --- QGemm, QMatMul -----------------------------------------------------------

    def test_qgemm_matches_the_reference(self):
        rng = np.random.default_rng(4)
        for name, a_shape, n in [("row", (1, 7), 5), ("batch", (300, 64), 33),
                                 ("rank3", (2, 129, 10), 4), ("vector", (12,), 3)]:
            with self.subTest(name):
                k = a_shape[-1]
                a = int8(rng, a_shape)
                w = int8(rng, (n, k), -127, 127)
                bias = rng.integers(-10000, 10001, n).astype(np.int32)
                m, s = multipliers(rng, n)
                model = qmodel([qnode("QGemm", ["a", "w", "b", "m", "s"], a_zero_point=-9,
                                      y_zero_point=12, qmin=-60)],
                               {"a": a}, [("w", w), ("b", bias), ("m", m), ("s", s)])
                self.check(model, {"a": a}, gemm_ref(a, w, bias, m, s, -9, 12, -60), name,
                           backends=("cpu_ref", "zynq_ps"))

    def test_qmatmul_broadcasts_batch_dims(self):
        rng = np.random.default_rng(5)
        cases = [("2d", (5, 7), (7, 3)), ("batched", (2, 3, 4, 6), (3, 6, 5)),
                 ("broadcast", (4, 1, 3, 8), (1, 5, 8, 2)), ("vec_left", (6,), (2, 6, 4)),
                 ("vec_right", (3, 2, 6), (6,)), ("k_zero_m", (2, 9), (9, 4))]
        for i, (name, sa, sb) in enumerate(cases):
            with self.subTest(name):
                a, b = int8(rng, sa), int8(rng, sb)
                m, s = encode(float(np.exp(rng.uniform(-10, -4)))) if name != "k_zero_m" else (0, 1)
                attrs = dict(a_zero_point=i * 20 - 50, b_zero_point=100 - i * 30,
                             y_zero_point=i - 3, multiplier=m, shift=s)
                model = qmodel([qnode("QMatMul", ["a", "b"], **attrs)], {"a": a, "b": b})
                want = matmul_ref(a, b, attrs["a_zero_point"], attrs["b_zero_point"],
                                  attrs["y_zero_point"], m, s)
                self.check(model, {"a": a, "b": b}, want, name)

    # --- QAdd, QSub, QMul -----------------------------------------------------------

    def test_qadd_qsub_qmul_broadcast_and_saturate(self):
        rng = np.random.default_rng(6)
        shapes = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((3, 1, 5), (1, 4, 1)),
                  ((), (2, 3)), ((6,), ())]
        for i, (sa, sb) in enumerate(shapes):
            a, b = int8(rng, sa), int8(rng, sb)
            scale_a, scale_b = float(rng.uniform(0.01, 0.1)), float(rng.uniform(0.01, 0.1))
            # Output scales small enough to saturate at both ends.
            scale_y = float(rng.uniform(0.005, 0.05))
            twice = 2 * max(scale_a, scale_b)
            ma, sa_ = encode(scale_a / twice)
            mb, sb_ = encode(scale_b / twice)
            my, sy = encode(twice / (2 ** 20 * scale_y))
            p = dict(a_zero_point=i * 11 - 20, b_zero_point=30 - i * 13, y_zero_point=i * 3,
                     a_multiplier=ma, a_shift=sa_, b_multiplier=mb, b_shift=sb_,
                     y_multiplier=my, y_shift=sy, qmin=-128 + i, qmax=127 - i)
            for op, want in [("QAdd", add_ref(a, b, p)), ("QSub", add_ref(a, b, p, True))]:
                with self.subTest(f"{op}{sa}{sb}"):
                    model = qmodel([qnode(op, ["a", "b"], **p)], {"a": a, "b": b})
                    self.check(model, {"a": a, "b": b}, want, f"{op.lower()}{i}")
            mm, sm = encode(scale_a * scale_b / scale_y)
            pm = dict(a_zero_point=p["a_zero_point"], b_zero_point=p["b_zero_point"],
                      y_zero_point=p["y_zero_point"], multiplier=mm, shift=sm, qmin=p["qmin"])
            with self.subTest(f"QMul{sa}{sb}"):
                model = qmodel([qnode("QMul", ["a", "b"], **pm)], {"a": a, "b": b})
                self.check(model, {"a": a, "b": b}, mul_ref(a, b, pm), f"qmul{i}")

    def test_ties_round_half_up_for_negative_values_too(self):
        # A multiplier of exactly 1/2 makes every odd product a tie: 2.5 -> 3
        # and -2.5 -> -2 (floor(v + 1/2)), never to even or away from zero.
        a = np.arange(-128, 128, dtype=np.int8).reshape(16, 16)
        b = np.array([1, -1, 3, -3, 5, -5, 7, 1, 1, 1, 1, 1, 1, 1, 1, 1], np.int8)
        p = dict(a_zero_point=0, b_zero_point=0, y_zero_point=0, multiplier=1 << 30, shift=31)
        model = qmodel([qnode("QMul", ["a", "b"], **p)], {"a": a, "b": b})
        want = mul_ref(a, b, p)
        self.assertEqual(int(want[15, 1]), -56)  # 113 · -1 / 2 = -56.5 -> -56
        self.assertEqual(int(want[0, 1]), 64)  # -127 · -1 / 2 = 63.5 -> 64
        self.assertEqual(int(want[6, 15]), -8)  # -17 · 1 / 2 = -8.5 -> -8
        self.check(model, {"a": a, "b": b}, want, "ties")

    # --- pooling ----------------------------------------------------------------------

    def test_qaverage_pool_counts_taps_as_the_document_says(self):
        rng = np.random.default_rng(7)
        cases = [
            # x shape, kernel, strides, pads, dilations, ceil_mode, count_include_pad
            ("plain", (1, 2, 6, 6), (2, 2), [2, 2], [0, 0, 0, 0], [1, 1], 0, 0),
            ("pads_excluded", (2, 3, 7, 5), (3, 3), [2, 1], [1, 1, 1, 1], [1, 1], 0, 0),
            ("pads_included", (2, 3, 7, 5), (3, 3), [2, 1], [1, 1, 1, 1], [1, 1], 0, 1),
            ("ceil_excluded", (1, 2, 8, 7), (3, 2), [2, 3], [1, 0, 0, 1], [1, 1], 1, 0),
            ("ceil_included", (1, 2, 8, 7), (3, 2), [2, 3], [1, 0, 0, 1], [1, 1], 1, 1),
            ("dilated", (1, 2, 9, 9), (2, 3), [1, 2], [1, 2, 1, 2], [2, 2], 1, 1),
            ("pool1d", (2, 3, 11), (4,), [3], [2, 1], [1], 1, 1),
            ("pool3d", (1, 2, 4, 5, 5), (2, 2, 3), [2, 1, 2], [0, 1, 1, 1, 0, 1], [1, 1, 1], 1, 0),
        ]
        for i, (name, shape, kernel, strides, pads, dil, ceil_mode, include) in enumerate(cases):
            with self.subTest(name):
                x = int8(rng, shape)
                taps = int(np.prod(kernel))
                pairs = [(0, 1)] + [encode(0.9 / n) for n in range(1, taps + 1)]
                m = np.array([p[0] for p in pairs], np.int32)
                s = np.array([p[1] for p in pairs], np.int32)
                xzp, yzp = i * 15 - 60, 40 - i * 9
                model = qmodel([qnode("QAveragePool", ["x", "m", "s"], kernel_shape=list(kernel),
                                      strides=strides, pads=pads, dilations=dil,
                                      ceil_mode=ceil_mode, count_include_pad=include,
                                      x_zero_point=xzp, y_zero_point=yzp)],
                               {"x": x}, [("m", m), ("s", s)])
                want = average_pool_ref(x, kernel, strides, pads, dil, ceil_mode, include, m, s,
                                        xzp, yzp)
                self.check(model, {"x": x}, want, name)

    def test_qglobal_average_pool(self):
        rng = np.random.default_rng(8)
        for name, shape in [("2d", (2, 5, 7, 6)), ("1d", (3, 4, 9)), ("3d", (1, 3, 2, 3, 4))]:
            with self.subTest(name):
                x = int8(rng, shape)
                n = int(np.prod(shape[2:]))
                m, s = encode(1.3 / n)
                model = qmodel([qnode("QGlobalAveragePool", ["x"], x_zero_point=-17,
                                      y_zero_point=9, multiplier=m, shift=s)], {"x": x})
                acc = (x.astype(np.int64) + 17).sum(axis=tuple(range(2, len(shape))),
                                                    keepdims=True)
                self.check(model, {"x": x}, requantize(acc, m, s, 9), name)

    # --- QConcat, QLookup, QSoftmax ----------------------------------------------------

    def test_qconcat_rescales_each_input(self):
        rng = np.random.default_rng(9)
        xs = {"x1": int8(rng, (2, 3, 4)), "x2": int8(rng, (2, 5, 4)), "x3": int8(rng, (2, 1, 4))}
        zps = [-5, 17, 0]
        # Input 3 has the output's parameters: (2^30, 30) copies it exactly.
        pairs = [encode(1.7), encode(0.35), (1 << 30, 30)]
        for axis in (1, -2):
            with self.subTest(axis=axis):
                model = qmodel([qnode("QConcat", list(xs), axis=axis, x_zero_points=zps,
                                      multipliers=[p[0] for p in pairs],
                                      shifts=[p[1] for p in pairs], y_zero_point=0)], xs)
                parts = [np.clip(rounding_multiply(x.astype(np.int64) - z, m, s), -128, 127)
                         for x, z, (m, s) in zip(xs.values(), zps, pairs)]
                want = np.concatenate(parts, axis=1).astype(np.int8)
                np.testing.assert_array_equal(want[:, 8:9], xs["x3"])
                self.check(model, xs, want, f"concat{axis}")
        with self.subTest("last axis"):
            ys = {"x1": int8(rng, (3, 2)), "x2": int8(rng, (3, 5))}
            model = qmodel([qnode("QConcat", list(ys), axis=1, x_zero_points=[3, -3],
                                  multipliers=[1 << 30, 1 << 30], shifts=[29, 31],
                                  y_zero_point=-7)], ys)
            want = np.concatenate([np.clip(rounding_multiply(ys["x1"].astype(np.int64) - 3,
                                                             1 << 30, 29) - 7, -128, 127),
                                   np.clip(rounding_multiply(ys["x2"].astype(np.int64) + 3,
                                                             1 << 30, 31) - 7, -128, 127)],
                                  axis=1).astype(np.int8)
            self.check(model, ys, want, "concat_last")

    def test_qlookup_loads_the_table(self):
        rng = np.random.default_rng(10)
        x = int8(rng, (3, 70, 5))
        table = int8(rng, (256,))
        model = qmodel([qnode("QLookup", ["x", "t"])], {"x": x}, [("t", table)])
        self.check(model, {"x": x}, table[x.astype(np.int64) + 128], "lookup")

    def test_qsoftmax_along_each_axis(self):
        rng = np.random.default_rng(11)
        x = int8(rng, (3, 4, 6))
        x[0, 0, :] = 5  # equal logits
        for axis in (-1, 0, 1):
            for scale in (0.05, 0.5):
                with self.subTest(axis=axis, scale=scale):
                    table = exp_table(scale)
                    model = qmodel([qnode("QSoftmax", ["x", "e"], axis=axis)], {"x": x},
                                   [("e", table)])
                    self.check(model, {"x": x}, softmax_ref(x, table, axis),
                               f"softmax{axis}_{scale}")
        long_row = int8(rng, (2, 5000))
        table = exp_table(0.1)
        model = qmodel([qnode("QSoftmax", ["x", "e"])], {"x": long_row}, [("e", table)])
        self.check(model, {"x": long_row}, softmax_ref(long_row, table, -1), "softmax_long")

    # --- threads -------------------------------------------------------------------------

    def test_outputs_do_not_depend_on_the_thread_count(self):
        rng = np.random.default_rng(12)
        x = int8(rng, (2, 16, 24, 24))
        w = int8(rng, (16, 8, 3, 3), -127, 127)
        wd = int8(rng, (16, 1, 3, 3), -127, 127)
        wt = int8(rng, (16, 4, 2, 2), -127, 127)
        wg = int8(rng, (32, 16 * 12 * 12), -127, 127)
        m, s = multipliers(rng, 16)
        mg, sg = multipliers(rng, 32, 2.0 ** -16, 2.0 ** -12)
        zero16 = np.zeros(16, np.int32)
        av = [(0, 1)] + [encode(1.0 / n) for n in range(1, 5)]
        nodes = [
            helper.make_node("QConv", ["x", "w", "b", "m", "s"], ["c"], domain=DOMAIN, name="c",
                             group=2, pads=[1, 1, 1, 1], x_zero_point=3, y_zero_point=-1),
            helper.make_node("QConv", ["c", "wd", "b", "m", "s"], ["d"], domain=DOMAIN,
                             name="d", group=16, pads=[1, 1, 1, 1], strides=[2, 2],
                             x_zero_point=-1, y_zero_point=2),
            helper.make_node("QConvTranspose", ["d", "wt", "b", "m", "s"], ["t"], domain=DOMAIN,
                             name="t", group=4, strides=[2, 2], x_zero_point=2),
            helper.make_node("QAveragePool", ["t", "am", "as"], ["p"], domain=DOMAIN, name="p",
                             kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("Reshape", ["p", "shape"], ["flat"], name="r"),
            helper.make_node("QGemm", ["flat", "wg", "bg", "mg", "sg"], ["g"], domain=DOMAIN,
                             name="g"),
            helper.make_node("QSoftmax", ["g", "e"], ["y"], domain=DOMAIN, name="sm"),
        ]
        model = qmodel(nodes, {"x": x}, [
            ("w", w), ("wd", wd), ("wt", wt), ("b", zero16), ("m", m), ("s", s),
            ("am", np.array([p[0] for p in av], np.int32)),
            ("as", np.array([p[1] for p in av], np.int32)),
            ("shape", np.array([2, -1], np.int64)), ("wg", wg), ("bg", np.zeros(32, np.int32)),
            ("mg", mg), ("sg", sg), ("e", exp_table(0.2))])
        results = [self.run_model(model, {"x": x}, threads=t, name="threads") for t in (1, 3)]
        np.testing.assert_array_equal(results[0], results[1])
        self.assertEqual(results[0].shape, (2, 32))
        big = int8(rng, (1, 8, 64, 64))
        wb = int8(rng, (8, 8, 3, 3), -127, 127)
        m8, s8 = multipliers(rng, 8)
        model = qmodel([qnode("QConv", ["x", "w", "b", "m", "s"], pads=[1, 1, 1, 1])],
                       {"x": big}, [("w", wb), ("b", np.zeros(8, np.int32)), ("m", m8),
                                    ("s", s8)])
        results = [self.run_model(model, {"x": big}, threads=t, name="big") for t in (1, 3)]
        np.testing.assert_array_equal(results[0], results[1])
        np.testing.assert_array_equal(
            results[0], conv_ref(big, wb, np.zeros(8), m8, s8, [1, 1], [1, 1, 1, 1], [1, 1], 1, 0,
                                 0))

    # --- errors --------------------------------------------------------------------------

    def compile_error(self, model, where):
        src = self.path("bad.onnx")
        onnx.save(model, src)
        r, _ = self.error("compile", "--model", src, "--out", self.path("bad.artifact"),
                          title="operator shape mismatch", where=where)
        self.assert_absent(self.path("bad.artifact"))
        return r

    def test_malformed_ops_fail_with_the_three_line_error(self):
        rng = np.random.default_rng(13)
        x = int8(rng, (1, 4, 5, 5))
        m, s = multipliers(rng, 6)
        good = [("w", int8(rng, (6, 2, 3, 3), -127, 127)), ("b", np.zeros(6, np.int32)),
                ("m", m), ("s", s)]

        def conv(inits, **attrs):
            attrs.setdefault("group", 2)
            return qmodel([qnode("QConv", ["x", "w", "b", "m", "s"], **attrs)], {"x": x}, inits)

        self.compile_error(conv([("w", int8(rng, (6, 3, 3, 3)))] + good[1:]),
                           "X has 4 channels")
        self.compile_error(conv([("w", int8(rng, (5, 2, 3, 3)))] + good[1:]), "do not divide")
        self.compile_error(conv(good[:1] + [("b", np.zeros(5, np.int32))] + good[2:]), "Bias (5,)")
        self.compile_error(conv(good[:3] + [("s", np.full(6, 63, np.int32))]),
                           "not a fixed-point multiplier")
        self.compile_error(conv(good[:2] + [("m", np.full(6, 1 << 29, np.int32))] + good[3:]),
                           "not a fixed-point multiplier")
        self.compile_error(conv(good[:1] + [("b", np.zeros(6, np.int64))] + good[2:]),
                           "Bias must be int32")
        self.compile_error(conv(good, x_zero_point=128), "x_zero_point 128")
        self.compile_error(conv(good, qmin=10, qmax=9), "qmin 10 and qmax 9")
        self.compile_error(conv(good, kernel_shape=[2, 2]), "kernel_shape")
        self.compile_error(conv(good, auto_pad="SAME_UPPER"), "auto_pad")
        self.compile_error(conv([("w", np.full((6, 2, 3, 3), 127, np.int8)),
                                 ("b", np.full(6, INT32_MAX - 1000, np.int32))] + good[2:]),
                           "overflow")
        a = int8(rng, (2, 3))
        self.compile_error(qmodel([qnode("QAdd", ["a", "a"], a_multiplier=1 << 30, a_shift=30,
                                         b_multiplier=1 << 30, b_shift=31,
                                         y_multiplier=1 << 30, y_shift=40)], {"a": a}),
                           "a_multiplier/a_shift")
        self.compile_error(qmodel([qnode("QMul", ["a", "a"], multiplier=1 << 30)], {"a": a}),
                           "'shift' is required")
        self.compile_error(qmodel([qnode("QLookup", ["a", "t"])], {"a": a},
                                  [("t", np.zeros(255, np.int8))]), "Table (255,)")
        bad_exp = exp_table(0.1)
        bad_exp[0] = 0
        self.compile_error(qmodel([qnode("QSoftmax", ["a", "e"])], {"a": a}, [("e", bad_exp)]),
                           "Exp must hold")
        self.compile_error(qmodel([qnode("QAveragePool", ["x", "m", "s"], kernel_shape=[2, 2])],
                                  {"x": x}, [("m", np.full(4, 1 << 30, np.int32)),
                                             ("s", np.full(4, 31, np.int32))]), "M (4,)")
        self.compile_error(qmodel([qnode("QMatMul", ["a", "a"], multiplier=1 << 30, shift=31)],
                                  {"a": a}), "inner dimensions differ")
        self.compile_error(qmodel([qnode("QConcat", ["a", "a"], axis=0, x_zero_points=[0],
                                         multipliers=[1 << 30, 1 << 30], shifts=[30, 30])],
                                  {"a": a}), "one entry per input")

    def test_unknown_ops_and_versions_of_the_domain_are_rejected(self):
        a = int8(np.random.default_rng(14), (2, 3))
        model = qmodel([qnode("QDiv", ["a", "a"])], {"a": a})
        onnx.save(model, self.path("bad.onnx"))
        self.error("compile", "--model", self.path("bad.onnx"), "--out", self.path("o"),
                   title="unknown operator", where="not an operator of domain 'ai.eulernpu'")
        model = qmodel([qnode("QLookup", ["a", "t"])], {"a": a}, [("t", np.zeros(256, np.int8))])
        model.opset_import[1].version = 2
        onnx.save(model, self.path("v2.onnx"))
        self.error("compile", "--model", self.path("v2.onnx"), "--out", self.path("o"),
                   title="unknown operator", where="at opset 2")


if __name__ == "__main__":
    unittest.main()
