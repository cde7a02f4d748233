"""The npu_sim backend end to end: int8 outputs byte-identical to cpu_ref's
for every quantized test model in every core mode of npu8; device
descriptors as data (a new file in a plugin directory is a new device,
without rebuilding anything; bad files are three-line errors naming the
file and do not hide the good ones); the core mode fixed at compile time;
float ops refused; and the run report (--report, --estimate-only), whose
figures differ between core modes as docs/backends/npu_sim.md explains.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx

from harness import PLUGIN_DIR, SOURCE_DIR, CliTestCase, run, rehash_manifest
import int8_identity

MODES = ["single", "multi", "global4", "global8"]
REPORT_KEYS = {"format", "version", "device", "core_mode", "clock_mhz", "ops", "totals",
               "summary"}
TOTAL_KEYS = {"cycles", "latency_ms", "throughput_ips", "peak_sram_bytes", "dram_read_bytes",
              "dram_write_bytes", "macs", "mac_utilization"}
OP_KEYS = {"node", "op", "unit", "cores", "macs", "compute_cycles", "stall_cycles", "sync_cycles",
           "cycles", "roofline_cycles", "dram_read_bytes", "dram_write_bytes", "peak_sram_bytes",
           "mac_utilization"}

TINY = """\
name: tiny
description: a 4x4 test array
clock_mhz: 100
clusters: 1
cores_per_cluster: 1
core:
  mac: {rows: 4, cols: 4, dataflow: is}
  sram: {unified_kib: 64}
dram_bytes_per_cycle: 4
core_modes: [single]
"""


# One core whose SRAM halves (512 bytes) cannot hold one output pixel of a
# 64-channel 3x3 conv with its weights: the planner must cut columns, rows,
# output channels and input-channel (K) slices.
SMALL_SRAM = """\
name: small_sram
description: a 4x4 array with 1 KiB of SRAM, to force multi-tile plans
clock_mhz: 100
clusters: 1
cores_per_cluster: 1
core:
  mac: {rows: 4, cols: 4, dataflow: os}
  sram: {unified_kib: 1}
