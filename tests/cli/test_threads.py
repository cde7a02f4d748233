"""--threads: results are byte-identical run to run for a thread count, and
the same for every thread count, on whole networks whose convolutions and
GEMMs are large enough to be split."""
import hashlib
import os
import shutil
import subprocess
import tempfile
import unittest

from harness import SOURCE_DIR, CliTestCase

MAKE_MODELS = os.path.join(SOURCE_DIR, "tests", "models", "make_models.py")
SHAPES = {"resnet": "x=2,3,32,32", "mobilenet": "x=2,3,32,32", "transformer": "x=2,8,32"}


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class ThreadsTest(CliTestCase):
    @classmethod
    def setUpClass(cls):
        cls.models = tempfile.mkdtemp(prefix="eulernpu-threads-")
        cls.addClassCleanup(shutil.rmtree, cls.models, ignore_errors=True)
        subprocess.run(["/usr/bin/python3", MAKE_MODELS, cls.models, "--batch", "2"], check=True,
                       capture_output=True)

    def test_results_do_not_depend_on_thread_count(self):
        for name, shape in SHAPES.items():
            with self.subTest(model=name):
                art = self.path(name)
                self.ok("compile", "--model", os.path.join(self.models, f"{name}_opset13.onnx"),
                        "--input-shape", shape, "--out", art)
                digests = {}
                for threads in (1, 2, 3, 4):
                    for run_index in range(2):
                        out = self.path(f"{name}.{threads}.{run_index}.npz")
                        self.ok("run", "--artifact", art, "--input",
                                os.path.join(self.models, f"{name}_b2.input.npz"), "--out", out,
                                "--threads", str(threads))
                        digests[(threads, run_index)] = digest(out)
                for threads in (1, 2, 3, 4):
                    self.assertEqual(digests[(threads, 0)], digests[(threads, 1)],
                                     f"{name}: two runs with --threads {threads} differ")
                self.assertEqual(len(set(digests.values())), 1,
                                 f"{name}: results differ between thread counts: {digests}")


if __name__ == "__main__":
    unittest.main()
