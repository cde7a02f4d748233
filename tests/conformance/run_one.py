#!/usr/bin/python3
"""Runs one ONNX conformance case through the eulernpu CLI, for debugging.

Usage: run_one.py CASE_DIR [EULERNPU] [--keep DIR]
  CASE_DIR  e.g. ../shared/onnx-tests/node/test_relu
Converts each test_data_set_N's input_K.pb / output_K.pb to npz, then
compile (with --input-shape for inputs of dynamic shape), run and compare
(rtol 1e-3, atol 1e-7 as upstream; dtype and shape exactly), printing every
command's output. The conformance runner (conformance_runner --case NAME)
does the same in process; this is the slow way, with files to look at: the
work directory is removed at exit unless --keep DIR names one.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import onnx
from onnx import numpy_helper


def save_npz(path, arrays):
    """np.savez without its keyword pitfalls: numpy 1.24 takes an input named
    'like' (or 'file') as its own argument and silently drops it."""
    with zipfile.ZipFile(path, "w") as z:
        for name, array in arrays.items():
            with z.open(name + ".npy", "w") as f:
                np.lib.format.write_array(f, np.asarray(array))


# numpy has no bfloat16: eulernpu's npz files hold its bits in this
# one-field structured dtype (docs/artifacts.md).
BF16 = np.dtype([("bfloat16", "<u2")])


def load_array(path):
    """The .pb tensor at `path` as numpy, bfloat16 as BF16 bits."""
    t = onnx.load_tensor(path)
    if t.data_type != onnx.TensorProto.BFLOAT16:
        return numpy_helper.to_array(t)
    bits = np.frombuffer(t.raw_data, "<u2") if t.raw_data else np.array(t.int32_data, "<u2")
    return bits.reshape(tuple(t.dims)).view(BF16)


def as_float(a):
    """BF16 bits widened (exactly) to float32; other arrays unchanged."""
    if a.dtype == BF16:
        return (a["bfloat16"].astype(np.uint32) << 16).view(np.float32)
    return a


def data_sets(case):
    """test_data_set_N directories in N order."""
    dirs = glob.glob(os.path.join(case, "test_data_set_*"))
    return sorted(dirs, key=lambda d: int(re.sub(r"\D", "", os.path.basename(d)) or 0))


def numbered(directory, prefix, names):
    """{name: array} of prefix_K.pb, fed by position as upstream does."""
    out = {}
    for k, name in enumerate(names):
        path = os.path.join(directory, f"{prefix}_{k}.pb")
        if os.path.exists(path):
            out[name] = load_array(path)
    return out


def shape_options(model, inputs):
    """--input-shape for every input whose declared shape is not fully known."""
    options = []
    for v in model.graph.input:
        dims = v.type.tensor_type.shape.dim
        known = v.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims)
        if v.name in inputs and not known and inputs[v.name].ndim > 0:
            shape = ",".join(str(d) for d in inputs[v.name].shape)
            options += ["--input-shape", f"{v.name}={shape}"]
    return options


def run(eulernpu, args):
    r = subprocess.run([eulernpu, *args], capture_output=True, text=True)
    print("$ eulernpu", " ".join(args), "\n" + r.stdout + r.stderr)
    return r.returncode == 0


def compare(got, outs):
    ok = True
    for name, want in outs.items():
        if name not in got:
            print(f"{name}: missing from the results")
            ok = False
            continue
        have = got[name]
        same = have.shape == want.shape and have.dtype == want.dtype and np.allclose(
            as_float(have), as_float(want), rtol=1e-3, atol=1e-7, equal_nan=True)
        print(f"{name}: shape {have.shape} vs {want.shape}, dtype {have.dtype} vs {want.dtype}, "
              f"{'OK' if same else 'MISMATCH'}")
        if not same and have.shape == want.shape and want.size:
            diff = np.abs(as_float(have).astype(np.float64) - as_float(want).astype(np.float64))
            print("  max abs diff", np.nanmax(diff), "at", np.unravel_index(np.nanargmax(diff),
                                                                         want.shape))
        ok = ok and same
    return ok


def main():
    case = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    eulernpu = sys.argv[2] if len(sys.argv) > 2 and not sys.argv[2].startswith("--") else \
        os.path.join(here, "..", "..", "build", "bin", "eulernpu")
    if "--keep" in sys.argv:
        work = sys.argv[sys.argv.index("--keep") + 1]
        os.makedirs(work, exist_ok=True)
        check(case, eulernpu, work)
    else:
        work = tempfile.mkdtemp(prefix="conformance-")
        try:
            check(case, eulernpu, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def check(case, eulernpu, work):
    """Compiles, runs and compares every data set of `case` in `work`; exits
    non-zero on the first failing command or any mismatch."""
    model = onnx.load(os.path.join(case, "model.onnx"), load_external_data=False)
    inits = {t.name for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    outputs = [o.name for o in model.graph.output]
    ok = True
    compiled = {}  # --input-shape options -> artifact
    for data in data_sets(case):
        tag = os.path.basename(data)
        print(f"== {tag}")
        ins, outs = numbered(data, "input", inputs), numbered(data, "output", outputs)
        save_npz(os.path.join(work, f"{tag}.in.npz"), ins)
        save_npz(os.path.join(work, f"{tag}.gold.npz"), outs)
        options = shape_options(model, ins)
        key = " ".join(options)
        if key not in compiled:
            art = os.path.join(work, f"art{len(compiled)}")
            if not run(eulernpu, ["compile", "--model", os.path.join(case, "model.onnx"),
                                  *options, "--out", art]):
                sys.exit(1)
            compiled[key] = art
        out = os.path.join(work, f"{tag}.out.npz")
        if not run(eulernpu, ["run", "--artifact", compiled[key], "--input",
                              os.path.join(work, f"{tag}.in.npz"), "--out", out]):
            sys.exit(1)
        ok = compare(np.load(out), outs) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
