"""The progress display (docs/cli.md#progress): plain lines on stderr when it
is not a terminal, the redrawn bar with the time left when it is one, and
nothing with --quiet, which changes no byte of what a command writes.

A step that is not counted shows only if it takes a second or more; on a
loaded machine one of this small model's might, so those lines are left
out before comparing."""
import json
import os
import pty
import re
import subprocess
import zipfile

import numpy as np

from harness import EULERNPU, SOURCE_DIR, CliTestCase, run

DIGITS = os.path.join(SOURCE_DIR, "examples", "digits")
MLP = ["--model", os.path.join(DIGITS, "mlp.onnx"), "--input-shape", "input=1,1,8,8"]
CALIB = ["--calib-data-path", os.path.join(DIGITS, "calib")]
SECONDS = r"[0-9.:]+( s)?"


def on_terminal(*args):
    """Runs eulernpu with stderr on a pseudo-terminal; returns (status,
    stdout, what the terminal received with its CR LF line ends as LF)."""
    master, slave = pty.openpty()
    env = dict(os.environ)
    env.pop("EULERNPU_PLUGIN_PATH", None)
    p = subprocess.Popen([EULERNPU, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=slave, env=env)
    os.close(slave)
    received = b""
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        received += data
    os.close(master)
    out = p.stdout.read().decode()
    p.stdout.close()
    status = p.wait(timeout=300)
    return status, out, received.decode().replace("\r\n", "\n")


UNCOUNTED = re.compile(rf"^(Compile|Quantize|Benchmark) \[[0-9]/[0-9]\] "
                       rf"(load|optimize|accuracy-target|lower|write|first run): {SECONDS}$")


class ProgressTest(CliTestCase):
    def assert_lines(self, stderr, patterns):
        lines = [l for l in stderr.rstrip("\n").split("\n") if l and not UNCOUNTED.match(l)]
        self.assertEqual(len(lines), len(patterns), stderr)
        for line, pattern in zip(lines, patterns):
            self.assertRegex(line, "^" + pattern + "$")

    def test_an_int8_compile_logs_each_counted_step_beginning_and_ending(self):
        r = self.ok("compile", *MLP, *CALIB, "--out", self.path("m.mxq"))
        self.assert_lines(r.stderr, [
            r"Compile \[3/6\] calibrate: 64 samples",
            rf"Compile \[3/6\] calibrate done: 64/64 samples in {SECONDS}",
            r"Compile \[4/6\] report: 64 samples",
            rf"Compile \[4/6\] report done: 64/64 samples in {SECONDS}",
        ])
        # Results stay on stdout alone.
        self.assertIn("Compile  OK: 6 ops lowered (int8)", r.stdout)
        self.assertNotIn("Compile [", r.stdout)

    def test_a_two_pass_method_shows_each_pass(self):
        r = self.ok("quantize", *MLP, *CALIB, "--preset", "best", "--accuracy-target", "20",
                    "--out", self.path("m.mxq"))
        self.assert_lines(r.stderr, [
            r"Quantize \[3/7\] calibrate pass 1/2: 64 samples",
            rf"Quantize \[3/7\] calibrate pass 1/2 done: 64/64 samples in {SECONDS}",
            r"Quantize \[3/7\] calibrate pass 2/2: 64 samples",
            rf"Quantize \[3/7\] calibrate pass 2/2 done: 64/64 samples in {SECONDS}",
            r"Quantize \[5/7\] report: 64 samples",
            rf"Quantize \[5/7\] report done: 64/64 samples in {SECONDS}",
        ])

    def test_a_small_float_compile_logs_nothing(self):
        r = self.ok("compile", *MLP, "--out", self.path("f.mxq"))
        self.assert_lines(r.stderr, [])
        r = self.ok("compile", *MLP, "--no-optimize", "--out", self.path("g.mxq"))
        self.assert_lines(r.stderr, [])

    def test_quiet_before_or_after_the_command_silences_it_and_changes_no_byte(self):
        loud = self.ok("compile", *MLP, *CALIB, "--out", self.path("loud.mxq"))
        self.assertTrue(loud.stderr)
        before = self.ok("--quiet", "compile", *MLP, *CALIB, "--out", self.path("q1.mxq"))
        after = self.ok("compile", *MLP, *CALIB, "--out", self.path("q2.mxq"), "-q")
        for r in (before, after):
            self.assertEqual(r.stderr, "")
            self.assertEqual(r.stdout, loud.stdout)  # the results are still printed
        with zipfile.ZipFile(self.path("loud.mxq")) as z:
            want = {n: z.read(n) for n in z.namelist()}
        for name in ("q1.mxq", "q2.mxq"):
            with zipfile.ZipFile(self.path(name)) as z:
                self.assertEqual({n: z.read(n) for n in z.namelist()}, want, name)

    def test_benchmark_steps_in_runs_or_in_time(self):
        self.ok("compile", *MLP, "--out", self.path("f.mxq"))
        r = self.ok("benchmark", "--artifact", self.path("f.mxq"), "--iterations", "5",
                    "--warmup", "2", "--json")
        json.loads(r.stdout)  # stdout is the JSON alone
        self.assert_lines(r.stderr, [
            r"Benchmark \[3/4\] warm-up: 2 runs",
            rf"Benchmark \[3/4\] warm-up done: 2/2 runs in {SECONDS}",
            r"Benchmark \[4/4\] measure: 5 runs",
            rf"Benchmark \[4/4\] measure done: 5/5 runs in {SECONDS}",
        ])
        r = self.ok("benchmark", "--artifact", self.path("f.mxq"), "--time", "0.3",
                    "--warmup", "0")
        self.assert_lines(r.stderr, [
            r"Benchmark \[4/4\] measure: 0\.30 s",
            rf"Benchmark \[4/4\] measure done: 0\.3/0\.3 s in {SECONDS}",
        ])

    def test_a_terminal_gets_a_redrawn_bar_with_the_time_left(self):
        status, out, term = on_terminal("compile", *MLP, *CALIB, "--out", self.path("t.mxq"))
        self.assertEqual(status, 0, out + term)
        self.assertIn("Compile  OK", out)
        # Redrawn in place, with the time left while it runs ...
        self.assertRegex(term, r"\rCompile \[3/6\] calibrate \[#*\.*\] [0-9]+/64 samples  "
                               r"[0-9]+:[0-9]{2} left\x1b\[K")
        self.assertRegex(term, r"\rCompile \[5/6\] lower\x1b\[K")
        # No plain lines there.
        self.assertNotIn("calibrate: 64 samples", term)
        # A step of a second or more stays, with its time; a quicker one is erased.
        status, out, term = on_terminal("benchmark", "--artifact", self.path("t.mxq"),
                                        "--time", "1.2", "--warmup", "0")
        self.assertEqual(status, 0, out + term)
        self.assertRegex(term, r"\rBenchmark \[4/4\] measure \[#{20}\] 1\.2/1\.2 s  "
                               r"1\.[0-9]{2} s\x1b\[K\n")
        self.assertRegex(term, r"\rBenchmark \[3/4\] warm-up\x1b\[K\r\x1b\[K")

    def test_an_error_during_a_step_starts_on_a_line_of_its_own(self):
        blocker = self.path("file")
        open(blocker, "w").close()
        status, _, term = on_terminal("compile", *MLP, "--out", os.path.join(blocker, "x.mxq"))
        self.assertEqual(status, 1, term)
        # The step it failed in stays on the screen, the error under it.
        self.assertRegex(term, r"\rCompile \[4/4\] write\x1b\[K\nerror: cannot write output file\n")

    def test_a_log_message_clears_the_line_it_would_continue(self):
        # A weight no operator uses: the spec frontend warns while loading.
        tiny = os.path.join(SOURCE_DIR, "examples", "tiny_mlp")
        with np.load(os.path.join(tiny, "weights.npz")) as w:
            arrays = dict(w)
        np.savez(self.path("extra.npz"), unused=np.zeros(3, np.float32), **arrays)
        status, out, term = on_terminal("compile", "--spec", os.path.join(tiny, "spec.yaml"),
                                        "--weights", self.path("extra.npz"),
                                        "--out", self.path("t"))
        self.assertEqual(status, 0, out + term)
        self.assertRegex(term, r"\rCompile \[1/4\] load\x1b\[K\r\x1b\[K[^\r\n]*warn[^\r\n]*"
                               r"'unused', which no operator of the spec uses\n")
