"""Sharded calibration (docs/scale-out.md): `eulernpu calibrate --shard K/N`
writes each shard's statistics, `quantize --calib-stats` merges them, and
the artifact is byte-identical to one machine's on the same samples, for
1, 2 and 3 shards and for the two passes of preset best. Statistics that
are not of this quantization, incomplete, repeated, cut short or changed
are refused with the three-line error, and nothing is written."""
import glob
import json
import os
import shutil
import zipfile

from harness import SOURCE_DIR, CliTestCase

DIGITS = os.path.join(SOURCE_DIR, "examples", "digits")
CNN = ["--model", os.path.join(DIGITS, "cnn.onnx"), "--input-shape", "input=1,1,8,8"]
MLP = ["--model", os.path.join(DIGITS, "mlp.onnx"), "--input-shape", "input=1,1,8,8"]
CALIB = ["--calib-data-path", os.path.join(DIGITS, "calib")]


class ScaleOutTest(CliTestCase):
    def calibrate(self, name, k, n, *extra, model=CNN):
        out = self.path(f"{name}.{k}.calib")
        r = self.ok("-q", "calibrate", *model, *CALIB, "--shard", f"{k}/{n}", "--out", out, *extra)
        self.assertIn(f"Calibrate OK: shard {k}/{n}", r.stdout)
        return out

    def shards(self, name, n, *extra, model=CNN):
        return [self.calibrate(name, k, n, *extra, model=model) for k in range(n)]

    def quantize(self, out, *extra, model=CNN):
        self.ok("-q", "quantize", *model, *CALIB, "--out", self.path(out), *extra)
        with open(self.path(out), "rb") as f:
            return f.read()

    def test_one_two_and_three_shards_give_the_single_machine_bytes(self):
        single = self.quantize("single.mxq")
        for n in (1, 2, 3):
            files = self.shards(f"s{n}", n)
            self.assertEqual(self.quantize(f"sharded{n}.mxq", "--calib-stats", *files), single,
                             f"{n} shards")
        # --accuracy-target quantizes again with nodes kept in float32: from
        # the same merged statistics.
        self.assertEqual(
            self.quantize("target_sharded.mxq", "--accuracy-target", "50", "--calib-stats",
                          *self.shards("t", 2)),
            self.quantize("target_single.mxq", "--accuracy-target", "50"))
        # The shards split the 64 samples i mod N.
        r = self.ok("-q", "calibrate", *CNN, *CALIB, "--shard", "1/3", "--out",
                    self.path("again.calib"))
        self.assertIn("shard 1/3 of pass 1 · 21 samples", r.stdout)
        # The manifest's command line leaves the statistics out: the
        # artifact is what the command without them makes.
        with zipfile.ZipFile(self.path("sharded3.mxq")) as z:
            manifest = json.loads(z.read("manifest.json"))
        self.assertNotIn("--calib-stats", manifest["command_line"])

    def test_best_merges_both_passes_and_any_file_order(self):
        single = self.quantize("single.mxq", "--preset", "best")
        first = self.shards("p1", 3, "--preset", "best")
        # Pass 2 on the merged pass 1, sharded differently.
        second = [self.calibrate("p2", k, 2, "--preset", "best", "--pass", "2", "--calib-stats",
                                 *first) for k in range(2)]
        files = list(reversed(second + first))
        self.assertEqual(self.quantize("sharded.mxq", "--preset", "best", "--calib-stats", *files),
                         single)
        # --calib-stats=FILE spelling, and --calib-samples agreeing on both sides.
        single8 = self.quantize("single8.mxq", "--calib-samples", "8")
        parts = self.shards("c8", 2, "--calib-samples", "8")
        self.assertEqual(
            self.quantize("sharded8.mxq", "--calib-samples", "8",
                          *[f"--calib-stats={p}" for p in parts]), single8)

    def test_incomplete_or_repeated_shards_are_refused(self):
        files = self.shards("s", 3)
        out = self.path("out.mxq")
        self.error("quantize", *CNN, *CALIB, "--out", out, "--calib-stats", files[0], files[2],
                   title="calibration statistics are incomplete", where="lacks shard 1")
        self.assert_absent(out)
        self.error("quantize", *CNN, *CALIB, "--out", out, "--calib-stats", *files, files[1],
                   title="calibration statistics do not fit", where="are both shard 1/3")
        two = self.shards("two", 2)
        self.error("quantize", *CNN, *CALIB, "--out", out, "--calib-stats", files[0], two[1],
                   title="calibration statistics do not fit", where="of 3 shards")
        # best needs pass 2 too.
        best = self.shards("b", 1, "--preset", "best")
        self.error("quantize", *CNN, *CALIB, "--preset", "best", "--out", out, "--calib-stats",
                   *best, title="calibration statistics are incomplete",
                   where="no file of pass 2")
        self.assert_absent(out)

    def test_statistics_of_another_quantization_are_refused(self):
        files = self.shards("s", 1)
        out = self.path("out.mxq")
        self.error("quantize", *MLP, *CALIB, "--out", out, "--calib-stats", *files,
                   title="calibration statistics do not fit", where="of another model")
        self.error("quantize", *CNN, *CALIB, "--preset", "mse", "--out", out, "--calib-stats",
                   *files, title="calibration statistics do not fit", where="of another config")
        self.error("quantize", *CNN, *CALIB, "--calib-samples", "10", "--out", out,
                   "--calib-stats", *files, title="calibration statistics do not fit",
                   where="of 64 samples, not 10")
        other_set = self.path("calib")
        shutil.copytree(os.path.join(DIGITS, "calib"), other_set)
        shutil.copy(os.path.join(other_set, "sample_001.npy"),
                    os.path.join(other_set, "sample_000.npy"))
        self.error("quantize", *CNN, "--calib-data-path", other_set, "--out", out,
                   "--calib-stats", *files, title="calibration statistics do not fit",
                   where="of another calibration set")
        # Pass 2 gathered on other pass 1 statistics than the ones given.
        p1 = self.shards("p1", 1, "--preset", "best")
        p1_8 = self.shards("p8", 1, "--preset", "best", "--calib-samples", "8")
        p2 = self.calibrate("p2", 0, 1, "--preset", "best", "--pass", "2", "--calib-stats", *p1)
        self.error("calibrate", *CNN, *CALIB, "--preset", "best", "--pass", "2", "--out",
                   self.path("x.calib"), "--calib-stats", *p1_8,
                   title="calibration statistics do not fit", where="of 8 samples, not 64")
        self.assert_absent(self.path("x.calib"))
        self.ok("-q", "quantize", *CNN, *CALIB, "--preset", "best", "--out", out,
                "--calib-stats", *p1, p2)
        os.remove(out)
        # A pass 2 file given as pass 1 statistics to calibrate --pass 2.
        self.error("calibrate", *CNN, *CALIB, "--preset", "best", "--pass", "2", "--out",
                   self.path("x.calib"), "--calib-stats", *p1, p2,
                   title="calibration statistics do not fit", where="not of pass 1 to 1")
        self.assert_absent(self.path("x.calib"))

    def test_damaged_files_are_refused(self):
        [part] = self.shards("s", 1)
        with open(part, "rb") as f:
            data = f.read()
        out = self.path("out.mxq")
        cut = self.path("cut.calib")
        with open(cut, "wb") as f:
            f.write(data[: len(data) // 2])
        self.error("quantize", *CNN, *CALIB, "--out", out, "--calib-stats", cut,
                   title="calibration statistics are invalid", where="cut short or changed")
        changed = self.path("changed.calib")
        flipped = bytearray(data)
        flipped[len(data) // 2] ^= 1
        with open(changed, "wb") as f:
            f.write(bytes(flipped))
        self.error("quantize", *CNN, *CALIB, "--out", out, "--calib-stats", changed,
                   title="calibration statistics are invalid", where="cut short or changed")
        self.error("quantize", *CNN, *CALIB, "--out", out, "--calib-stats",
                   os.path.join(DIGITS, "cnn.onnx"), title="calibration statistics are invalid",
                   where="not a calibration statistics file")
        self.error("quantize", *CNN, *CALIB, "--out", out, "--calib-stats", self.path("none"),
                   title="calibration statistics not found")
        self.error("quantize", *CNN, *CALIB, "--out", out, "--calib-stats", part,
                   env={"EULERNPU_MAX_CALIB_STATS_BYTES": "1K"},
                   title="calibration statistics are invalid",
                   where="EULERNPU_MAX_CALIB_STATS_BYTES")
        self.assert_absent(out)
        # calibrate never replaces a file that is not statistics.
        model = self.path("model.onnx")
        shutil.copy(os.path.join(DIGITS, "cnn.onnx"), model)
        self.error("calibrate", *CNN, *CALIB, "--out", model, title="output path is in the way")

    def test_bad_command_lines(self):
        out = self.path("p.calib")
        for shard in ("3/3", "1", "a/2", "-1/2", "0/0"):
            self.error("calibrate", *CNN, *CALIB, f"--shard={shard}", "--out", out,
                       title="invalid command line", where="--shard")
        self.error("calibrate", *CNN, *CALIB, "--pass", "2", "--out", out,
                   title="invalid command line", where="without --calib-stats")
        p = self.shards("s", 1)
        self.error("calibrate", *CNN, *CALIB, "--pass", "2", "--out", out, "--calib-stats", *p,
                   title="invalid command line", where="calibrates in 1 pass")
        self.error("calibrate", *CNN, *CALIB, "--calib-stats", *p, "--out", out,
                   title="invalid command line", where="--calib-stats with --pass 1")
        self.error("quantize", *CNN, *CALIB, "--out", self.path("o.mxq"), "--calib-stats",
                   title="invalid command line", where="needs at least one file")
        self.error("compile", *CNN, "--out", self.path("o.mxq"), "--calib-stats", *p,
                   title="invalid command line", where="without --calib-data-path")
        for setting, named in (("bias_correction: true", "bias_correction"),
                               ("rounding: adaptive", "rounding: adaptive")):
            cfg = self.path("c.yaml")
            with open(cfg, "w") as f:
                f.write(f"quantization:\n  {setting}\n")
            self.error("calibrate", *CNN, *CALIB, "--config", cfg, "--out", out,
                       title="sharded calibration is not supported", where=named)
        self.assert_absent(out)


if __name__ == "__main__":
    import unittest
    unittest.main()
