"""Sweeps (docs/scale-out.md): `eulernpu sweep` writes one compile job per
backend x target device x core mode x preset (skipping the combinations
the backend refuses, with the reason), `sweep run --index I` runs one and
writes its result (artifact sha256, accuracy on the eval set, the backend's
report, or the error), and `sweep collect` tabulates them as text, JSON or
CSV, listing failed and missing jobs and exiting 1 for them. Each job's
artifact is the bytes a direct compile with the same options makes."""
import csv
import hashlib
import io
import json
import os

import numpy as np

from harness import SOURCE_DIR, CliTestCase, run

DIGITS = os.path.join(SOURCE_DIR, "examples", "digits")
MODEL = ["--model", os.path.join(DIGITS, "cnn.onnx"), "--input-shape", "input=400,1,8,8"]
CALIB = ["--calib-data-path", os.path.join(DIGITS, "calib")]
EVAL = ["--eval-input", os.path.join(DIGITS, "test_inputs.npz"),
        "--eval-golden", os.path.join(DIGITS, "fp32_logits_cnn.npz")]


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class SweepTest(CliTestCase):
    def sweep(self, *extra):
        jobs = self.path("jobs.json")
        r = self.ok("sweep", "--jobs", jobs, "--out-dir", self.path("out"), *MODEL, *CALIB,
                    "--backend", "npu_sim", *extra)
        with open(jobs) as f:
            return jobs, json.load(f), r.stdout

    def test_jobs_run_and_collect(self):
        parts = [self.path(f"p.{k}.calib") for k in range(2)]
        for k, p in enumerate(parts):
            self.ok("-q", "calibrate", *MODEL, *CALIB, "--shard", f"{k}/2", "--out", p)
        jobs, plan, out = self.sweep("--target-device", "npu8,edge16", "--inference-scheme",
                                     "single,global4", "--preset", "default,fast", *EVAL,
                                     "--calib-stats", *parts)
        self.assertIn("Sweep OK: 6 jobs · 1 combination skipped", out)
        self.assertIn("skipped edge16/global4: core mode not supported by target device", out)
        combos = [(j["target_device"], j["inference_scheme"], j["preset"]) for j in plan["jobs"]]
        self.assertEqual(combos, [("npu8", "single", "default"), ("npu8", "single", "fast"),
                                  ("npu8", "global4", "default"), ("npu8", "global4", "fast"),
                                  ("edge16", "single", "default"), ("edge16", "single", "fast")])
        # The default preset's jobs merge the statistics; fast's calibrate themselves.
        for j in plan["jobs"]:
            self.assertEqual("--calib-stats" in j["command"], j["preset"] == "default", j)
        # Jobs not run yet: collect lists them and fails.
        r = run("sweep", "collect", "--jobs", jobs)
        self.assertEqual(r.returncode, 1)
        self.assertIn("0 of 6 jobs OK", r.stdout)
        self.assertIn("job 0 has not run", r.stdout)
        for i in range(6):
            r = self.ok("sweep", "run", "--jobs", jobs, "--index", str(i))
            self.assertIn(f"Sweep job {i} OK", r.stdout)
        r = self.ok("sweep", "collect", "--jobs", jobs, "--format", "json")
        rows = json.loads(r.stdout)["jobs"]
        self.assertEqual([row["status"] for row in rows], ["ok"] * 6)
        self.assertEqual(json.loads(r.stdout)["skipped"][0]["target_device"], "edge16")
        for row, job in zip(rows, plan["jobs"]):
            self.assertEqual(row["artifact_sha256"], sha256(job["artifact"]))
            self.assertGreater(row["eval"]["sqnr_db"], 30)
            self.assertGreater(row["eval"]["top1_agreement"], 0.95)
            self.assertGreater(row["backend_report"]["cycles"], 0)
        # A job's artifact is the bytes the same compile makes directly.
        direct = self.path("direct.mxq")
        self.ok("-q", "compile", *MODEL, *CALIB, "--backend", "npu_sim", "--target-device",
                "npu8", "--inference-scheme", "global4", "--preset", "fast", "--out", direct)
        self.assertEqual(rows[3]["artifact_sha256"], sha256(direct))
        # int8 on npu_sim is cpu_ref's bytes: the presets' accuracy is the same on every device.
        self.assertEqual(rows[0]["eval"], rows[4]["eval"])
        # Text and CSV.
        r = self.ok("sweep", "collect", "--jobs", jobs)
        self.assertRegex(r.stdout.splitlines()[0], r"^\s+job\s+backend\s+device\s+scheme\s+preset")
        self.assertIn("6 of 6 jobs OK", r.stdout)
        r = self.ok("sweep", "collect", "--jobs", jobs, "--format", "csv")
        table = list(csv.reader(io.StringIO(r.stdout)))
        self.assertEqual(len(table), 7)
        self.assertEqual(table[4][6], sha256(plan["jobs"][3]["artifact"]))

    def test_a_failing_job_is_listed_with_its_error(self):
        golden = self.path("golden.npz")
        np.savez(golden, other=np.zeros((400, 10), np.float32))
        jobs, plan, _ = self.sweep("--target-device", "npu8", "--eval-input",
                                   os.path.join(DIGITS, "test_inputs.npz"), "--eval-golden", golden)
        self.assertEqual(len(plan["jobs"]), 1)
        self.error("sweep", "run", "--jobs", jobs, "--index", "0",
                   title="sweep eval set does not fit",
                   where="the artifact computes no output 'other'")
        r = run("sweep", "collect", "--jobs", jobs)
        self.assertEqual(r.returncode, 1)
        self.assertIn("job 0 failed: sweep eval set does not fit", r.stdout)
        self.assertIn("0 of 1 jobs OK", r.stdout)
        # An eval golden without arrays.
        np.savez(golden)
        self.error("sweep", "run", "--jobs", jobs, "--index", "0",
                   title="sweep eval set does not fit", where="holds no array")
        # A new sweep into the same directory does not take the old results for its own.
        jobs2 = self.path("jobs2.json")
        self.ok("sweep", "--jobs", jobs2, "--out-dir", self.path("out"), *MODEL, *CALIB,
                "--backend", "npu_sim", "--target-device", "npu8")
        r = run("sweep", "collect", "--jobs", jobs2)
        self.assertEqual(r.returncode, 1)
        self.assertIn("job 0 has not run", r.stdout)

    def test_bad_sweeps_are_refused(self):
        jobs = self.path("jobs.json")
        base = ["sweep", "--jobs", jobs, "--out-dir", self.path("out"), *MODEL]
        self.error(*base, "--backend", "npu_sim", "--target-device", "edge16",
                   "--inference-scheme", "global4", *CALIB, title="no sweep jobs")
        self.error(*base, "--preset", "fast", title="invalid command line",
                   where="without --calib-data-path")
        self.error(*base, *CALIB, "--eval-input", "x.npz", title="invalid command line",
                   where="--eval-input and --eval-golden")
        self.error(*base, *CALIB, "--no-such-option", title="invalid command line")
        self.error(*base, *CALIB, "--config", os.path.join(SOURCE_DIR, "examples", "configs",
                                                            "mlp_fc2_float.yaml"),
                   "--preset", "default,fast", title="invalid command line",
                   where="--config with --preset")
        best = self.path("best.calib")
        self.ok("-q", "calibrate", *MODEL, *CALIB, "--preset", "best", "--out", best)
        self.error(*base, *CALIB, "--preset", "default,fast", "--calib-stats", best,
                   title="calibration statistics do not fit", where="none of the jobs uses")
        self.error("sweep", "--jobs", jobs, "--out-dir=", *MODEL, title="invalid command line",
                   where="--out-dir ''")
        self.assert_absent(jobs)
        self.ok(*base, *CALIB, "--backend", "cpu_ref")
        self.error("sweep", "run", "--jobs", jobs, "--index", "1", title="invalid command line",
                   where="job 1 of 1")
        self.error("sweep", "run", "--jobs", jobs, title="invalid command line",
                   where="--index")
        self.error("sweep", "run", "--jobs", jobs, env={"SLURM_ARRAY_TASK_ID": "x"},
                   title="invalid command line", where="SLURM_ARRAY_TASK_ID is 'x'")
        with open(jobs) as f:
            plan = json.load(f)
        plan["cwd"] = self.path("gone")
        with open(jobs, "w") as f:
            json.dump(plan, f)
        self.error("sweep", "run", "--jobs", jobs, "--index", "0",
                   title="sweep jobs file is invalid", where="is not here")
        self.error("sweep", "--jobs", self.path("j2.json"), "--out-dir", jobs, *MODEL, *CALIB,
                   title="cannot write output file", where="--out-dir")
        with open(jobs, "w") as f:
            f.write("{\"eulernpu_sweep\": 2}")
        self.error("sweep", "run", "--jobs", jobs, "--index", "0",
                   title="sweep jobs file is invalid")
        self.error("sweep", "collect", "--jobs", self.path("none.json"),
                   title="sweep jobs file not found")
        self.error("sweep", "collect", "--jobs", jobs, "--format", "xml",
                   title="invalid command line")
