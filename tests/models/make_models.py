#!/usr/bin/python3
"""Generates the "real network" test models: three small networks of the
families users compile (a MobileNet-style CNN, a ResNet-style CNN, a
transformer encoder layer), each at several opsets, with inputs and float64
numpy reference outputs.

The graphs are written node by node the way exporters (torch.onnx) emit
them at each opset, because that is what the compiler meets in practice:
HardSwish as x * HardSigmoid(x) before opset 14, LayerNormalization as a
ReduceMean/Sub/Pow/Sqrt/Div chain before opset 17, GELU as its Erf formula,
Clip bounds and Unsqueeze axes as attributes or inputs by opset, and a
dynamic batch dimension whose Reshape targets are computed by
Shape -> Gather -> Unsqueeze -> Concat chains rather than stored as
constants.

The reference outputs are computed by tests/models/numpy_ref.py from the
same weights, by a forward function per network written from the
architecture, never by interpreting the ONNX graph: an exporter-style
decomposition that is wrong shows up as a mismatch too.

Everything is seeded, so a run writes the same files every time. Nothing
generated is committed: tests/cli/test_networks.py runs this into a temporary
directory.

Run: /usr/bin/python3 tests/models/make_models.py OUT_DIR [--batch N]...

Writes into OUT_DIR:
  <model>_opset<V>.onnx               one per model and opset
  <model>_b<N>.input.npz              the input for batch N, float32
  <model>_b<N>.expected.npz           the reference output, float64
  manifest.json                       what was written (read by the test)
"""
import argparse
import json
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import numpy_ref as ref  # beside this script, which Python puts on sys.path

# The opsets each model is exported at. 9 and 17 bracket the exporter
# quirks (attribute vs input forms, missing HardSwish/LayerNormalization);
# 11 and 13 are where Clip and Unsqueeze/Softmax changed. Opset 20 adds the
# Gelu operator, so only the transformer has it.
OPSETS = {
    "mobilenet": (9, 11, 13, 17),
    "resnet": (9, 11, 13, 17),
    "transformer": (9, 11, 13, 17, 20),
}

# The IR version an exporter writes alongside each opset (the ONNX release
# that introduced the opset).
IR_VERSION = {9: 4, 11: 6, 13: 7, 17: 8, 20: 9}

# onnx 1.12's checker knows opsets up to 17.
CHECKER_MAX_OPSET = 17

IMAGE = (3, 32, 32)
SEQ, D_MODEL, HEADS, D_FF = 8, 32, 2, 64
NUM_CLASSES = 10
BN_EPS = 1e-5
LN_EPS = 1e-5


