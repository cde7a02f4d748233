"""The digits example is reproducible: running its generator again writes
byte-identical models, data and reference logits to the committed ones
(examples/digits/README.md, "Regenerating")."""
import filecmp
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIGITS = os.path.join(SOURCE_DIR, "examples", "digits")
HAND_WRITTEN = {"README.md", "make_models.py"}


def files_below(root):
    out = set()
    for dirpath, _, names in os.walk(root):
        for n in names:
            out.add(os.path.relpath(os.path.join(dirpath, n), root))
    return out


class DigitsGeneratorTest(unittest.TestCase):
    def test_regenerates_the_committed_files(self):
        with tempfile.TemporaryDirectory() as out:
            r = subprocess.run([sys.executable, os.path.join(DIGITS, "make_models.py"), out],
                               capture_output=True, text=True, timeout=600)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            # The figures the README quotes come from this output.
            self.assertIn("mlp: fp32 test accuracy 0.9750 (390/400)", r.stdout)
            self.assertIn("cnn: fp32 test accuracy 0.9725 (389/400)", r.stdout)
            self.assertIn("(worst fc1)", r.stdout)
            generated = files_below(out)
            committed = files_below(DIGITS) - HAND_WRITTEN
            self.assertEqual(generated, committed)
            for f in sorted(generated):
                self.assertTrue(filecmp.cmp(os.path.join(out, f), os.path.join(DIGITS, f),
                                            shallow=False), f"{f} differs from the committed file")


if __name__ == "__main__":
    unittest.main()
