"""Float64 numpy reference implementations of the operators the test
networks use (tests/models/make_models.py).

Each function is written from the operator's mathematical definition, not
from eulernpu's kernels nor from the ONNX graph, so a network built from them
is an independent check of what the compiler and the cpu_ref backend compute.
Everything is evaluated in float64: the reference is then far more accurate
than the float32 result it checks, and the comparison tolerance only has to
cover float32 rounding.

Layouts follow ONNX: images are NCHW, conv weights (M, C/group, kH, kW),
Gemm weights as given to the operator.
"""
import math

import numpy as np


def _f64(x):
    return np.asarray(x, dtype=np.float64)


def conv2d(x, w, b=None, stride=1, pad=0, groups=1):
    """2-D cross-correlation as ONNX Conv computes it.

    x (N, C, H, W), w (M, C/groups, kH, kW), symmetric zero padding `pad`
    on both spatial axes, the same `stride` on both. Channel c of group g
    only meets the filters of group g, which makes groups == C a depthwise
    convolution. Out size: floor((H + 2*pad - kH) / stride) + 1.
    """
    x, w = _f64(x), _f64(w)
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    assert c == cg * groups and m % groups == 0, "channels do not split into groups"
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    mg = m // groups
    out = np.zeros((n, m, oh, ow))
    for g in range(groups):
        xg = xp[:, g * cg:(g + 1) * cg]
        wg = w[g * mg:(g + 1) * mg]
        # Sum over every kernel tap: the window of xg that tap (i, j) sees,
        # weighted by that tap of each filter.
        for i in range(kh):
            for j in range(kw):
                window = xg[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
                out[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", window, wg[:, :, i, j])
    if b is not None:
        out += _f64(b).reshape(1, m, 1, 1)
    return out


def batchnorm(x, scale, bias, mean, var, eps=1e-5):
    """Inference-mode BatchNormalization over axis 1:
    y = scale * (x - mean) / sqrt(var + eps) + bias, per channel."""
    shape = (1, -1) + (1,) * (np.ndim(x) - 2)
    x = _f64(x)
    return (_f64(scale).reshape(shape) * (x - _f64(mean).reshape(shape))
            / np.sqrt(_f64(var).reshape(shape) + eps) + _f64(bias).reshape(shape))


def relu(x):
    return np.maximum(_f64(x), 0.0)


def relu6(x):
    """min(max(x, 0), 6): what Clip(0, 6) computes."""
    return np.clip(_f64(x), 0.0, 6.0)


def hard_sigmoid(x, alpha=1.0 / 6.0, beta=0.5):
    """max(0, min(1, alpha * x + beta))."""
    return np.clip(alpha * _f64(x) + beta, 0.0, 1.0)


def hard_swish(x):
    """x * relu6(x + 3) / 6 (MobileNetV3), which equals
    x * HardSigmoid(x, alpha=1/6, beta=0.5)."""
    x = _f64(x)
    return x * np.clip(x + 3.0, 0.0, 6.0) / 6.0


def max_pool2d(x, kernel, stride, pad):
    """Max over each kernel x kernel window; padding never wins (it is
    -inf, as ONNX MaxPool pads)."""
    x = _f64(x)
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=-np.inf)
    oh = (h + 2 * pad - kernel) // stride + 1
    ow = (w + 2 * pad - kernel) // stride + 1
    out = np.full((n, c, oh, ow), -np.inf)
    for i in range(kernel):
        for j in range(kernel):
            out = np.maximum(out, xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride])
    return out


def global_avg_pool(x):
    """Mean over every spatial position, keeping (N, C, 1, 1)."""
    x = _f64(x)
    return x.mean(axis=tuple(range(2, x.ndim)), keepdims=True)


def gemm(a, b, c=None, trans_b=False):
    """a @ b (or a @ b.T) + c, as ONNX Gemm with alpha = beta = 1."""
    b = _f64(b)
    y = _f64(a) @ (b.T if trans_b else b)
    return y if c is None else y + _f64(c)


def linear(x, w, b):
    """x @ w + b over the last axis, with w stored (in, out): a
    torch.nn.Linear on a 3-D input as exported (MatMul + Add)."""
    return _f64(x) @ _f64(w) + _f64(b)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis`; the max is subtracted first, which
    leaves the value unchanged and keeps exp from overflowing."""
    x = _f64(x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layernorm(x, gamma, beta, eps=1e-5):
    """Normalizes over the last axis with the biased variance (as
    torch.nn.LayerNorm and ONNX LayerNormalization do), then scales and
    shifts."""
    x = _f64(x)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * _f64(gamma) + _f64(beta)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu(x):
    """The exact GELU, x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2))); math.erf
    is correctly rounded to float64, and numpy has no erf of its own."""
    x = _f64(x)
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def multi_head_attention(x, wq, bq, wk, bk, wv, bv, wo, bo, heads):
    """Scaled dot-product self-attention over (batch, seq, d_model) with
    `heads` heads of d_model / heads features each:
    softmax(Q K^T / sqrt(d_head)) V per head, heads concatenated, then the
    output projection."""
    x = _f64(x)
    n, s, d = x.shape
    dh = d // heads

    def split(t):  # (n, s, d) -> (n, heads, s, dh)
        return t.reshape(n, s, heads, dh).transpose(0, 2, 1, 3)

    q, k, v = split(linear(x, wq, bq)), split(linear(x, wk, bk)), split(linear(x, wv, bv))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)
    ctx = softmax(scores, axis=-1) @ v
    return linear(ctx.transpose(0, 2, 1, 3).reshape(n, s, d), wo, bo)