class GraphBuilder:
    """Collects nodes and initializers for one model at one opset, with the
    opset-dependent spellings of the operators exporters emit."""

    def __init__(self, opset):
        self.opset = opset
        self.nodes = []
        self.initializers = []
        self._count = {}

    def _unique(self, base):
        n = self._count.get(base, 0)
        self._count[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    def weight(self, name, array):
        """An initializer: a trained parameter."""
        self.initializers.append(numpy_helper.from_array(np.asarray(array, np.float32), name))
        return name

    def const(self, value, dtype=np.int64):
        """A Constant node, as exporters emit small shape pieces and
        scalars (rather than initializers)."""
        return self.op("Constant", [], "Constant",
                       value=numpy_helper.from_array(np.array(value, dtype=dtype)))

    def op(self, op_type, inputs, name, output=None, **attrs):
        """Appends one node with one output, named `output` or after the
        node as torch.onnx names them."""
        name = self._unique(name)
        output = output or name + "_output_0"
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=name, **attrs))
        return output

    # --- operators whose spelling depends on the opset ---------------------

    def unsqueeze(self, x, axes, name):
        if self.opset < 13:
            return self.op("Unsqueeze", [x], name, axes=axes)
        return self.op("Unsqueeze", [x, self.const(axes)], name)

    def clip(self, x, lo, hi, name):
        if self.opset < 11:
            return self.op("Clip", [x], name, min=lo, max=hi)
        return self.op("Clip", [x, self.const(lo, np.float32), self.const(hi, np.float32)], name)

    def hard_swish(self, x, name):
        if self.opset >= 14:
            return self.op("HardSwish", [x], name)
        # torch.onnx before opset 14: hardswish(x) = x * hardsigmoid(x).
        hs = self.op("HardSigmoid", [x], name + "/HardSigmoid", alpha=1.0 / 6.0, beta=0.5)
        return self.op("Mul", [x, hs], name + "/Mul")

    def softmax_last(self, x, rank, name, output=None):
        """Softmax over the last axis. Before opset 13 Softmax flattens its
        input to 2-D at `axis` (default 1), so exporters write
        axis = rank - 1 — or leave the default on a 2-D input, which we do to
        exercise it."""
        if self.opset >= 13:
            return self.op("Softmax", [x], name, output, axis=-1)
        if rank == 2:
            return self.op("Softmax", [x], name, output)
        return self.op("Softmax", [x], name, output, axis=rank - 1)

    def layer_norm(self, x, gamma, beta, name, output=None):
        if self.opset >= 17:
            return self.op("LayerNormalization", [x, gamma, beta], name, output, axis=-1,
                           epsilon=LN_EPS)
        # torch.onnx's decomposition before opset 17 (ReduceMean takes its
        # axes as an attribute up to opset 17).
        mean = self.op("ReduceMean", [x], name + "/ReduceMean", axes=[-1], keepdims=1)
        centered = self.op("Sub", [x, mean], name + "/Sub")
        sq = self.op("Pow", [centered, self.const(2.0, np.float32)], name + "/Pow")
        var = self.op("ReduceMean", [sq], name + "/ReduceMean", axes=[-1], keepdims=1)
        var_eps = self.op("Add", [var, self.const(LN_EPS, np.float32)], name + "/Add")
        std = self.op("Sqrt", [var_eps], name + "/Sqrt")
        normed = self.op("Div", [centered, std], name + "/Div")
        scaled = self.op("Mul", [normed, gamma], name + "/Mul")
        return self.op("Add", [scaled, beta], name + "/Add", output)

    def gelu(self, x, name):
        if self.opset >= 20:
            return self.op("Gelu", [x], name)
        # torch.onnx's exact (erf) GELU at every opset before 20.
        scaled = self.op("Div", [x, self.const(math.sqrt(2.0), np.float32)], name + "/Div")
        erf = self.op("Erf", [scaled], name + "/Erf")
        one_plus = self.op("Add", [erf, self.const(1.0, np.float32)], name + "/Add")
        prod = self.op("Mul", [x, one_plus], name + "/Mul")
        return self.op("Mul", [prod, self.const(0.5, np.float32)], name + "/Mul")

    def dim_of(self, x, index, name):
        """x.size(index) as a 1-element 1-D tensor, the way torch traces it:
        Shape -> Gather(scalar index) -> Unsqueeze."""
        shape = self.op("Shape", [x], name + "/Shape")
        dim = self.op("Gather", [shape, self.const(index)], name + "/Gather", axis=0)
        return self.unsqueeze(dim, [0], name + "/Unsqueeze")

    def model(self, graph_name, inputs, outputs):
        graph = helper.make_graph(self.nodes, graph_name, inputs, outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  producer_name="make_models.py",
                                  doc_string="Generated by tests/models/make_models.py.")
        model.ir_version = IR_VERSION[self.opset]
        return model


# --- parameters --------------------------------------------------------------
# Scaled so activations stay of order 1 through every layer (He-style conv
# init, BN variances near 1): float32 rounding then stays near its unit
# roundoff and a fixed tolerance fits every layer.

def conv_weight(rng, out_c, in_c_per_group, k):
    fan_in = in_c_per_group * k * k
    w = rng.standard_normal((out_c, in_c_per_group, k, k)) * math.sqrt(2.0 / fan_in)
    return w.astype(np.float32)


def bn_params(rng, c):
    return {
        "scale": rng.uniform(0.5, 1.5, c).astype(np.float32),
        "bias": (rng.standard_normal(c) * 0.1).astype(np.float32),
        "mean": (rng.standard_normal(c) * 0.1).astype(np.float32),
        "var": rng.uniform(0.5, 1.5, c).astype(np.float32),
    }


def dense(rng, n_in, n_out):
    """A linear layer's (weight (n_in, n_out), bias (n_out,))."""
    w = (rng.standard_normal((n_in, n_out)) / math.sqrt(n_in)).astype(np.float32)
    b = (rng.standard_normal(n_out) * 0.1).astype(np.float32)
    return w, b


def emit_bn(g, x, name, p):
    names = [g.weight(f"{name}.{k}", p[k]) for k in ("scale", "bias", "mean", "var")]
    return g.op("BatchNormalization", [x] + names, name, epsilon=BN_EPS)


