"""Sharded calibration as Slurm job arrays (docs/scale-out.md), on a
one-node cluster started for the test (slurm_cluster.py): the example
scripts in examples/slurm submit the shards as an array and the merge as a
job that depends on it; the artifact is byte-identical to the single
machine's, and a sweep's jobs run as an array. A shard lost is named by index, and rerunning only that array
task completes the merge. Skipped, with the reason, where Slurm cannot
start; nothing else depends on it."""
import hashlib
import json
import os
import unittest

from harness import EULERNPU, SOURCE_DIR, CliTestCase, run
from slurm_cluster import SlurmCluster, SlurmUnavailable

DIGITS = os.path.join(SOURCE_DIR, "examples", "digits")
MODEL = ["--model", os.path.join(DIGITS, "cnn.onnx"), "--input-shape", "input=1,1,8,8",
         "--calib-data-path", os.path.join(DIGITS, "calib")]
SCRIPTS = os.path.join(SOURCE_DIR, "examples", "slurm")
CALIBRATE = os.path.join(SCRIPTS, "calibrate.sbatch")
QUANTIZE = os.path.join(SCRIPTS, "quantize.sbatch")

cluster = None


def setUpModule():
    global cluster
    try:
        cluster = SlurmCluster().start()
    except SlurmUnavailable as e:
        raise unittest.SkipTest(f"Slurm cannot start here: {e}")
    # Jobs find the eulernpu under test first on PATH (sbatch exports the
    # submitting environment).
    cluster.env["PATH"] = os.path.dirname(EULERNPU) + os.pathsep + cluster.env["PATH"]
    cluster.env.pop("EULERNPU_PLUGIN_PATH", None)


def tearDownModule():
    if cluster:
        cluster.stop()


class SlurmTest(CliTestCase):
    def single(self, *extra):
        out = self.path("single.mxq")
        r = run("-q", "quantize", *MODEL, *extra, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, "rb") as f:
            return f.read()

    def log(self, name):
        return ["--output", self.path(name + "-%A_%a.log")]

    def finished(self, job):
        states = cluster.wait(job)
        self.assertTrue(states and all(s == "COMPLETED" for s in states.values()),
                        f"job {job}: {states}\n" + self.logs())

    def logs(self):
        text = []
        for name in sorted(os.listdir(self.tmp)):
            if name.endswith(".log"):
                with open(self.path(name)) as f:
                    text.append(f"--- {name}\n{f.read()}")
        return "\n".join(text)

    def read(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()

    def test_shards_as_an_array_then_the_merge(self):
        parts = self.path("parts")
        os.mkdir(parts)
        shards = cluster.sbatch("--array=0-2", *self.log("calibrate"), CALIBRATE, "3", parts,
                                "--", *MODEL)
        merge = cluster.sbatch(f"--dependency=afterany:{shards}", *self.log("quantize"), QUANTIZE,
                               parts, "--", *MODEL, "--out", self.path("sharded.mxq"))
        self.finished(shards)
        self.finished(merge)
        self.assertEqual(sorted(os.listdir(parts)), [f"part.{k}.calib" for k in range(3)])
        self.assertEqual(self.read("sharded.mxq"), self.single())

    def test_a_failed_shard_is_named_and_rerun_alone(self):
        parts = self.path("parts")
        os.mkdir(parts)
        # Task 1 cannot write its file (a directory is in the way) and fails.
        os.mkdir(os.path.join(parts, "part.1.calib"))
        shards = cluster.sbatch("--array=0-2", *self.log("calibrate"), CALIBRATE, "3", parts,
                                "--", *MODEL)
        merge = cluster.sbatch(f"--dependency=afterany:{shards}", *self.log("quantize"), QUANTIZE,
                               parts, "--", *MODEL, "--out", self.path("sharded.mxq"))
        self.assertEqual(cluster.wait(shards), {"0": "COMPLETED", "1": "FAILED", "2": "COMPLETED"})
        self.assertEqual(cluster.wait(merge), {"": "FAILED"})
        # The merge names the shard: here its path is the directory in the way
        # (a shard that died before writing is "lacks shard 1", cli.scale_out).
        self.assertIn("error: calibration statistics not found\n"
                      f"  where: '{parts}/part.1.calib': Is a directory", self.logs())
        self.assertFalse(os.path.exists(self.path("sharded.mxq")))
        # Only that task again, then the merge.
        os.rmdir(os.path.join(parts, "part.1.calib"))
        rerun = cluster.sbatch("--array=1", *self.log("rerun"), CALIBRATE, "3", parts, "--",
                               *MODEL)
        merge = cluster.sbatch(f"--dependency=afterany:{rerun}", *self.log("quantize2"),
                               QUANTIZE, parts, "--", *MODEL, "--out", self.path("sharded.mxq"))
        self.finished(rerun)
        self.finished(merge)
        self.assertEqual(self.read("sharded.mxq"), self.single())

    def test_best_two_passes_as_dependent_arrays(self):
        best = ["--preset", "best"]
        p1, p2 = self.path("p1"), self.path("p2")
        os.mkdir(p1)
        os.mkdir(p2)
        first = cluster.sbatch("--array=0-1", *self.log("pass1"), CALIBRATE, "2", p1, "--",
                               *MODEL, *best)
        second = cluster.sbatch(f"--dependency=afterok:{first}", "--kill-on-invalid-dep=yes",
                                "--array=0-2",
                                *self.log("pass2"), CALIBRATE, "3", p2, p1, "--", *MODEL, *best,
                                "--pass", "2")
        merge = cluster.sbatch(f"--dependency=afterany:{second}", *self.log("quantize"), QUANTIZE,
                               p1, p2, "--", *MODEL, *best, "--out", self.path("sharded.mxq"))
        for job in (first, second, merge):
            self.finished(job)
        self.assertEqual(self.read("sharded.mxq"), self.single(*best))

    def test_a_sweep_as_an_array(self):
        jobs = self.path("jobs.json")
        r = run("sweep", "--jobs", jobs, "--out-dir", self.path("out"), *MODEL, "--backend",
                "npu_sim", "--target-device", "npu8", "--inference-scheme", "single,global4",
                "--preset", "default,fast")
        self.assertIn("Sweep OK: 4 jobs", r.stdout, r.stderr)
        array = cluster.sbatch("--array=0-3", *self.log("sweep"),
                               os.path.join(SCRIPTS, "sweep.sbatch"), jobs)
        self.finished(array)
        r = run("sweep", "collect", "--jobs", jobs, "--format", "json")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        rows = json.loads(r.stdout)["jobs"]
        self.assertEqual([row["status"] for row in rows], ["ok"] * 4)
        # The array's artifacts are the single machine's compiles.
        direct = self.path("direct.mxq")
        r = run("-q", "compile", *MODEL, "--backend", "npu_sim", "--target-device", "npu8",
                "--inference-scheme", "global4", "--preset", "fast", "--out", direct)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(direct, "rb") as f:
            self.assertEqual(rows[3]["artifact_sha256"], hashlib.sha256(f.read()).hexdigest())


if __name__ == "__main__":
    unittest.main()