dram_bytes_per_cycle: 8
core_modes: [single]
"""


def must(r, what):
    if r.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{r.stdout}{r.stderr}")


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class NpuSimTest(CliTestCase):
    @classmethod
    def setUpClass(cls):
        """Quantizes every test model of the int8 identity suite once: its
        int8 graph (.mblt), inputs, and cpu_ref's outputs for them, the
        reference for every device and mode."""
        cls.shared = tempfile.mkdtemp(prefix="eulernpu-npusim-")
        cls.models = int8_identity.quantize_models(run, cls.shared)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.shared, ignore_errors=True)

    def compile_npu(self, name, out, *extra):
        return self.ok("compile", "--mblt", self.models[name] + ".mblt", "--backend", "npu_sim",
                       "--out", out, *extra)

    def run_npu(self, name, art, *extra):
        out = self.path(os.path.basename(art) + ".npz")
        r = self.ok("run", "--artifact", art, "--input", self.models[name] + ".in.npz", "--out",
                    out, *extra)
        return out, r

    def estimate(self, art):
        report = self.path(os.path.basename(art) + ".report.json")
        self.ok("run", "--artifact", art, "--estimate-only", "--report", report)
        with open(report) as f:
            return json.load(f)

    # --- functional model ----------------------------------------------------

    def test_outputs_byte_identical_to_cpu_ref(self):
        # The int8 identity suite: every model, every device and core mode.
        checked = int8_identity.check_backend(self, run, "npu_sim", self.models, self.tmp)
        self.assertIn(("npu8", "global8"), checked)

    def small_sram_device(self):
        extra = self.path("devices")
        os.mkdir(extra)
        with open(os.path.join(extra, "small_sram.npu.yaml"), "w") as f:
            f.write(SMALL_SRAM)
        return os.path.join(extra, "small_sram.npu.yaml")

    def test_multi_tile_plans_execute_byte_identical_to_cpu_ref(self):
        # The QConvs run tile by tile as planned: column tiles and K slices
        # (int32 partial sums) on a 1 KiB SRAM must still give cpu_ref's bytes.
        device = self.small_sram_device()
        for name in ("wideconv", "cnn"):
            with self.subTest(model=name):
                art = self.path(name + "-small")
                self.compile_npu(name, art, "--target-device", device)
                with open(os.path.join(art, "plan.json")) as f:
                    convs = [op["tiling"] for op in json.load(f)["ops"]
                             if op["op_type"] == "QConv" and op["tiling"]["kind"] == "conv"]
                self.assertTrue(convs)
                if name == "wideconv":  # more tiles than plan.json lists, K sliced
                    self.assertTrue(any(t["col_blocks"] > 1 and t["k_blocks"] > 1 and
                                        t["tile_count"] > 32 for t in convs))
                out, _ = self.run_npu(name, art)
                with open(out, "rb") as got, open(self.models[name] + ".cpu.npz", "rb") as want:
                    self.assertEqual(got.read(), want.read())

    def test_tiling_not_covering_the_output_is_a_corrupt_artifact(self):
        device = self.small_sram_device()
        for key in ("col_blocks", "k_blocks", "row_tile", "n_tile"):
            with self.subTest(field=key):
                art = self.path("wideconv-" + key)
                self.compile_npu("wideconv", art, "--target-device", device)
                plan_file = os.path.join(art, "plan.json")
                with open(plan_file) as f:
                    plan = json.load(f)
                conv = next(op for op in plan["ops"] if op["op_type"] == "QConv" and
                            op["tiling"][key] > 1)
                conv["tiling"][key] -= 1  # one block or tile too few: outputs left unwritten
                with open(plan_file, "w") as f:
                    json.dump(plan, f)
                rehash_manifest(os.path.dirname(plan_file))
                self.error("run", "--artifact", art, "--input",
                           self.models["wideconv"] + ".in.npz", "--out", self.path("o.npz"),
                           title="artifact is corrupt", where=conv["node"])

    def test_no_op_of_any_test_model_beats_the_roofline(self):
        # Every op of every quantized test model, on every shipped device and
        # mode: cycles >= max(MACs / peak MACs per cycle, bytes / bandwidth).
        targets = [("edge16", "single"), ("quad_single", "single")] + \
            [("npu8", m) for m in MODES]
        checked = 0
        for name in sorted(self.models):
            for device, mode in targets:
                with self.subTest(model=name, device=device, mode=mode):
                    art = self.path(f"{name}-{device}-{mode}")
                    self.compile_npu(name, art, "--target-device", device,
                                     "--inference-scheme", mode)
                    for op in self.estimate(art)["ops"]:
                        if not op["unit"].startswith("npu"):
                            continue
                        self.assertGreaterEqual(op["cycles"], op["roofline_cycles"], op["node"])
                        self.assertEqual(op["cycles"], op["compute_cycles"] + op["stall_cycles"] +
                                         op["sync_cycles"], op["node"])
                        if op["macs"] > 0:
                            self.assertGreater(op["roofline_cycles"], 0, op["node"])
                        checked += 1
        print(f"roofline held on {checked} ops")

    def test_artifact_holds_graph_plan_device_and_functional_model(self):
        art = self.path("cnn")
        self.compile_npu("cnn", art, "--target-device", "npu8")
        for f in ("graph.json", "plan.json", "device.json", "estimate.json",
                  "functional/graph.json", "functional/plan.json"):
            self.assertTrue(os.path.exists(os.path.join(art, f)), f)
        with open(os.path.join(art, "graph.json")) as f:
            graph = json.load(f)
        units = {n["op"]: n["unit"] for n in graph["nodes"]}
        self.assertEqual(units["QuantizeLinear"], "host (head)")
        self.assertEqual(units["DequantizeLinear"], "host (tail)")
        self.assertEqual(units["QConv"], "npu")
        conv = next(n for n in graph["nodes"] if n["op"] == "QConv")
        self.assertEqual(conv["kind"], "conv")
        with open(os.path.join(art, "device.json")) as f:
            self.assertEqual(json.load(f)["name"], "npu8")

    # --- devices as data -----------------------------------------------------

    def test_descriptor_in_plugin_dir_is_a_new_device(self):
        plugin = os.path.join(PLUGIN_DIR, "libeulernpu_npu_sim.so")
        before = sha256(plugin)
        extra = self.path("devices")
        os.mkdir(extra)
        with open(os.path.join(extra, "tiny.npu.yaml"), "w") as f:
            f.write(TINY)
        r = self.ok("--plugin-dir", extra, "capabilities", "--backend", "npu_sim")
        self.assertRegex(r.stdout, r"npu_sim\s+tiny\s+single")
        self.assertRegex(r.stdout, r"npu_sim\s+npu8\s+single,multi,global4,global8")
        art = self.path("tiny")
        self.ok("--plugin-dir", extra, "compile", "--mblt", self.models["mlp"] + ".mblt",
                "--backend", "npu_sim", "--target-device", "tiny", "--out", art)
        # run needs no descriptor: the artifact carries it.
        out, r = self.run_npu("mlp", art)
        self.assertIn("device tiny (4x4 is, 100 MHz)", r.stdout)
        with open(out, "rb") as got, open(self.models["mlp"] + ".cpu.npz", "rb") as want:
            self.assertEqual(got.read(), want.read())
        # The same file by path, without the directory on the search path.
        by_path = self.path("by_path")
        self.compile_npu("mlp", by_path, "--target-device", os.path.join(extra, "tiny.npu.yaml"))
        self.assertEqual(self.estimate(by_path)["device"], "tiny")
        self.assertEqual(sha256(plugin), before)

    def test_bad_descriptors_are_errors_naming_the_file(self):
        bad = {
            "broken": "name: broken\ncore: [unclosed\n",
            "typo": TINY.replace("name: tiny", "name: typo").replace("clock_mhz", "clock_mhzz"),
            "norows": TINY.replace("name: tiny", "name: norows").replace("rows: 4", "rows: 0"),
            "nodefault": TINY.replace("name: tiny", "name: nodefault") +
                         "default_core_mode: global4\n",
            "twice": TINY.replace("name: tiny", "name: twice") + "clock_mhz: 900\n",
            "twodocs": TINY.replace("name: tiny", "name: twodocs") + "---\nclock_mhz: 900\n",
        }
        wheres = {"broken": "not valid YAML", "typo": "key 'clock_mhzz'",
                  "norows": "key 'core.mac.rows'", "nodefault": "key 'default_core_mode'",
                  "twice": "line 11: key 'clock_mhz' appears twice",
                  "twodocs": "holds 2 YAML documents"}
        extra = self.path("devices")
        os.mkdir(extra)
        for name, text in bad.items():
            with open(os.path.join(extra, name + ".npu.yaml"), "w") as f:
                f.write(text)
        with open(os.path.join(extra, "tiny.npu.yaml"), "w") as f:
            f.write(TINY)
        r = self.ok("--plugin-dir", extra, "capabilities", "--backend", "npu_sim")
        self.assertRegex(r.stdout, r"npu_sim\s+tiny\s+single")
        for name in bad:
            file = os.path.join(extra, name + ".npu.yaml")
            with self.subTest(descriptor=name):
                self.assertRegex(r.stdout, rf"npu_sim\s+{name}\s+unusable: invalid descriptor")
                self.assertIn(file, r.stderr)  # the warning of the scan
                for target in (name, file):
                    _, m = self.error("--plugin-dir", extra, "compile", "--mblt",
                                      self.models["mlp"] + ".mblt", "--backend", "npu_sim",
                                      "--target-device", target, "--out", self.path("x"),
                                      title="device descriptor is invalid")
                    self.assertIn(file, m["where"])
                    self.assertIn(wheres[name], m["where"])
        self.assert_absent(self.path("x"))

    def test_unknown_device(self):
        self.error("compile", "--mblt", self.models["mlp"] + ".mblt", "--backend", "npu_sim",
                   "--target-device", "npu9", "--out", self.path("x"),
                   title="target device not found", where="npu9")

    # --- core modes ----------------------------------------------------------

    def test_unsupported_core_mode_at_compile(self):
        for device in ("edge16", "quad_single"):
            with self.subTest(device=device):
                self.error("compile", "--mblt", self.models["mlp"] + ".mblt", "--backend",
                           "npu_sim", "--target-device", device, "--inference-scheme", "global4",
                           "--out", self.path("x"),
                           title="core mode not supported by target device", where=device)

    def test_run_in_another_mode_says_recompile(self):
        art = self.path("g4")
        self.compile_npu("mlp", art, "--target-device", "npu8", "--inference-scheme", "global4")
        _, m = self.error("run", "--artifact", art, "--input", self.models["mlp"] + ".in.npz",
                          "--out", self.path("o.npz"), "--inference-scheme", "single",
                          title="inference scheme differs from the artifact")
        self.assertIn("recompile", m["fix"])
        self.assertIn("--inference-scheme single", m["fix"])

    def test_modes_report_different_latency_and_throughput(self):
        figures = {}
        for mode in ("single", "global4"):
            art = self.path(mode)
            self.compile_npu("cnn", art, "--target-device", "npu8", "--inference-scheme", mode)
            figures[mode] = self.estimate(art)["totals"]
        single, global4 = figures["single"], figures["global4"]
        self.assertNotEqual(global4["latency_ms"], single["latency_ms"])
        self.assertNotEqual(global4["throughput_ips"], single["throughput_ips"])
        self.assertEqual(global4["macs"], single["macs"])
        # npu8 (1000 MHz): latency is the cycles at the clock, and the inputs
        # in flight are 8 in single (each core its own) and 2 in global4
        # (four cores per input), docs/backends/npu_sim.md, "Running".
        for mode, in_flight in (("single", 8), ("global4", 2)):
            t = figures[mode]
            self.assertAlmostEqual(t["latency_ms"], t["cycles"] / 1e6, places=9)
            self.assertAlmostEqual(t["throughput_ips"] * t["latency_ms"] / 1000, in_flight,
                                   places=6, msg=mode)

    # --- what it refuses -----------------------------------------------------

    def test_float_op_is_backend_lowering_missing(self):
        # Without CPU offload (the default offloads: test_partitions.py).
        _, m = self.error("compile", "--model", os.path.join(int8_identity.DIGITS, "mlp.onnx"),
                          "--input-shape", f"input={int8_identity.BATCH},1,8,8", "--backend", "npu_sim",
                          "--cpu-offload", "none", "--out", self.path("x"),
                          title="backend lowering missing for op [A-Za-z]+")
        self.assertIn("eulernpu capabilities", m["fix"])
        self.assertIn("int8", m["where"])
        self.assert_absent(self.path("x"))

    def test_capabilities_lists_npu_sim_ops(self):
        r = self.ok("capabilities", "--backend", "npu_sim", "--json")
        backend = json.loads(r.stdout)["backends"][0]
        ops = {(o["domain"], o["op"]) for o in backend["ops"]}
        for op in (("ai.eulernpu", "QConv"), ("ai.eulernpu", "QGemm"), ("", "Reshape"),
                   ("", "QuantizeLinear"), ("", "DequantizeLinear"), ("", "MaxPool")):
            self.assertIn(op, ops)
        self.assertNotIn(("", "Gemm"), ops)
        names = [d["name"] for d in backend["devices"]]
        self.assertEqual(names[:3], ["edge16", "npu8", "quad_single"])

    # --- the report ----------------------------------------------------------

    def test_estimate_only_gives_the_report_and_no_outputs(self):
        art = self.path("est")
        self.compile_npu("convnet", art,
                         "--target-device", "edge16")
        before = set(os.listdir(self.tmp))
        r = self.ok("run", "--artifact", art, "--estimate-only")
        self.assertIn("Estimate OK", r.stdout)
        self.assertIn("Totals:", r.stdout)
        self.assertIn("host (head)", r.stdout)
        self.assertEqual(set(os.listdir(self.tmp)), before)

    def test_resnet50_figures_of_the_docs(self):
        # docs/backends/npu_sim.md: the benchmark model's size ("Speed") and
        # its edge16 plan ("Lowering"), by the commands the docs show, run in
        # a scratch directory. Shapes alone decide them: the random weights
        # and the two calibration samples do not.
        work = self.path("r50")
        os.makedirs(work)
        subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "benchmarks", "make_resnet50.py"),
                        "resnet50.onnx", "--calib", "calib", "2"], check=True, cwd=work,
                       stdout=subprocess.DEVNULL)
        self.ok("compile", "--model", "resnet50.onnx", "--calib-data-path", "calib",
                "--sensitivity-samples", "0", "--save-quantized-ir", "resnet50.int8.mblt",
                "--out", "resnet50.cpu_ref", cwd=work)
        self.ok("compile", "--mblt", "resnet50.int8.mblt", "--backend", "npu_sim",
                "--target-device", "edge16", "--out", "resnet50.edge16", cwd=work)
        self.ok("run", "--artifact", "resnet50.edge16", "--estimate-only", "--report",
                "edge16.json", cwd=work)
        with open(os.path.join(work, "edge16.json")) as f:
            report = json.load(f)
        t = report["totals"]
        self.assertEqual(sum(1 for op in report["ops"] if op["unit"] == "npu"), 73)
        self.assertEqual(f"{t['macs'] / 1e9:.2f}", "4.15")
        self.assertEqual(f"{t['cycles'] / 1e6:.1f}", "26.6")
        self.assertEqual(f"{t['latency_ms']:.1f}", "53.3")
        self.assertEqual(f"{t['dram_read_bytes'] / 1e6:.0f}", "133")
        self.assertEqual(f"{t['dram_write_bytes'] / 1e6:.1f}", "16.9")
        self.assertEqual(f"{100 * t['mac_utilization']:.0f}", "61")
        with open(os.path.join(work, "resnet50.edge16", "plan.json")) as f:
            plan = json.load(f)
        matrix = [op for op in plan["ops"] if op["op_type"] in ("QConv", "QGemm")]
        self.assertEqual(len(matrix), 54)
        self.assertEqual(sum(1 for op in matrix if op["tiling"].get("col_blocks", 1) > 1), 12)
        self.assertEqual(sum(1 for op in matrix if op["tiling"].get("k_blocks", 1) > 1), 26)

    def test_report_json_has_the_documented_keys(self):
        art = self.path("rep")
        self.compile_npu("attn", art, "--target-device", "quad_single")
        report = self.path("r.json")
        self.run_npu("attn", art, "--report", report)
        with open(report) as f:
            j = json.load(f)
        self.assertEqual(set(j), REPORT_KEYS | {"cores", "array"})
        self.assertEqual(set(j["totals"]), TOTAL_KEYS)
        self.assertEqual(j["device"], "quad_single")
        self.assertEqual(j["core_mode"], "single")
        for op in j["ops"]:
            self.assertEqual(set(op), OP_KEYS)
            if op["unit"] != "npu":
                self.assertEqual(op["cycles"], 0)
        npu = [op for op in j["ops"] if op["unit"] == "npu"]
        self.assertEqual(sum(op["macs"] for op in npu), j["totals"]["macs"])
        self.assertGreater(j["totals"]["cycles"], 0)


if __name__ == "__main__":
    unittest.main()
