"""The real-model suite in fp32: every model of models.json, compiled for cpu_ref
and run by eulernpu, must match the onnxruntime reference (references/<id>.npz)
within models.json's tolerance (rtol 1e-3, atol 1e-4).

A model listed under models.json "known_gaps" must still fail exactly as recorded
there (stage and error), so that fixing the gap makes this test fail until the
entry is removed.

    cd tests/real_models && /usr/bin/python3 -m unittest -v test_fp32

Environment: EULERNPU_BIN, EULERNPU_SOURCE_DIR, EULERNPU_BUILD_DIR (as for tests/cli),
EULERNPU_MODEL_CACHE (default ~/.cache/eulernpu/models), EULERNPU_REAL_MODELS=id,id
(a subset), EULERNPU_REAL_MODELS_SHARD=K/N (the models whose index in models.json
is K modulo N: ctest runs the int8 suite as parallel shards),
EULERNPU_REAL_MODELS_REPORT=FILE (write the per-model results as JSON;
an "int8" entry test_int8 wrote into a model is kept).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import harness  # noqa: E402
import inputs  # noqa: E402
import suite  # noqa: E402

DOC = suite.load_models()
TOL = DOC["tolerance"]
FETCH = os.path.join(harness.SOURCE_DIR, "scripts", "fetch_models.sh")


def selected_models():
    only = [s for s in os.environ.get("EULERNPU_REAL_MODELS", "").split(",") if s]
    unknown = set(only) - {m["id"] for m in DOC["models"]}
    if unknown:
        raise ValueError(f"EULERNPU_REAL_MODELS: unknown model(s) {sorted(unknown)}")
    models = [m for m in DOC["models"] if not only or m["id"] in only]
    shard = os.environ.get("EULERNPU_REAL_MODELS_SHARD", "")
    if not shard:
        return models
    try:
        k, n = (int(x) for x in shard.split("/"))
        if not 0 <= k < n:
            raise ValueError
    except ValueError:
        raise ValueError(f"EULERNPU_REAL_MODELS_SHARD={shard!r}: expected K/N with 0 <= K < N")
    index = {m["id"]: i for i, m in enumerate(DOC["models"])}
    return [m for m in models if index[m["id"]] % n == k]


class StageFailed(Exception):
    """eulernpu failed at `stage` ('compile', 'run') or the result did not match ('compare')."""

    def __init__(self, stage, title, where="", detail="", outputs=()):
        super().__init__(f"{stage}: {title}" + (f"\n  where: {where}" if where else "") +
                         (f"\n{detail}" if detail else ""))
        self.stage, self.title, self.where, self.detail = stage, title, where, detail
        self.outputs = sorted(set(outputs))  # compare: the outputs that differ


def _eulernpu(stage, *args, env=None):
    r = harness.run(*args, env=env, timeout=1800)
    if r.returncode != 0:
        m = harness.ERROR_RE.match(harness._last_error(r.stderr))
        if m is None:
            raise StageFailed(stage, f"exit {r.returncode} without a three-line error", detail=r.stderr[-2000:])
        raise StageFailed(stage, m["title"], m["where"], r.stderr[-2000:])
    return r


def _diff_stats(got, exp):
    got64, exp64 = got.astype(np.float64), exp.astype(np.float64)
    d = np.abs(got64 - exp64)
    sig = np.abs(exp64) > 1e-6
    return {"max_abs": float(d.max()) if d.size else 0.0,
            "max_rel": float((d[sig] / np.abs(exp64[sig])).max()) if sig.any() else 0.0,
            # allclose passes iff this is <= 1
            "tol_ratio": float((d / (TOL["atol"] + TOL["rtol"] * np.abs(exp64))).max()) if d.size else 0.0}


def fetch(models):
    """The models into the cache (scripts/fetch_models.sh: quiet, and quick
    when they are there already)."""
    ids = [a for m in models for a in ("--model", m["id"])]
    r = subprocess.run([FETCH, "--quiet", *ids], capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"scripts/fetch_models.sh failed (exit {r.returncode}):\n{r.stderr}{r.stdout}")


class RealModelsFp32(unittest.TestCase):
    results = {}

    @classmethod
    def setUpClass(cls):
        if not os.path.exists(harness.EULERNPU):
            raise unittest.SkipTest(f"no eulernpu at {harness.EULERNPU}")
        fetch(selected_models())

    @classmethod
    def tearDownClass(cls):
        if not cls.results:
            return
        lines = [f"{'model':22s} {'compile':8s} {'run':8s} {'max abs':>10s} {'max rel':>10s} {'tol ratio':>9s}  note"]
        for mid, r in cls.results.items():
            lines.append(f"{mid:22s} {r.get('compile', '-'):8s} {r.get('run', '-'):8s} "
                         f"{r.get('max_abs', float('nan')):10.3g} {r.get('max_rel', float('nan')):10.3g} "
                         f"{r.get('tol_ratio', float('nan')):9.3g}  {r.get('note', '')}")
        print("\n" + "\n".join(lines), file=sys.stderr)
        report = os.environ.get("EULERNPU_REAL_MODELS_REPORT")
        if report:
            try:  # keep the "int8" entries test_int8 merges into the same file
                with open(report) as f:
                    old = json.load(f)
                old = old if isinstance(old, dict) else {}
            except (OSError, ValueError):
                old = {}
            for mid, r in cls.results.items():
                r = dict(r)
                if isinstance(old.get(mid), dict) and "int8" in old[mid]:
                    r["int8"] = old[mid]["int8"]
                old[mid] = r
            with open(report + ".tmp", "w") as f:
                json.dump(old, f, indent=1)
            os.replace(report + ".tmp", report)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="eulernpu-real-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def _check_model(self, spec, res):
        """Compiles, runs and compares one model; raises StageFailed on the first failure."""
        art = os.path.join(self.tmp, spec["id"] + ".artifact")
        shape_args = suite.compile_args(spec)
        res["compile"] = res["run"] = "-"
        try:
            _eulernpu("compile", "compile", "--model", suite.model_path(spec), *shape_args, "--out", art)
        except StageFailed:
            res["compile"] = "FAIL"
            raise
        res["compile"] = "ok"
        with np.load(os.path.join(HERE, spec["reference"]["file"])) as ref:
            refs = {k: ref[k] for k in ref.files}
        stats = {"max_abs": 0.0, "max_rel": 0.0, "tol_ratio": 0.0}
        mismatches, mismatched = [], []
        for i in range(spec["reference"]["samples"]):
            name = inputs.sample_name("reference", i)
            sample = inputs.generate(spec, "reference", i)
            self.assertEqual(inputs.sample_sha256(sample), spec["reference"]["input_sha256"][name],
                             f"{spec['id']}: the input generator changed ({name}); "
                             "regenerate the references with make_references.py")
            in_npz, out_npz = os.path.join(self.tmp, name + ".npz"), os.path.join(self.tmp, name + ".out.npz")
            np.savez(in_npz, **suite.runtime_inputs(spec, sample))
            try:
                _eulernpu("run", "run", "--artifact", art, "--input", in_npz, "--out", out_npz)
            except StageFailed:
                res["run"] = "FAIL"
                raise
            res["run"] = "ok"
            with np.load(out_npz) as got_npz:
                got = {k: got_npz[k] for k in got_npz.files}
            self.assertEqual(sorted(got), sorted(o["name"] for o in spec["outputs"]), f"{spec['id']}: output names")
            for o in spec["outputs"]:
                exp, g = refs[suite.reference_key(name, o["name"])], got[o["name"]]
                self.assertEqual(g.shape, exp.shape, f"{spec['id']} {name} {o['name']}: shape")
                self.assertEqual(g.dtype, exp.dtype, f"{spec['id']} {name} {o['name']}: dtype")
                s = _diff_stats(g, exp)
                for k in stats:
                    stats[k] = max(stats[k], s[k])
                try:
                    np.testing.assert_allclose(g, exp, rtol=TOL["rtol"], atol=TOL["atol"],
                                               err_msg=f"{spec['id']} {name} output {o['name']!r}")
                except AssertionError as e:
                    mismatches.append(str(e))
                    mismatched.append(o["name"])
        res.update(stats)
        if mismatches:
            raise StageFailed("compare", "result differs from onnxruntime", detail="\n".join(mismatches),
                              outputs=mismatched)

    def test_fp32_matches_onnxruntime(self):
        gaps = DOC.get("known_gaps", {})
        for spec in selected_models():
            mid = spec["id"]
            with self.subTest(model=mid):
                res = self.results.setdefault(mid, {})
                gap = gaps.get(mid)
                try:
                    self._check_model(spec, res)
                except StageFailed as e:
                    res["note"] = f"{e.stage}: {e.title}"
                    if gap is None:
                        self.fail(f"{mid}: {e}")
                    self.assertEqual((e.stage, e.title), (gap["stage"], gap["error"]),
                                     f"{mid}: fails differently from its known_gaps entry:\n{e}")
                    if gap.get("where_contains"):
                        self.assertIn(gap["where_contains"], e.where, f"{mid}: known gap, other place:\n{e}")
                    if "mismatching_outputs" in gap:
                        self.assertEqual(e.outputs, sorted(gap["mismatching_outputs"]),
                                         f"{mid}: other outputs differ than its known_gaps entry says:\n{e}")
                    res["note"] = "known gap: " + res["note"]
                    continue
                if gap is not None:
                    res["note"] = "known gap FIXED"
                    self.fail(f"{mid} now passes: remove it from known_gaps in models.json "
                              f"(it was: {gap['stage']}: {gap['error']})")
                res["note"] = "match"


if __name__ == "__main__":
    unittest.main()
