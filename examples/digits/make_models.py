#!/usr/bin/python3
"""Generates examples/digits: small trained models with a known fp32
reference, the test models of the int8 post-training quantizer.

Data: scikit-learn's bundled digits set (1797 8x8 images, pixels 0..16,
10 classes), scaled to [0, 1] and split by a seeded permutation into
train (1333) / calibration (64) / held-out test (400) samples.

Models (opset 13, input `input` (batch, 1, 8, 8), output `logits` (batch, 10)),
trained here in float64 numpy with fixed seeds, then stored as float32:
  mlp.onnx           Flatten -> Gemm 64 -> Relu -> Gemm 32 -> Relu -> Gemm 10
  cnn.onnx           Conv 3x3 8ch pad 1 -> Relu -> Conv 3x3 16ch stride 2
                     pad 1 -> Relu -> Flatten -> Gemm 10
  mlp_badscale.onnx  mlp with some hidden channels of fc1 scaled up by
                     BADSCALE_K and the matching fc2 inputs scaled down
                     (see make_badscale)

Written next to them:
  calib/sample_NNN.npy      the calibration samples, float32 (1, 1, 8, 8)
  test_inputs.npz           held-out inputs, key `input`, float32 (400, 1, 8, 8)
  test_labels.npy           held-out labels, int64 (400,)
  fp32_logits_<model>.npz   key `logits`: the models' outputs on test_inputs,
                            computed in float64 from the float32 weights and
                            rounded once to float32

It prints each model's test accuracy (examples/digits/README.md quotes the
figures) and, as a check that the models are useful for the quantizer, the
accuracy of a numpy int8 simulation (docs/quantization.md's scheme, minmax
calibration) and the per-layer error when one layer at a time is int8.

Needs numpy, onnx and scikit-learn (Debian: apt-get install python3-sklearn);
torch is not used. The output is deterministic for a given numpy/BLAS.
Run: /usr/bin/python3 examples/digits/make_models.py [OUT_DIR]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import load_digits

SPLIT_SEED = 20260101
N_TEST = 400
N_CALIB = 64
# A power of two, so scaling the weights by it is exact in float32 and the
# badly scaled model computes the same float32 function as mlp.
BADSCALE_K = 256.0
BADSCALE_CHANNELS = 4


# --- data ---------------------------------------------------------------------
def load_split():
    digits = load_digits()
    x = (digits.data.astype(np.float64) / 16.0).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(SPLIT_SEED).permutation(len(y))
    test, calib, train = order[:N_TEST], order[N_TEST:N_TEST + N_CALIB], order[N_TEST + N_CALIB:]
    # Inputs are multiples of 1/16: exact in float32.
    return {name: (x[idx].astype(np.float32), y[idx])
            for name, idx in (("train", train), ("calib", calib), ("test", test))}


# --- layers (float64; the same code gives the training and the reference) -----
def im2col(x, k, stride, pad):
    """(N, C, H, W) -> (N*OH*OW, C*k*k) patches, channel-major like ONNX
    Conv weights (O, C, k, k)."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    rows = (np.arange(oh) * stride)[:, None] + np.arange(k)[None, :]  # (oh, k)
    cols = (np.arange(ow) * stride)[:, None] + np.arange(k)[None, :]  # (ow, k)
    patches = xp[:, :, rows[:, None, :, None], cols[None, :, None, :]]  # n c oh ow k k
    return patches.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * k * k), (oh, ow)


def col2im(dcols, x_shape, k, stride, pad, oh, ow):
    """The adjoint of im2col: sums patch gradients back onto the input."""
    n, c, h, w = x_shape
    d = dcols.reshape(n, oh, ow, c, k, k).transpose(0, 3, 1, 2, 4, 5)
    dxp = np.zeros((n, c, h + 2 * pad, w + 2 * pad))
    for a in range(k):
        for b in range(k):
            dxp[:, :, a:a + stride * oh:stride, b:b + stride * ow:stride] += d[:, :, :, :, a, b]
    return dxp[:, :, pad:pad + h, pad:pad + w]


