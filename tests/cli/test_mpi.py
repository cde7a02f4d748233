"""Sharded calibration as MPI ranks (docs/scale-out.md): `mpirun -n R
eulernpu calibrate --mpi` makes rank r shard r/R and rank 0 merges every
rank's statistics into one file, byte for byte the file one process writes
for all the samples (--shard 0/1), so the artifact is the single machine's
too. Debian's Open MPI on localhost; skipped, with the reason, where it or
libeulernpu_mpi.so is missing."""
import os
import shutil
import subprocess
import unittest

from harness import BUILD_DIR, EULERNPU, SOURCE_DIR, CliTestCase, check_sanitizer_report

DIGITS = os.path.join(SOURCE_DIR, "examples", "digits")
MODEL = ["--model", os.path.join(DIGITS, "cnn.onnx"), "--input-shape", "input=1,1,8,8",
         "--calib-data-path", os.path.join(DIGITS, "calib")]
LIBRARY = os.path.join(os.path.dirname(os.path.dirname(EULERNPU)), "lib", "eulernpu",
                       "libeulernpu_mpi.so")


def setUpModule():
    if shutil.which("mpirun") is None:
        raise unittest.SkipTest("mpirun is not installed (scripts/setup.sh installs openmpi-bin)")
    if not os.path.exists(LIBRARY):
        raise unittest.SkipTest(f"{LIBRARY} was not built (MPI was not found at configure time)")


def mpirun(ranks, *args, second=None):
    """`ranks` ranks of eulernpu -q ARGS; with `second`, one more rank runs
    eulernpu -q SECOND instead (mpirun's MPMD form)."""
    env = dict(os.environ)
    env.pop("EULERNPU_PLUGIN_PATH", None)
    # Open MPI refuses root unless told; the tests run as root in CI.
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl="self,vader", OMPI_MCA_btl_vader_single_copy_mechanism="none",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_hwloc_base_binding_policy="none")
    cmd = ["mpirun", "-n", str(ranks), EULERNPU, "-q", *args]
    if second is not None:
        cmd += [":", "-n", "1", EULERNPU, "-q", *second]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    check_sanitizer_report(r.stderr)
    return r


class MpiTest(CliTestCase):
    def read(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()

    def test_ranks_merge_into_the_single_process_file(self):
        self.ok("-q", "calibrate", *MODEL, "--out", self.path("one.calib"))
        for ranks in (2, 3):
            r = mpirun(ranks, "calibrate", *MODEL, "--mpi", "--out", self.path(f"mpi{ranks}.calib"))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn(f"Calibrate OK: {ranks} ranks merged, pass 1 · 64 samples", r.stdout)
            self.assertEqual(r.stdout.count("Calibrate OK"), 1, r.stdout)  # rank 0 alone
            self.assertEqual(self.read(f"mpi{ranks}.calib"), self.read("one.calib"))
        self.ok("-q", "quantize", *MODEL, "--out", self.path("single.mxq"))
        self.ok("-q", "quantize", *MODEL, "--calib-stats", self.path("mpi2.calib"), "--out",
                self.path("mpi.mxq"))
        self.assertEqual(self.read("mpi.mxq"), self.read("single.mxq"))

    def test_best_two_passes(self):
        best = ["--preset", "best"]
        r = mpirun(2, "calibrate", *MODEL, *best, "--mpi", "--out", self.path("p1.calib"))
        self.assertEqual(r.returncode, 0, r.stderr)
        r = mpirun(3, "calibrate", *MODEL, *best, "--mpi", "--pass", "2", "--calib-stats",
                   self.path("p1.calib"), "--out", self.path("p2.calib"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.ok("-q", "quantize", *MODEL, *best, "--out", self.path("single.mxq"))
        self.ok("-q", "quantize", *MODEL, *best, "--calib-stats", self.path("p1.calib"),
                self.path("p2.calib"), "--out", self.path("mpi.mxq"))
        self.assertEqual(self.read("mpi.mxq"), self.read("single.mxq"))

    def test_a_failing_rank_ends_the_job(self):
        # Rank 1 fails (its calibration set is missing) while rank 0 waits
        # for its statistics: the job must end, not hang, and write nothing.
        out = self.path("x.calib")
        bad = [a if a != os.path.join(DIGITS, "calib") else self.path("missing") for a in MODEL]
        r = mpirun(1, "calibrate", *MODEL, "--mpi", "--out", out,
                   second=["calibrate", *bad, "--mpi", "--out", out])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("rank 1: error: calibration data not found", r.stderr)
        self.assertFalse(os.path.exists(out))
        self.error("calibrate", *MODEL, "--mpi", "--shard", "0/2", "--out", self.path("x.calib"),
                   title="invalid command line", where="--mpi with --shard")


if __name__ == "__main__":
    unittest.main()