def ref_bn(x, p):
    return ref.batchnorm(x, p["scale"], p["bias"], p["mean"], p["var"], BN_EPS)


def emit_conv(g, x, name, w, stride=1, pad=0, groups=1, bias=None):
    k = w.shape[2]
    inputs = [x, g.weight(name + ".weight", w)]
    if bias is not None:
        inputs.append(g.weight(name + ".bias", bias))
    return g.op("Conv", inputs, name, kernel_shape=[k, k], strides=[stride, stride],
                pads=[pad] * 4, group=groups, dilations=[1, 1])


def image_input():
    return helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", *IMAGE])


def class_output(name):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", NUM_CLASSES])


# --- 1. MobileNet-style CNN ----------------------------------------------------
# stem: Conv 3x3/2 (3->16) + BN + HardSwish                       -> 16x16x16
# depthwise-separable: DW 3x3/2 (group 16) + BN + ReLU,
#                      PW 1x1 (16->24) + BN + HardSwish           -> 24x8x8
# inverted residual: PW 1x1 expand (24->32) + BN + ReLU6,
#                    DW 3x3 (group 32) + BN + ReLU6,
#                    PW 1x1 project (32->24) + BN, Add skip        -> 24x8x8
# head: GlobalAveragePool, x.view(x.size(0), -1) through a Shape chain,
#       Gemm (24->10, transB), Softmax.

def mobilenet_params(rng):
    return {
        "stem": conv_weight(rng, 16, 3, 3), "stem_bn": bn_params(rng, 16),
        "dw": conv_weight(rng, 16, 1, 3), "dw_bn": bn_params(rng, 16),
        "pw": conv_weight(rng, 24, 16, 1), "pw_bn": bn_params(rng, 24),
        "expand": conv_weight(rng, 32, 24, 1), "expand_bn": bn_params(rng, 32),
        "ir_dw": conv_weight(rng, 32, 1, 3), "ir_dw_bn": bn_params(rng, 32),
        "project": conv_weight(rng, 24, 32, 1), "project_bn": bn_params(rng, 24),
        # torch.nn.Linear stores (out, in); Gemm reads it with transB=1.
        "fc_w": (rng.standard_normal((NUM_CLASSES, 24)) / math.sqrt(24)).astype(np.float32),
        "fc_b": (rng.standard_normal(NUM_CLASSES) * 0.1).astype(np.float32),
    }


def mobilenet_onnx(p, opset):
    g = GraphBuilder(opset)
    h = emit_conv(g, "x", "stem.conv", p["stem"], stride=2, pad=1)
    h = g.hard_swish(emit_bn(g, h, "stem.bn", p["stem_bn"]), "stem.act")
    h = emit_conv(g, h, "ds.dw", p["dw"], stride=2, pad=1, groups=16)
    h = g.op("Relu", [emit_bn(g, h, "ds.dw_bn", p["dw_bn"])], "ds.relu")
    h = emit_conv(g, h, "ds.pw", p["pw"])
    block_in = g.hard_swish(emit_bn(g, h, "ds.pw_bn", p["pw_bn"]), "ds.act")
    h = emit_conv(g, block_in, "ir.expand", p["expand"])
    h = g.clip(emit_bn(g, h, "ir.expand_bn", p["expand_bn"]), 0.0, 6.0, "ir.relu6")
    h = emit_conv(g, h, "ir.dw", p["ir_dw"], pad=1, groups=32)
    h = g.clip(emit_bn(g, h, "ir.dw_bn", p["ir_dw_bn"]), 0.0, 6.0, "ir.relu6")
    h = emit_conv(g, h, "ir.project", p["project"])
    h = emit_bn(g, h, "ir.project_bn", p["project_bn"])
    h = g.op("Add", [block_in, h], "ir.add")
    pooled = g.op("GlobalAveragePool", [h], "pool")
    flat_shape = g.op("Concat", [g.dim_of(pooled, 0, "flatten"), g.const([-1])], "flatten/Concat",
                      axis=0)
    flat = g.op("Reshape", [pooled, flat_shape], "flatten/Reshape")
    logits = g.op("Gemm", [flat, g.weight("fc.weight", p["fc_w"]), g.weight("fc.bias", p["fc_b"])],
                  "fc", alpha=1.0, beta=1.0, transB=1)
    g.softmax_last(logits, 2, "softmax", output="probs")
    return g.model("mobilenet", [image_input()], [class_output("probs")])