def conv_forward(x, w, b, stride, pad):
    cols, (oh, ow) = im2col(x, w.shape[2], stride, pad)
    out = cols @ w.reshape(w.shape[0], -1).T + b
    return out.reshape(x.shape[0], oh, ow, -1).transpose(0, 3, 1, 2), (cols, oh, ow)


def conv_backward(dout, x_shape, w, stride, pad, cache, need_dx):
    cols, oh, ow = cache
    d = dout.transpose(0, 2, 3, 1).reshape(-1, w.shape[0])
    dw = (d.T @ cols).reshape(w.shape)
    db = d.sum(axis=0)
    dx = col2im(d @ w.reshape(w.shape[0], -1), x_shape, w.shape[2], stride, pad, oh, ow) \
        if need_dx else None
    return dx, dw, db


# --- models -------------------------------------------------------------------
# Each model is a list of layers (kind, params, attrs); params are named like
# the ONNX initializers. `forward` runs the list; the ONNX graph is built from
# the same list, so the exported model and the reference cannot disagree in
# structure.
MLP_LAYERS = [("flatten", None, {}), ("gemm", "fc1", {"relu": True}),
              ("gemm", "fc2", {"relu": True}), ("gemm", "fc3", {"relu": False})]
CNN_LAYERS = [("conv", "conv1", {"stride": 1, "pad": 1, "relu": True}),
              ("conv", "conv2", {"stride": 2, "pad": 1, "relu": True}),
              ("flatten", None, {}), ("gemm", "fc", {"relu": False})]


def init_params(layers, shapes, seed):
    """He-normal weights, zero biases."""
    rng = np.random.default_rng(seed)
    params = {}
    for _, name, _ in layers:
        if name is None:
            continue
        shape = shapes[name]
        fan_in = int(np.prod(shape[1:]))
        params[name + ".weight"] = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
        params[name + ".bias"] = np.zeros(shape[0])
    return params


def forward(layers, params, x, quant=None):
    """Logits in float64 and the per-layer caches for backward. `quant`
    (optional) maps a layer name to a function applied to its output: the
    int8 simulation hooks in there."""
    caches = []
    h = np.asarray(x, np.float64)
    if quant and "input" in quant:
        h = quant["input"](h)
    for kind, name, attrs in layers:
        if kind == "flatten":
            caches.append(h.shape)
            h = h.reshape(h.shape[0], -1)
            continue
        w, b = params[name + ".weight"], params[name + ".bias"]
        if kind == "gemm":
            cache, out = h, h @ w.T + b
        else:
            out, cache = conv_forward(h, w, b, attrs["stride"], attrs["pad"])
        if attrs["relu"]:
            out = np.maximum(out, 0)
        caches.append((h.shape, cache, out))
        h = quant[name](out) if quant and name in quant else out
    return h, caches


def backward(layers, params, caches, dlogits):
    grads = {}
    d = dlogits
    for i in range(len(layers) - 1, -1, -1):
        kind, name, attrs = layers[i]
        if kind == "flatten":
            d = d.reshape(caches[i])
            continue
        x_shape, cache, out = caches[i]
        if attrs["relu"]:
            d = d * (out > 0)
        w = params[name + ".weight"]
        if kind == "gemm":
            grads[name + ".weight"], grads[name + ".bias"] = d.T @ cache, d.sum(axis=0)
            d = d @ w
        else:
            d, grads[name + ".weight"], grads[name + ".bias"] = conv_backward(
                d, x_shape, w, attrs["stride"], attrs["pad"], cache, need_dx=i > 0)
    return grads


