"""Seed 000's command lines as written: `--backend onnx` for the source
framework, `--target-device` alone for the device, `--output` for the
artifact. They compile with one of our device names, give the bytes of the
explicit flags, and run; the ways they can be ambiguous are errors."""
import json
import os
import unittest
import zipfile

import numpy as np

from harness import SOURCE_DIR, CliTestCase

DIGITS = os.path.join(SOURCE_DIR, "examples", "digits")
MODEL = os.path.join(DIGITS, "cnn.onnx")
CALIB = os.path.join(DIGITS, "calib")
SHAPE = ("--input-shape", "input=1,1,8,8")


def packed_files(path):
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


class SeedCommandsTest(CliTestCase):
    def assert_same_artifact(self, got, want):
        """Every file byte for byte but the manifest, which differs only in
        the command line it records."""
        a, b = packed_files(got), packed_files(want)
        self.assertEqual(sorted(a), sorted(b))
        for name in a:
            if name == "manifest.json":
                ma, mb = json.loads(a[name]), json.loads(b[name])
                self.assertNotEqual(ma["command_line"], mb["command_line"])
                del ma["command_line"], mb["command_line"]
                self.assertEqual(ma, mb)
            else:
                self.assertEqual(a[name], b[name], name)

    def run_outputs(self, art):
        out = self.path(os.path.basename(art) + ".npz")
        inputs = self.path("in.npz")
        if not os.path.exists(inputs):
            x = np.load(os.path.join(DIGITS, "test_inputs.npz"))["input"][:1]
            np.savez(inputs, input=x)
        # run takes --output as well as --out.
        self.ok("run", "--artifact", art, "--input", inputs, "--output", out)
        with np.load(out) as z:
            return {k: z[k] for k in z.files}

    def test_full_compile_as_written(self):
        seed = self.path("model.mxq")
        r = self.ok("compile", "--model", MODEL, "--backend", "onnx", *SHAPE,
                    "--calib-data-path", CALIB, "--target-device", "npu8", "--output", seed)
        self.assertIn("Target   --backend onnx names the model's source framework "
                      "(as --frontend onnx); --target-device npu8 is backend npu_sim's",
                      r.stdout)
        with zipfile.ZipFile(seed) as z:
            manifest = json.loads(z.read("manifest.json"))
        self.assertEqual(manifest["backend"]["name"], "npu_sim")
        self.assertEqual(manifest["target_device"], "npu8")
        flags = self.path("flags.mxq")
        r = self.ok("compile", "--model", MODEL, "--frontend", "onnx", "--backend", "npu_sim", *SHAPE,
                    "--calib-data-path", CALIB, "--target-device", "npu8", "--out", flags)
        self.assertNotIn("Target", r.stdout)  # nothing to say of literal flags
        self.assert_same_artifact(seed, flags)
        got, want = self.run_outputs(seed), self.run_outputs(flags)
        self.assertEqual(list(got), list(want))
        for k in got:
            self.assertEqual(got[k].tobytes(), want[k].tobytes())

    def test_parse_then_quantize_as_written(self):
        mblt = self.path("model.mblt")
        r = self.ok("parse", "--model", MODEL, "--backend", "onnx", *SHAPE, "--output", mblt)
        self.assertIn("--backend onnx names the model's source framework", r.stdout)
        # The same file name elsewhere: the manifest records the source's.
        os.makedirs(self.path("flags"))
        plain = self.path("flags", "model.mblt")
        self.ok("parse", "--model", MODEL, "--frontend", "onnx", *SHAPE, "--output", plain)
        with open(mblt, "rb") as a, open(plain, "rb") as b:
            self.assertEqual(a.read(), b.read())
        seed = self.path("model.mxq")
        self.ok("quantize", "--mblt", mblt, "--calib-data-path", CALIB, "--target-device", "npu8",
                "--output", seed)
        flags = self.path("flags.mxq")
        self.ok("quantize", "--mblt", plain, "--calib-data-path", CALIB, "--backend", "npu_sim",
                "--target-device", "npu8", "--out", flags)
        # The IR files are the same bytes; so is the rest but the command line.
        self.assert_same_artifact(seed, flags)
        self.assertTrue(self.run_outputs(seed))

    def test_the_device_alone_picks_its_backend(self):
        art = self.path("host.mxq")
        r = self.ok("compile", "--model", MODEL, *SHAPE, "--target-device", "host", "--output", art)
        self.assertIn("--target-device host is backend cpu_ref's", r.stdout)
        with zipfile.ZipFile(art) as z:
            self.assertEqual(json.loads(z.read("manifest.json"))["backend"]["name"], "cpu_ref")

    def test_ambiguous_and_unknown_names_are_errors(self):
        out = self.path("x.mxq")
        base = ("compile", "--model", MODEL, *SHAPE, "--output", out)
        _, m = self.error(*base, "--target-device", "zcu104", title="target device is ambiguous",
                          where="device 'zcu104' is listed by backends fpga_board, zynq_ps")
        self.assertIn("--backend", m["fix"])
        self.error(*base, "--target-device", "nosuch", title="target device not found",
                   where="has a device 'nosuch'")
        self.error(*base, "--backend", "nosuch", title="backend not found")
        self.error(*base, "--backend", "onnx", "--frontend", "spec", title="invalid command line",
                   where="--backend onnx names the source framework, and --frontend spec another")
        self.error(*base, "--target-device", "devices/x.npu.yaml", title="invalid command line",
                   where="is a device file")
        self.error("compile", "--model", MODEL, *SHAPE, "--out", out, "--output", out,
                   title="invalid command line", where="--out and --output")
        self.assert_absent(out)
        mblt = self.path("x.mblt")
        self.error("parse", "--model", MODEL, "--backend", "npu_sim", "--output", mblt,
                   title="invalid command line", where="'npu_sim' is not a loaded frontend")
        self.assert_absent(mblt)
        self.error("run", "--artifact", out, "--input", out, "--out", out, "--output", out,
                   title="invalid command line", where="--out and --output")


if __name__ == "__main__":
    unittest.main()
