#!/usr/bin/python3
"""Generates tiny_mlp's weights.npz, input.npz and golden.npz.

The golden is computed here with numpy alone, independently of eulernpu.
Every weight and input is a multiple of 1/8 with small magnitude, so each
product and sum of the two linear layers is exact in float32 whatever the
summation order; softmax is computed in float64 and rounded once. A correct
float32 implementation therefore reproduces the golden bit for bit, and
`compare` reports a max abs diff of exactly 0.0: any other figure is a bug.

Run: /usr/bin/python3 examples/tiny_mlp/make_example.py [OUT_DIR]
"""
import os
import sys

import numpy as np


def dyadic(rng, shape, low=-8, high=8):
    """Integers in [low, high) divided by 8: exactly representable."""
    return (rng.integers(low, high, size=shape) / 8.0).astype(np.float32)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(20261129)
    w1 = dyadic(rng, (16, 8))   # Gemm weight, (out, in) as PyTorch's Linear
    b1 = dyadic(rng, (16,))
    w2 = dyadic(rng, (16, 4))   # MatMul weight, (in, out)
    b2 = dyadic(rng, (4,))
    x = dyadic(rng, (1, 8))

    h = np.maximum(x.astype(np.float64) @ w1.T.astype(np.float64) + b1, 0.0)
    logits = h @ w2.astype(np.float64) + b2
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)

    np.savez(os.path.join(out, "weights.npz"),
             **{"fc1.weight": w1, "fc1.bias": b1, "fc2.weight": w2, "fc2.bias": b2})
    np.savez(os.path.join(out, "input.npz"), x=x)
    np.savez(os.path.join(out, "golden.npz"), probs=probs)


if __name__ == "__main__":
    main()