def train(layers, params, x, y, *, epochs, lr, seed, batch=32, weight_decay=1e-4):
    """Minibatch Adam on softmax cross-entropy, float64, fixed shuffles."""
    rng = np.random.default_rng(seed)
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    beta1, beta2, eps, step = 0.9, 0.999, 1e-8, 0
    for epoch in range(epochs):
        # Cosine decay: the last epochs settle instead of bouncing.
        lr_e = lr * 0.5 * (1 + np.cos(np.pi * epoch / epochs))
        order = rng.permutation(len(y))
        for start in range(0, len(y), batch):
            idx = order[start:start + batch]
            logits, caches = forward(layers, params, x[idx])
            p = np.exp(logits - logits.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            p[np.arange(len(idx)), y[idx]] -= 1
            grads = backward(layers, params, caches, p / len(idx))
            step += 1
            for k in params:
                g = grads[k] + weight_decay * params[k]
                m[k] = beta1 * m[k] + (1 - beta1) * g
                v[k] = beta2 * v[k] + (1 - beta2) * g * g
                mhat, vhat = m[k] / (1 - beta1**step), v[k] / (1 - beta2**step)
                params[k] -= lr_e * mhat / (np.sqrt(vhat) + eps)
    return {k: p.astype(np.float32) for k, p in params.items()}


def make_badscale(params, calib_x):
    """Scales BADSCALE_CHANNELS output channels of fc1 (rows of its weight
    and bias) by BADSCALE_K and the matching input columns of fc2 by
    1/BADSCALE_K. Relu(k*z) = k*Relu(z) for k > 0, so the float function is
    unchanged (exactly, as k is a power of two). A uniform factor on the
    whole layer would not hurt int8 at all (per-tensor activation and
    per-channel weight scales absorb it); a few hot channels do: they set
    the per-tensor range of fc1's output, and the other channels fall into
    two codes."""
    out = {k: v.copy() for k, v in params.items()}
    # The most active channels on the calibration set: scaling a dead one
    # would change nothing.
    h = np.maximum(calib_x.reshape(len(calib_x), -1).astype(np.float64) @ params["fc1.weight"].T
                   + params["fc1.bias"], 0)
    channels = np.sort(np.argsort(-h.mean(axis=0), kind="stable")[:BADSCALE_CHANNELS])
    out["fc1.weight"][channels] *= np.float32(BADSCALE_K)
    out["fc1.bias"][channels] *= np.float32(BADSCALE_K)
    out["fc2.weight"][:, channels] /= np.float32(BADSCALE_K)
    return out, channels


# --- export -------------------------------------------------------------------
def to_onnx(name, layers, params):
    nodes, inits = [], []
    prev = "input"
    for i, (kind, lname, attrs) in enumerate(layers):
        last = i == len(layers) - 1
        out = "logits" if last and not attrs.get("relu") else (lname or f"flatten{i}")
        if kind == "flatten":
            nodes.append(helper.make_node("Flatten", [prev], [out], name=out, axis=1))
        else:
            ins = [prev, lname + ".weight", lname + ".bias"]
            if kind == "gemm":
                nodes.append(helper.make_node("Gemm", ins, [out], name=lname, transB=1))
            else:
                k = params[lname + ".weight"].shape[2]
                p = attrs["pad"]
                nodes.append(helper.make_node("Conv", ins, [out], name=lname, kernel_shape=[k, k],
                                              strides=[attrs["stride"]] * 2, pads=[p] * 4))
            inits += [numpy_helper.from_array(params[lname + ".weight"], lname + ".weight"),
                      numpy_helper.from_array(params[lname + ".bias"], lname + ".bias")]
            if attrs["relu"]:
                nodes.append(helper.make_node("Relu", [out], [out + ".relu"], name=lname + ".relu"))
                out = out + ".relu"
        prev = out
    x = helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 1, 8, 8])
    y = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])
    graph = helper.make_graph(nodes, name, [x], [y], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="examples/digits/make_models.py")
    model.ir_version = 7
    model.doc_string = "Generated by examples/digits/make_models.py; do not edit."
    onnx.checker.check_model(model, full_check=True)
    return model


# --- int8 simulation (a sanity check of the models, not a reference) -----------
def fake_quant_weights(params, names):
    """Per-output-channel symmetric int8 in [-127, 127], round half to even."""
    out = dict(params)
    for name in names:
        w = params[name + ".weight"].astype(np.float64)
        flat = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
        s = np.where(flat > 0, flat / 127.0, 1.0).reshape((-1,) + (1,) * (w.ndim - 1))
        out[name + ".weight"] = np.clip(np.round(w / s), -127, 127) * s
    return out