def mobilenet_ref(p, x):
    h = ref.hard_swish(ref_bn(ref.conv2d(x, p["stem"], stride=2, pad=1), p["stem_bn"]))
    h = ref.relu(ref_bn(ref.conv2d(h, p["dw"], stride=2, pad=1, groups=16), p["dw_bn"]))
    block_in = ref.hard_swish(ref_bn(ref.conv2d(h, p["pw"]), p["pw_bn"]))
    h = ref.relu6(ref_bn(ref.conv2d(block_in, p["expand"]), p["expand_bn"]))
    h = ref.relu6(ref_bn(ref.conv2d(h, p["ir_dw"], pad=1, groups=32), p["ir_dw_bn"]))
    h = block_in + ref_bn(ref.conv2d(h, p["project"]), p["project_bn"])
    flat = ref.global_avg_pool(h).reshape(h.shape[0], -1)
    return {"probs": ref.softmax(ref.gemm(flat, p["fc_w"], p["fc_b"], trans_b=True), axis=1)}


# --- 2. ResNet-style CNN -------------------------------------------------------
# stem: Conv 7x7/2 pad 3 (3->16) + BN + Relu                       -> 16x16x16
#       MaxPool 3x3/2 pad 1                                         -> 16x8x8
# block 1: Conv 3x3 + BN + Relu, Conv 3x3 + BN, Add identity, Relu  -> 16x8x8
# block 2: Conv 3x3/2 (16->32) + BN + Relu, Conv 3x3 + BN,
#          shortcut Conv 1x1/2 with bias (its BN folded in, as
#          torch.onnx's constant folding exports it), Add, Relu     -> 32x4x4
# head: GlobalAveragePool, Flatten, Gemm (32->10, transB).

def resnet_params(rng):
    return {
        "stem": conv_weight(rng, 16, 3, 7), "stem_bn": bn_params(rng, 16),
        "b1c1": conv_weight(rng, 16, 16, 3), "b1bn1": bn_params(rng, 16),
        "b1c2": conv_weight(rng, 16, 16, 3), "b1bn2": bn_params(rng, 16),
        "b2c1": conv_weight(rng, 32, 16, 3), "b2bn1": bn_params(rng, 32),
        "b2c2": conv_weight(rng, 32, 32, 3), "b2bn2": bn_params(rng, 32),
        "proj": conv_weight(rng, 32, 16, 1),
        "proj_b": (rng.standard_normal(32) * 0.1).astype(np.float32),
        "fc_w": (rng.standard_normal((NUM_CLASSES, 32)) / math.sqrt(32)).astype(np.float32),
        "fc_b": (rng.standard_normal(NUM_CLASSES) * 0.1).astype(np.float32),
    }


def resnet_onnx(p, opset):
    g = GraphBuilder(opset)
    h = emit_conv(g, "x", "stem.conv", p["stem"], stride=2, pad=3)
    h = g.op("Relu", [emit_bn(g, h, "stem.bn", p["stem_bn"])], "stem.relu")
    b1_in = g.op("MaxPool", [h], "stem.maxpool", kernel_shape=[3, 3], strides=[2, 2],
                 pads=[1, 1, 1, 1])
    h = emit_conv(g, b1_in, "layer1.conv1", p["b1c1"], pad=1)
    h = g.op("Relu", [emit_bn(g, h, "layer1.bn1", p["b1bn1"])], "layer1.relu")
    h = emit_bn(g, emit_conv(g, h, "layer1.conv2", p["b1c2"], pad=1), "layer1.bn2", p["b1bn2"])
    b2_in = g.op("Relu", [g.op("Add", [h, b1_in], "layer1.add")], "layer1.relu")
    h = emit_conv(g, b2_in, "layer2.conv1", p["b2c1"], stride=2, pad=1)
    h = g.op("Relu", [emit_bn(g, h, "layer2.bn1", p["b2bn1"])], "layer2.relu")
    h = emit_bn(g, emit_conv(g, h, "layer2.conv2", p["b2c2"], pad=1), "layer2.bn2", p["b2bn2"])
    shortcut = emit_conv(g, b2_in, "layer2.downsample", p["proj"], stride=2, bias=p["proj_b"])
    h = g.op("Relu", [g.op("Add", [h, shortcut], "layer2.add")], "layer2.relu")
    flat = g.op("Flatten", [g.op("GlobalAveragePool", [h], "avgpool")], "flatten", axis=1)
    g.op("Gemm", [flat, g.weight("fc.weight", p["fc_w"]), g.weight("fc.bias", p["fc_b"])], "fc",
         "logits", alpha=1.0, beta=1.0, transB=1)
    return g.model("resnet", [image_input()], [class_output("logits")])


