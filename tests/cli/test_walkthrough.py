"""The tiny_mlp walk-through and the determinism it promises."""
import filecmp
import os
import subprocess
import unittest

import numpy as np

from harness import EULERNPU, TINY_MLP, CliTestCase, compile_tiny_mlp, run

def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


EXPECTED = (
    "Validation OK: 5 operators · 2 components · backend=cpu_ref\n"
    "Compile  OK: 5 ops lowered · plan written\n"
    "Run      OK: 1 output tensor (1, 4)\n"
    "Compare  OK: 1 tensor · max abs diff 0.0 < tol 1e-05\n")


class WalkthroughTest(CliTestCase):
    def test_prints_exactly_the_four_lines(self):
        r = subprocess.run([os.path.join(TINY_MLP, "walkthrough.sh"), EULERNPU, self.tmp],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, EXPECTED)
        self.assertEqual(r.stderr, "")

    def test_result_matches_numpy_golden_bit_for_bit(self):
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        self.ok("run", "--artifact", self.path("a"), "--input",
                os.path.join(TINY_MLP, "input.npz"), "--out", self.path("r.npz"))
        got = np.load(self.path("r.npz"))
        golden = np.load(os.path.join(TINY_MLP, "golden.npz"))
        self.assertEqual(list(got.keys()), ["probs"])
        self.assertEqual(got["probs"].dtype, np.float32)
        self.assertEqual(got["probs"].tobytes(), golden["probs"].tobytes())

    def test_artifact_has_the_documented_layout(self):
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        files = sorted(os.path.relpath(os.path.join(d, f), self.path("a"))
                       for d, _, fs in os.walk(self.path("a")) for f in fs)
        self.assertEqual(files, ["graph.json", "manifest.json", "plan.json",
                                 "weights/cpu_ref.npz"])
        weights = np.load(self.path("a", "weights", "cpu_ref.npz"))
        original = np.load(os.path.join(TINY_MLP, "weights.npz"))
        self.assertEqual(sorted(weights.keys()), sorted(original.keys()))
        for k in original.keys():
            np.testing.assert_array_equal(weights[k], original[k])


class DeterminismTest(CliTestCase):
    def test_compiling_twice_gives_identical_files(self):
        for name in ("a", "b"):
            self.assertEqual(compile_tiny_mlp(self.path(name)).returncode, 0)
        cmp = filecmp.dircmp(self.path("a"), self.path("b"))
        self.assertEqual(cmp.left_only + cmp.right_only, [])
        for d, _, fs in os.walk(self.path("a")):
            for f in fs:
                a = os.path.join(d, f)
                b = os.path.join(self.path("b"), os.path.relpath(a, self.path("a")))
                self.assertTrue(filecmp.cmp(a, b, shallow=False), f"{f} differs")

    def test_recompiling_in_place_replaces_the_artifact(self):
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        before = read_bytes(self.path("a", "manifest.json"))
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        self.assertEqual(read_bytes(self.path("a", "manifest.json")), before)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["a"])

    def test_artifact_does_not_depend_on_where_files_live(self):
        # The same inputs reached through another directory and relative
        # paths: no absolute path may leak into the artifact.
        os.symlink(TINY_MLP, self.path("ex"))
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        r = run("compile", "--spec", "ex/spec.yaml", "--weights", "ex/weights.npz",
                "--out", "b", cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        for f in ("graph.json", "plan.json", "weights/cpu_ref.npz"):
            self.assertTrue(filecmp.cmp(self.path("a", f), self.path("b", f), shallow=False))
        manifest = read_bytes(self.path("a", "manifest.json")).decode()
        self.assertNotIn(self.tmp, manifest)
        self.assertNotIn(TINY_MLP, manifest)

    def test_running_twice_gives_identical_results(self):
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        for name in ("r1.npz", "r2.npz"):
            self.ok("run", "--artifact", self.path("a"), "--input",
                    os.path.join(TINY_MLP, "input.npz"), "--out", self.path(name))
        self.assertTrue(filecmp.cmp(self.path("r1.npz"), self.path("r2.npz"), shallow=False))


if __name__ == "__main__":
    unittest.main()
