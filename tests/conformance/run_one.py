#!/usr/bin/python3
"""Runs one ONNX conformance case through the eulernpu CLI, for debugging.

Usage: run_one.py CASE_DIR [EULERNPU] [--keep DIR]
  CASE_DIR  e.g. ../shared/onnx-tests/node/test_relu
Converts the case's input_N.pb / output_N.pb to npz, then compile, run and
compare (rtol 1e-3, atol 1e-7 as upstream), printing every command's output.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    case = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    eulernpu = sys.argv[2] if len(sys.argv) > 2 and not sys.argv[2].startswith("--") else \
        os.path.join(here, "..", "..", "build", "bin", "eulernpu")
    work = tempfile.mkdtemp(prefix="conformance-")
    if "--keep" in sys.argv:
        work = sys.argv[sys.argv.index("--keep") + 1]
        os.makedirs(work, exist_ok=True)
    model = onnx.load(os.path.join(case, "model.onnx"), load_external_data=False)
    inits = {t.name for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    outputs = [o.name for o in model.graph.output]
    data = os.path.join(case, "test_data_set_0")
    ins = {n: numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"input_{k}.pb")))
           for k, n in enumerate(inputs) if os.path.exists(os.path.join(data, f"input_{k}.pb"))}
    outs = {n: numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"output_{k}.pb")))
            for k, n in enumerate(outputs)}
    np.savez(os.path.join(work, "in.npz"), **ins)
    np.savez(os.path.join(work, "gold.npz"), **outs)
    steps = [
        ["compile", "--model", os.path.join(case, "model.onnx"), "--out", os.path.join(work, "art")],
        ["run", "--artifact", os.path.join(work, "art"), "--input", os.path.join(work, "in.npz"),
         "--out", os.path.join(work, "out.npz")],
    ]
    for step in steps:
        r = subprocess.run([eulernpu, *step], capture_output=True, text=True)
        print("$ eulernpu", " ".join(step), "\n" + r.stdout + r.stderr)
        if r.returncode:
            sys.exit(1)
    got = np.load(os.path.join(work, "out.npz"))
    ok = True
    for name, want in outs.items():
        have = got[name]
        same = have.shape == want.shape and np.allclose(have, want, rtol=1e-3, atol=1e-7,
                                                        equal_nan=True)
        print(f"{name}: shape {have.shape} vs {want.shape}, dtype {have.dtype} vs {want.dtype}, "
              f"{'OK' if same else 'MISMATCH'}")
        if not same and have.shape == want.shape:
            print("  max abs diff", np.max(np.abs(have.astype(np.float64) - want.astype(np.float64))))
        ok = ok and same
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