def activation_quantizer(lo, hi):
    """Per-tensor asymmetric int8 over [min(lo, 0), max(hi, 0)] (minmax)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    s = (hi - lo) / 255.0 if hi > lo else 1.0
    z = np.clip(np.round(-128 - lo / s), -128, 127)
    return lambda t: (np.clip(np.floor(t / s + 0.5) + z, -128, 127) - z) * s


def int8_report(layers, params, calib_x, test_x, test_y, ref_logits):
    """Accuracy with every layer int8, and per layer the relative RMS error
    of the logits when only that layer (weights and output) is int8."""
    names = [n for _, n, _ in layers if n is not None]
    ranges = {}

    def record(name):
        def hook(t):
            ranges[name] = (float(t.min()), float(t.max()))
            return t
        return hook

    forward(layers, params, calib_x, quant={n: record(n) for n in ["input", *names]})
    quant = {n: activation_quantizer(*ranges[n]) for n in ["input", *names]}
    logits, _ = forward(layers, fake_quant_weights(params, names), test_x, quant=quant)
    acc = float((logits.argmax(axis=1) == test_y).mean())
    rms = np.sqrt((ref_logits**2).mean())
    per_layer = {}
    for n in names:
        one, _ = forward(layers, fake_quant_weights(params, [n]), test_x, quant={n: quant[n]})
        per_layer[n] = float(np.sqrt(((one - ref_logits)**2).mean()) / rms)
    return acc, per_layer


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(os.path.join(out_dir, "calib"), exist_ok=True)
    data = load_split()
    (x_tr, y_tr), (x_cal, _), (x_te, y_te) = data["train"], data["calib"], data["test"]

    mlp = train(MLP_LAYERS, init_params(MLP_LAYERS, {"fc1": (64, 64), "fc2": (32, 64),
                                                      "fc3": (10, 32)}, seed=1),
                x_tr, y_tr, epochs=60, lr=2e-3, seed=11)
    cnn = train(CNN_LAYERS, init_params(CNN_LAYERS, {"conv1": (8, 1, 3, 3), "conv2": (16, 8, 3, 3),
                                                      "fc": (10, 256)}, seed=2),
                x_tr, y_tr, epochs=30, lr=3e-3, seed=12)
    bad, channels = make_badscale(mlp, x_cal)
    models = [("mlp", MLP_LAYERS, mlp), ("cnn", CNN_LAYERS, cnn), ("mlp_badscale", MLP_LAYERS, bad)]

    for i, x in enumerate(x_cal):
        np.save(os.path.join(out_dir, "calib", f"sample_{i:03d}.npy"), x[None])
    np.savez_compressed(os.path.join(out_dir, "test_inputs.npz"), input=x_te)
    np.save(os.path.join(out_dir, "test_labels.npy"), y_te)
    print(f"split: {len(y_tr)} train, {len(x_cal)} calibration, {len(y_te)} test "
          f"(seed {SPLIT_SEED})")
    print(f"mlp_badscale: fc1 channels {channels.tolist()} x{BADSCALE_K:g}, "
          f"fc2 inputs /{BADSCALE_K:g}")

    for name, layers, params in models:
        onnx.save(to_onnx("digits_" + name, layers, params), os.path.join(out_dir, name + ".onnx"))
        logits, _ = forward(layers, params, x_te)
        top2 = np.sort(logits, axis=1)[:, -2:]
        margin = float((top2[:, 1] - top2[:, 0]).min())
        # The CLI test compares the float32 backend's top-1 with this
        # float64 one; a near tie could flip and make it flaky.
        if margin < 1e-3:
            raise SystemExit(f"{name}: top-2 logits within {margin:.2e} on a test sample; "
                             "change a seed")
        np.savez_compressed(os.path.join(out_dir, f"fp32_logits_{name}.npz"),
                            logits=logits.astype(np.float32))
        acc = float((logits.argmax(axis=1) == y_te).mean())
        q_acc, per_layer = int8_report(layers, params, x_cal, x_te, y_te, logits)
        worst = max(per_layer, key=per_layer.get)
        layers_text = ", ".join(f"{k} {v:.4f}" for k, v in per_layer.items())
        print(f"{name}: fp32 test accuracy {acc:.4f} ({int((logits.argmax(axis=1) == y_te).sum())}"
              f"/{len(y_te)}), min top-2 margin {margin:.3f}; int8 simulation {q_acc:.4f}; "
              f"per-layer relative logit error: {layers_text} (worst {worst})")


if __name__ == "__main__":
    main()
