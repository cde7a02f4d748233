"""`eulernpu benchmark` (docs/cli.md#benchmark): an artifact loaded once and
run many times in one process. Its table and its JSON (the keys CI scripts
read), the iteration and time limits, random and file inputs, per-node times
that cover every node of the model, the modelled latency of npu_sim beside
the host's, sessions (ABI 1.7) on the backends that keep one, and its errors.
"""
import json
import os
import re
import shutil
import tempfile

import numpy as np
import onnx

from harness import SOURCE_DIR, CliTestCase, run

DIGITS = os.path.join(SOURCE_DIR, "examples", "digits")
CNN = os.path.join(DIGITS, "cnn.onnx")
CALIB = os.path.join(DIGITS, "calib")
SHAPE = ("--input-shape", "input=8,1,8,8")
KEYS = ["artifact", "backend", "threads", "session", "inputs", "warmup", "iterations", "load_ms",
        "first_run_ms", "min_ms", "median_ms", "mean_ms", "p90_ms", "max_ms", "throughput_ips",
        "peak_memory_bytes", "modelled_latency_ms"]


class BenchmarkTest(CliTestCase):

    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="eulernpu-bench-")
        cls.f32 = os.path.join(cls.root, "cnn.art")
        cls.npu = os.path.join(cls.root, "cnn.npu")
        for args in (("--out", cls.f32),
                     ("--calib-data-path", CALIB, "--backend", "npu_sim", "--out", cls.npu)):
            r = run("compile", "--model", CNN, *SHAPE, *args)
            assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def bench_json(self, *args):
        r = self.ok("benchmark", *args, "--json")
        return json.loads(r.stdout)

    # --- output -------------------------------------------------------------------

    def test_table_names_every_figure(self):
        r = self.ok("benchmark", "--artifact", self.f32, "--iterations", "7", "--threads", "1")
        lines = r.stdout.splitlines()
        self.assertEqual(lines[0], f"Benchmark OK: 7 runs of {self.f32} on cpu_ref, 1 thread")
        number = r"\d+\.\d+"
        self.assertRegex(lines[1], rf"^  load +{number} ms$")
        self.assertRegex(lines[2], rf"^  first run +{number} ms$")
        self.assertRegex(lines[3], rf"^  latency +min {number} · median {number} · p90 {number} · "
                                   rf"max {number} ms$")
        self.assertRegex(lines[4], rf"^  throughput +{number} runs/s$")
        self.assertRegex(lines[5], rf"^  peak memory +{number} MiB$")
        self.assertEqual(len(lines), 6, r.stdout)  # cpu_ref models no target

    def test_json_has_the_documented_keys_in_order(self):
        j = self.bench_json("--artifact", self.f32, "--iterations", "12", "--warmup", "2")
        self.assertEqual(list(j), KEYS)
        self.assertEqual(j["iterations"], 12)
        self.assertEqual(j["warmup"], 2)
        self.assertEqual(j["backend"], "cpu_ref")
        self.assertEqual(j["inputs"], "random")
        self.assertTrue(j["session"])
        self.assertLessEqual(j["min_ms"], j["median_ms"])
        self.assertLessEqual(j["median_ms"], j["p90_ms"])
        self.assertLessEqual(j["p90_ms"], j["max_ms"])
        self.assertGreater(j["throughput_ips"], 0)
        # The whole process: the host, the plugins and the model.
        self.assertGreater(j["peak_memory_bytes"], 1 << 20)
        self.assertIsNone(j["modelled_latency_ms"])

    def test_time_limit_runs_until_it_has_passed(self):
        j = self.bench_json("--artifact", self.f32, "--time", "0.3")
        self.assertGreaterEqual(j["iterations"], 2)
        # The measured runs alone fill the time: n runs of the mean take at
        # least most of it (the loop stops at the first run past it).
        self.assertGreater(j["iterations"] / j["throughput_ips"], 0.29)

    def test_file_inputs(self):
        inp = self.path("in.npz")
        np.savez(inp, input=np.zeros((8, 1, 8, 8), np.float32))
        j = self.bench_json("--artifact", self.f32, "--input", inp, "--iterations", "3")
        self.assertEqual(j["inputs"], "file")
        self.assertEqual(j["iterations"], 3)

    # --- per-node times -----------------------------------------------------------

    def test_per_node_covers_every_node_sorted_by_cost(self):
        j = self.bench_json("--artifact", self.f32, "--iterations", "9", "--per-node")
        nodes = j["nodes"]
        model = onnx.load(CNN)
        self.assertEqual(sorted(n["name"] for n in nodes), sorted(n.name for n in model.graph.node))
        ops = {n.name: n.op_type for n in model.graph.node}
        for n in nodes:
            self.assertEqual(n["count"], 9)
            self.assertEqual(n["op"], ops[n["name"]])
        totals = [n["total_ms"] for n in nodes]
        self.assertEqual(totals, sorted(totals, reverse=True))
        self.assertAlmostEqual(sum(n["share"] for n in nodes), 1.0, places=6)
        # The convolutions are the model's work.
        self.assertEqual(nodes[0]["op"], "Conv")
        # The nodes' time is part of the runs' time.
        self.assertLessEqual(sum(totals), j["mean_ms"] * 9 * 1.05)
        # By op type: every node counted once, the same time in total.
        by_op = {o["op"]: o for o in j["ops"]}
        self.assertEqual(sum(o["nodes"] for o in j["ops"]), len(nodes))
        self.assertEqual(by_op["Conv"]["nodes"], 2)
        self.assertAlmostEqual(sum(o["total_ms"] for o in j["ops"]), sum(totals), places=6)
        self.assertAlmostEqual(by_op["Conv"]["ms_per_run"], by_op["Conv"]["total_ms"] / 9)
        self.assertEqual(j["ops"][0]["op"], "Conv")

    def test_per_node_table(self):
        r = self.ok("benchmark", "--artifact", self.npu, "--iterations", "3", "--per-node")
        nodes, ops = r.stdout.split("\n\n", 1)[1].split("\n\n")
        table = nodes.splitlines()
        self.assertRegex(table[0], r"^  node +op +count +total ms +share$")
        rows = [re.split(r" {2,}", line.strip()) for line in table[1:]]
        self.assertEqual(rows[0][1], "QConv")
        self.assertTrue(all(row[2] == "3" for row in rows), rows)
        ops = ops.splitlines()
        self.assertRegex(ops[0], r"^  op +nodes +ms per run +share$")
        self.assertEqual(re.split(r" {2,}", ops[1].strip())[:2], ["QConv", "2"])

    # --- backends -----------------------------------------------------------------

    def test_npu_sim_shows_its_modelled_latency_beside_the_hosts(self):
        report = self.path("report.json")
        inp = self.path("in.npz")
        np.savez(inp, input=np.zeros((8, 1, 8, 8), np.float32))
        self.ok("run", "--artifact", self.npu, "--input", inp, "--out", self.path("o.npz"),
                "--report", report)
        with open(report, encoding="utf-8") as f:
            want = json.load(f)["totals"]["latency_ms"]
        j = self.bench_json("--artifact", self.npu, "--iterations", "3")
        self.assertEqual(j["backend"], "npu_sim")
        self.assertTrue(j["session"])
        self.assertEqual(j["modelled_latency_ms"], want)
        r = self.ok("benchmark", "--artifact", self.npu, "--iterations", "3")
        self.assertRegex(r.stdout, r"\n  modelled +\d+\.\d+ ms on the target \(npu_sim's model\)\n")

    def test_zynq_ps_keeps_a_session_and_fpga_board_runs_each_time(self):
        mblt = self.path("q.mblt")
        self.ok("quantize", "--model", CNN, *SHAPE, "--calib-data-path", CALIB, "--out",
                self.path("q.mxq"), "--save-quantized-ir", mblt)
        zynq, fpga = self.path("cnn.zynq"), self.path("cnn.board")
        self.ok("compile", "--mblt", mblt, "--backend", "zynq_ps", "--out", zynq)
        self.ok("compile", "--mblt", mblt, "--backend", "fpga_board", "--out", fpga)
        j = self.bench_json("--artifact", zynq, "--iterations", "2")
        self.assertTrue(j["session"])
        self.assertGreater(j["modelled_latency_ms"], 0)
        j = self.bench_json("--artifact", fpga, "--iterations", "2")
        self.assertFalse(j["session"])
        self.assertGreater(j["modelled_latency_ms"], 0)
        r = self.ok("benchmark", "--artifact", fpga, "--iterations", "2")
        self.assertIn("(the backend keeps no session: every run loads again)", r.stdout)
        self.error("benchmark", "--artifact", fpga, "--iterations", "2", "--per-node",
                   title="backend has no per-node times", where="backend 'fpga_board'")

    # --- errors -------------------------------------------------------------------

    def test_openblas_gets_the_kernels_of_this_cpu(self):
        # OpenBLAS 0.3.21 falls back to SSE3 kernels on CPUs newer than itself;
        # the host names the core from the CPU's features, unless the user did.
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
        if all(f in flags for f in ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl")):
            core = "SkylakeX"
        elif "avx2" in flags and "fma" in flags:
            core = "Haswell"
        else:
            core = None
        r = run("--log-level", "debug", "benchmark", "--artifact", self.f32, "--iterations", "1",
                env={"OPENBLAS_CORETYPE": ""})
        self.assertEqual(r.returncode, 0, r.stderr)
        if core:
            self.assertIn(f"OPENBLAS_CORETYPE={core} (from the CPU's features)", r.stderr)
        else:
            self.assertNotIn("OPENBLAS_CORETYPE=", r.stderr)
        r = run("--log-level", "debug", "benchmark", "--artifact", self.f32, "--iterations", "1",
                env={"OPENBLAS_CORETYPE": "Prescott"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("OPENBLAS_CORETYPE=Prescott (set by the user)", r.stderr)

    def test_errors(self):
        for args, where in [(("--iterations", "0"), "--iterations must be at least 1"),
                            (("--time", "0"), "--time must be more than 0"),
                            (("--time", "1", "--iterations", "3"), "not both"),
                            (("--warmup", "-1"), "--warmup must be 0 or more"),
                            (("--threads", "-2"), "--threads must be 0 or more")]:
            with self.subTest(args=args):
                self.error("benchmark", "--artifact", self.f32, *args,
                           title="invalid command line", where=where)
        self.error("benchmark", "--iterations", "3", title="missing required option",
                   where="--artifact")
        self.error("benchmark", "--artifact", self.path("none.art"), title="file not found")
        self.error("benchmark", "--artifact", self.f32, "--input", self.path("none.npz"),
                   title="file not found")
        wrong = self.path("wrong.npz")
        np.savez(wrong, input=np.zeros((1, 1, 8, 8), np.float32))
        self.error("benchmark", "--artifact", self.f32, "--input", wrong,
                   title="input tensor shape mismatch", where="(1, 1, 8, 8)")
        np.savez(wrong, input=np.zeros((8, 1, 8, 8), np.float64))
        self.error("benchmark", "--artifact", self.f32, "--input", wrong,
                   title="input tensor dtype mismatch")

    def test_partitioned_artifacts_are_refused(self):
        art = self.path("parts")
        self.ok("compile", "--model", os.path.join(DIGITS, "mlp.onnx"), "--input-shape",
                "input=4,1,8,8", "--calib-data-path", CALIB, "--config",
                os.path.join(SOURCE_DIR, "examples", "configs", "mlp_fc2_float.yaml"),
                "--backend", "npu_sim", "--out", art)
        self.error("benchmark", "--artifact", art, title="partitioned artifact cannot be benchmarked")