def resnet_ref(p, x):
    h = ref.relu(ref_bn(ref.conv2d(x, p["stem"], stride=2, pad=3), p["stem_bn"]))
    b1_in = ref.max_pool2d(h, kernel=3, stride=2, pad=1)
    h = ref.relu(ref_bn(ref.conv2d(b1_in, p["b1c1"], pad=1), p["b1bn1"]))
    h = ref_bn(ref.conv2d(h, p["b1c2"], pad=1), p["b1bn2"])
    b2_in = ref.relu(h + b1_in)
    h = ref.relu(ref_bn(ref.conv2d(b2_in, p["b2c1"], stride=2, pad=1), p["b2bn1"]))
    h = ref_bn(ref.conv2d(h, p["b2c2"], pad=1), p["b2bn2"])
    h = ref.relu(h + ref.conv2d(b2_in, p["proj"], p["proj_b"], stride=2))
    flat = ref.global_avg_pool(h).reshape(h.shape[0], -1)
    return {"logits": ref.gemm(flat, p["fc_w"], p["fc_b"], trans_b=True)}


# --- 3. Transformer encoder layer (post-norm, as torch.nn.TransformerEncoderLayer)
# x (batch, 8, 32) -> self-attention, 2 heads of 16:
#   Q/K/V = MatMul + Add; heads split by Reshape to (b, s, 2, 16) with the
#   target from Shape -> Gather -> Unsqueeze -> Concat, Transpose;
#   scores = Q K^T / sqrt(16) (Div before opset 17, Mul by 1/sqrt(16) from
#   17), Softmax, MatMul V; heads merged by Transpose + Reshape (another
#   Shape chain); output projection MatMul + Add
# -> Add residual, LayerNorm
# -> FFN: MatMul + Add (32->64), GELU, MatMul + Add (64->32)
# -> Add residual, LayerNorm.

def transformer_params(rng):
    p = {}
    for name in ("q", "k", "v", "o"):
        p["w" + name], p["b" + name] = dense(rng, D_MODEL, D_MODEL)
    p["w1"], p["b1"] = dense(rng, D_MODEL, D_FF)
    p["w2"], p["b2"] = dense(rng, D_FF, D_MODEL)
    for name in ("ln1", "ln2"):
        p[name + "_g"] = rng.uniform(0.5, 1.5, D_MODEL).astype(np.float32)
        p[name + "_b"] = (rng.standard_normal(D_MODEL) * 0.1).astype(np.float32)
    return p


def transformer_onnx(p, opset):
    g = GraphBuilder(opset)
    head_dim = D_MODEL // HEADS

    def linear(x, name, w, b):
        mm = g.op("MatMul", [x, g.weight(name + ".weight", p[w])], name + "/MatMul")
        return g.op("Add", [g.weight(name + ".bias", p[b]), mm], name + "/Add")

    def split_heads(t, name, perm):
        # t.view(x.size(0), x.size(1), HEADS, head_dim).permute(perm)
        shape = g.op("Concat", [g.dim_of("x", 0, name + "/batch"), g.dim_of("x", 1, name + "/seq"),
                                g.const([HEADS]), g.const([head_dim])], name + "/Concat", axis=0)
        return g.op("Transpose", [g.op("Reshape", [t, shape], name + "/Reshape")],
                    name + "/Transpose", perm=perm)

    q = split_heads(linear("x", "attn.q_proj", "wq", "bq"), "attn.q_heads", [0, 2, 1, 3])
    # K goes straight to (b, heads, head_dim, s), as exporters fold k.transpose(-2, -1).
    k_t = split_heads(linear("x", "attn.k_proj", "wk", "bk"), "attn.k_heads", [0, 2, 3, 1])
    v = split_heads(linear("x", "attn.v_proj", "wv", "bv"), "attn.v_heads", [0, 2, 1, 3])
    scores = g.op("MatMul", [q, k_t], "attn/MatMul")
    if opset < 17:
        scores = g.op("Div", [scores, g.const(math.sqrt(head_dim), np.float32)], "attn/Div")
    else:
        scores = g.op("Mul", [scores, g.const(1.0 / math.sqrt(head_dim), np.float32)], "attn/Mul")
    weights = g.softmax_last(scores, 4, "attn/Softmax")
    ctx = g.op("MatMul", [weights, v], "attn/MatMul")
    ctx = g.op("Transpose", [ctx], "attn/Transpose", perm=[0, 2, 1, 3])
    merged_shape = g.op("Concat", [g.dim_of("x", 0, "attn.merge/batch"),
                                   g.dim_of("x", 1, "attn.merge/seq"), g.const([D_MODEL])],
                        "attn.merge/Concat", axis=0)
    ctx = g.op("Reshape", [ctx, merged_shape], "attn.merge/Reshape")
    attn = linear(ctx, "attn.out_proj", "wo", "bo")
    h = g.op("Add", ["x", attn], "residual1")
    h = g.layer_norm(h, g.weight("norm1.weight", p["ln1_g"]), g.weight("norm1.bias", p["ln1_b"]),
                     "norm1")
    ff = linear(h, "ffn.linear1", "w1", "b1")
    ff = linear(g.gelu(ff, "ffn.gelu"), "ffn.linear2", "w2", "b2")
    h = g.op("Add", [h, ff], "residual2")
    g.layer_norm(h, g.weight("norm2.weight", p["ln2_g"]), g.weight("norm2.bias", p["ln2_b"]),
                 "norm2", output="y")
    value = helper.make_tensor_value_info
    return g.model("transformer", [value("x", TensorProto.FLOAT, ["batch", SEQ, D_MODEL])],
                   [value("y", TensorProto.FLOAT, ["batch", SEQ, D_MODEL])])


