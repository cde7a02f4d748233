#!/usr/bin/python3
"""Regenerates the onnxruntime references of the real-model suite.

For each model: generate its "reference" samples (inputs.py, kind=reference),
write them as raw little-endian binaries, run make_references.js (onnxruntime-node,
CPU, graph optimizations disabled, 1 thread) on them, and pack the outputs into
references/<id>.npz as '<sample>/<key>' (key = suite.output_key(output name)), a
deflated npz with fixed zip timestamps so the same outputs give the same bytes.
models.json gets each model's outputs (name, key, dtype, shape), the sha256 of each
reference input and the onnxruntime version.

usage: /usr/bin/python3 make_references.py [--model ID]... [--check]
  needs the models and onnxruntime-node in the cache (both fetched if missing:
  scripts/fetch_models.sh --ort); --check compares with the stored references
  instead of writing anything.
"""
import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fetch  # noqa: E402
import inputs  # noqa: E402
import suite  # noqa: E402


def write_npz(path, arrays):
    """A deflated .npz with fixed timestamps, written atomically."""
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for key, a in arrays.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asarray(a), allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, buf.getvalue(), compresslevel=9)
    os.replace(tmp, path)


def run_ort(doc, spec, samples, node):
    """samples: [(name, {input: array})] -> (result json, {(sample, output): array})."""
    rt = doc["reference_runtime"]
    tmp = tempfile.mkdtemp(prefix="eulernpu-ref-")
    try:
        job = {"model": suite.model_path(spec), "out_dir": tmp,
               "graph_optimization_level": rt["graph_optimization_level"],
               "intra_op_num_threads": rt["intra_op_num_threads"], "samples": []}
        for name, sample in samples:
            ins = []
            for j, (iname, a) in enumerate(sample.items()):
                f = os.path.join(tmp, f"{name}.in{j}.bin")
                a.astype(a.dtype.newbyteorder("<"), order="C").tofile(f)
                ins.append({"name": iname, "dtype": a.dtype.name, "shape": list(a.shape), "file": f})
            job["samples"].append({"name": name, "inputs": ins})
        with open(os.path.join(tmp, "job.json"), "w") as f:
            json.dump(job, f)
        env = dict(os.environ, NODE_PATH=suite.ort_node_modules())
        r = subprocess.run([node, os.path.join(HERE, "make_references.js"), os.path.join(tmp, "job.json")],
                           capture_output=True, text=True, env=env, timeout=1800)
        if r.returncode != 0:
            raise SystemExit(f"make_references: {spec['id']}: onnxruntime failed:\n{r.stderr}{r.stdout}")
        with open(os.path.join(tmp, "result.json")) as f:
            res = json.load(f)
        arrays = {}
        for s in res["samples"]:
            for o in s["outputs"]:
                a = np.fromfile(o["file"], dtype=np.dtype(o["dtype"]).newbyteorder("<"))
                arrays[(s["name"], o["name"])] = a.reshape(o["shape"])
        return res, arrays
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", action="append", help="only this model id (repeatable)")
    ap.add_argument("--node", default=shutil.which("node") or "node")
    ap.add_argument("--check", action="store_true", help="compare with the stored references, write nothing")
    args = ap.parse_args(argv)
    doc = suite.load_models()
    ids = args.model or [m["id"] for m in doc["models"]]
    try:
        fetch.fetch_models(doc, suite.cache_dir(), set(ids))
        fetch.install_ort(doc, suite.cache_dir())
    except fetch.FetchError as e:
        raise SystemExit(f"make_references: {e}")
    os.makedirs(suite.REFERENCES_DIR, exist_ok=True)
    failed = False
    for mid in ids:
        spec = inputs.model_spec(mid, doc)
        n = spec["reference"]["samples"]
        samples = [(inputs.sample_name("reference", i), inputs.generate(spec, "reference", i)) for i in range(n)]
        res, arrays = run_ort(doc, spec, samples, args.node)
        declared = [o["name"] for o in spec["outputs"]]
        if declared and res["output_names"] != declared:  # a new model starts with "outputs": []
            raise SystemExit(f"make_references: {mid}: ORT outputs {res['output_names']} != models.json {declared}")
        packed = {suite.reference_key(s, o): a for (s, o), a in arrays.items()}
        ref_path = os.path.join(HERE, spec["reference"]["file"])
        if args.check:
            with np.load(ref_path) as old:
                for k, a in packed.items():
                    same = k in old.files and old[k].shape == a.shape and np.array_equal(old[k], a)
                    failed |= not same
                    print(f"{mid:22s} {k:40s} {'identical' if same else 'DIFFERENT'}")
            stored = spec["reference"].get("input_sha256", {})
            for name, s in samples:
                if stored.get(name) != inputs.sample_sha256(s):
                    failed = True
                    print(f"{mid:22s} {name}: input sha256 differs from models.json")
            continue
        write_npz(ref_path, packed)
        first = res["samples"][0]["outputs"]
        spec["outputs"] = [{"name": o["name"], "key": suite.output_key(o["name"]), "dtype": o["dtype"],
                            "shape": o["shape"]} for o in first]
        spec["reference"]["input_sha256"] = {name: inputs.sample_sha256(s) for name, s in samples}
        spec["reference"]["ort_version"] = res["ort_version"].get("node", "")
        suite.save_models(doc)
        size = os.path.getsize(ref_path)
        print(f"{mid:22s} {n} sample(s) -> {os.path.relpath(ref_path, HERE)} ({size / 1024:.0f} KiB)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
