#!/usr/bin/python3
"""Generates examples/onnx_mlp: a small ONNX model as PyTorch exports one.

model.onnx (opset 13): x (batch, 2, 4) with a dynamic batch dimension,
flattened by the Shape -> Gather -> Unsqueeze -> Concat -> Reshape chain that
`x.view(x.size(0), -1)` exports to, then Gemm -> Relu -> MatMul -> Softmax.
input.npz holds a batch of 2; golden.npz the numpy reference output,
computed here in float64 and rounded once.

Run: /usr/bin/python3 examples/onnx_mlp/make_model.py [OUT_DIR]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(2026)
    w1 = (rng.integers(-8, 8, (16, 8)) / 8).astype(np.float32)
    b1 = (rng.integers(-8, 8, (16,)) / 8).astype(np.float32)
    w2 = (rng.integers(-8, 8, (16, 5)) / 8).astype(np.float32)
    nodes = [
        helper.make_node("Shape", ["x"], ["x_shape"], name="shape"),
        helper.make_node("Gather", ["x_shape", "zero"], ["batch"], name="batch", axis=0),
        helper.make_node("Unsqueeze", ["batch", "axis0"], ["batch1"], name="unsqueeze"),
        helper.make_node("Concat", ["batch1", "minus1"], ["flat_shape"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "flat_shape"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc1.weight", "fc1.bias"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["h_relu"], name="relu"),
        helper.make_node("MatMul", ["h_relu", "fc2.weight"], ["logits"], name="fc2"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    inits = [
        numpy_helper.from_array(w1, "fc1.weight"), numpy_helper.from_array(b1, "fc1.bias"),
        numpy_helper.from_array(w2, "fc2.weight"),
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array([0], np.int64), "axis0"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus1"),
    ]
    graph = helper.make_graph(
        nodes, "onnx_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 2, 4])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="make_model.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))

    x = (rng.integers(-8, 8, (2, 2, 4)) / 8).astype(np.float32)
    h = np.maximum(x.reshape(2, -1).astype(np.float64) @ w1.T + b1, 0)
    logits = h @ w2
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    np.savez(os.path.join(out, "input.npz"), x=x)
    np.savez(os.path.join(out, "golden.npz"),
             probs=(e / e.sum(axis=-1, keepdims=True)).astype(np.float32))


if __name__ == "__main__":
    main()