def transformer_ref(p, x):
    attn = ref.multi_head_attention(x, p["wq"], p["bq"], p["wk"], p["bk"], p["wv"], p["bv"],
                                    p["wo"], p["bo"], HEADS)
    h = ref.layernorm(x.astype(np.float64) + attn, p["ln1_g"], p["ln1_b"], LN_EPS)
    ff = ref.linear(ref.gelu(ref.linear(h, p["w1"], p["b1"])), p["w2"], p["b2"])
    return {"y": ref.layernorm(h + ff, p["ln2_g"], p["ln2_b"], LN_EPS)}


# --- driver ------------------------------------------------------------------

MODELS = {
    # name: (seed, params, onnx builder, reference, input shape after batch)
    "mobilenet": (101, mobilenet_params, mobilenet_onnx, mobilenet_ref, IMAGE),
    "resnet": (202, resnet_params, resnet_onnx, resnet_ref, IMAGE),
    "transformer": (303, transformer_params, transformer_onnx, transformer_ref, (SEQ, D_MODEL)),
}


def generate(out_dir, batches=(1, 3)):
    """Writes every model, input and reference into out_dir; returns the
    manifest (also written as manifest.json)."""
    os.makedirs(out_dir, exist_ok=True)
    manifest = {"models": []}
    for name, (seed, make_params, make_onnx, forward, item_shape) in MODELS.items():
        rng = np.random.default_rng(seed)
        params = make_params(rng)
        entry = {"name": name, "input": "x", "item_shape": list(item_shape),
                 "variants": [], "batches": {}}
        for batch in batches:
            x = rng.standard_normal((batch, *item_shape)).astype(np.float32)
            expected = forward(params, x)
            stem = f"{name}_b{batch}"
            np.savez(os.path.join(out_dir, stem + ".input.npz"), x=x)
            np.savez(os.path.join(out_dir, stem + ".expected.npz"), **expected)
            entry["batches"][str(batch)] = {"input": stem + ".input.npz",
                                            "expected": stem + ".expected.npz"}
        for opset in OPSETS[name]:
            model = make_onnx(params, opset)
            checked = opset <= CHECKER_MAX_OPSET
            if checked:
                # Strict shape inference too: an exporter would not write a
                # model whose declared shapes contradict its nodes.
                onnx.checker.check_model(model, full_check=True)
            file = f"{name}_opset{opset}.onnx"
            onnx.save(model, os.path.join(out_dir, file))
            entry["variants"].append({"opset": opset, "file": file, "onnx_checker": checked})
        manifest["models"].append(entry)
    with open(os.path.join(out_dir, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")
    return manifest


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--batch", type=int, action="append",
                        help="batch sizes to write inputs and references for (default 1 and 3)")
    args = parser.parse_args()
    manifest = generate(args.out_dir, tuple(args.batch or (1, 3)))
    for m in manifest["models"]:
        opsets = ", ".join(str(v["opset"]) for v in m["variants"])
        print(f"{m['name']}: opsets {opsets}; batches {', '.join(m['batches'])}")


if __name__ == "__main__":
    main()
