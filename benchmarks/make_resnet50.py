"""Writes a ResNet-50 (v1.5 layer shapes, 224x224 input, 1000 classes) with
random weights as ONNX, for benchmarks: the size of the real network without
its 100 MB of trained weights in the repository. Deterministic (fixed seed).

    /usr/bin/python3 benchmarks/make_resnet50.py OUT.onnx [--calib DIR N]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


class Builder:
    def __init__(self, seed=50):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def conv(self, x, cin, cout, k, stride=1, relu=True):
        w = self.name("w")
        b = self.name("b")
        # He initialization keeps activations in range through 50 layers.
        self.inits.append(nh.from_array(
            (self.rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k)) * 0.5)
            .astype(np.float32), w))
        self.inits.append(nh.from_array((self.rng.standard_normal(cout) * 0.01).astype(np.float32), b))
        y = self.name("conv")
        self.nodes.append(h.make_node("Conv", [x, w, b], [y], y, kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[k // 2] * 4))
        if relu:
            r = self.name("relu")
            self.nodes.append(h.make_node("Relu", [y], [r], r))
            return r
        return y

    def bottleneck(self, x, cin, mid, cout, stride):
        y = self.conv(x, cin, mid, 1)
        y = self.conv(y, mid, mid, 3, stride)
        y = self.conv(y, mid, cout, 1, relu=False)
        short = x if (cin == cout and stride == 1) else self.conv(x, cin, cout, 1, stride, relu=False)
        s = self.name("add")
        self.nodes.append(h.make_node("Add", [y, short], [s], s))
        r = self.name("relu")
        self.nodes.append(h.make_node("Relu", [s], [r], r))
        return r


def resnet50():
    b = Builder()
    x = b.conv("input", 3, 64, 7, 2)
    p = "pool1"
    b.nodes.append(h.make_node("MaxPool", [x], [p], p, kernel_shape=[3, 3], strides=[2, 2],
                               pads=[1, 1, 1, 1]))
    x, cin = p, 64
    for mid, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            x = b.bottleneck(x, cin, mid, mid * 4, stride if i == 0 else 1)
            cin = mid * 4
    b.nodes.append(h.make_node("GlobalAveragePool", [x], ["gap"], "gap"))
    b.nodes.append(h.make_node("Flatten", ["gap"], ["flat"], "flat"))
    b.inits.append(nh.from_array((b.rng.standard_normal((1000, 2048)) * 0.02).astype(np.float32), "fc_w"))
    b.inits.append(nh.from_array(np.zeros(1000, np.float32), "fc_b"))
    b.nodes.append(h.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], "fc", transB=1))
    g = h.make_graph(b.nodes, "resnet50", [h.make_tensor_value_info("input", T.FLOAT, [1, 3, 224, 224])],
                     [h.make_tensor_value_info("logits", T.FLOAT, [1, 1000])], b.inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)])


def main():
    out = sys.argv[1]
    onnx.save(resnet50(), out)
    if len(sys.argv) >= 5 and sys.argv[2] == "--calib":
        d, n = sys.argv[3], int(sys.argv[4])
        os.makedirs(d, exist_ok=True)
        rng = np.random.default_rng(1)
        for i in range(n):
            np.save(os.path.join(d, f"sample_{i:03d}.npy"),
                    rng.standard_normal((1, 3, 224, 224)).astype(np.float32))


if __name__ == "__main__":
    main()
