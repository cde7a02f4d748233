"""The zynq_ps backend end to end: its devices are data (the shipped Zynq
descriptors listed by capabilities, a new file in a plugin directory a new
device without rebuilding anything, bad files three-line errors naming the
file and the key); int8 outputs byte-identical to cpu_ref's for every
quantized test model on every device; float32 models within rtol 1e-4 of
cpu_ref; the artifact carries its device, checked again at run time.
"""
import hashlib
import json
import os
import shutil
import tempfile
import unittest

import numpy as np

from harness import PLUGIN_DIR, SOURCE_DIR, CliTestCase, rehash_manifest, run
import int8_identity

ONNX_MLP = os.path.join(SOURCE_DIR, "examples", "onnx_mlp")
DEVICES = {"pynq-z2": ("cortex-a9", "armv7-a", 2), "zcu104": ("cortex-a53", "aarch64", 4),
           "kv260": ("cortex-a53", "aarch64", 4), "ultra96-v2": ("cortex-a53", "aarch64", 4),
           "zcu102": ("cortex-a53", "aarch64", 4)}
TINY = """name: tiny
description: a one-core test device
cpu: cortex-a53
arch: aarch64
cores: 1
clock_mhz: 100
neon_bits: 128
l1d_kib: 16
l1i_kib: 16
l2_kib: 128
ddr_gbps: 1.5
cost:
  int8_gemm_macs_per_cycle: 2
  int8_dot_macs_per_cycle: 4
  int8_depthwise_macs_per_cycle: 1
  int8_scalar_macs_per_cycle: 0.5
  float_gemm_macs_per_cycle: 1
  float_scalar_macs_per_cycle: 0.5
  cycles_per_element: 10
  copy_bytes_per_cycle: 8
  op_overhead_cycles: 1000
"""


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class ZynqPsTest(CliTestCase):

    @classmethod
    def setUpClass(cls):
        cls.shared = tempfile.mkdtemp(prefix="eulernpu-zynq-")
        cls.models = int8_identity.quantize_models(run, cls.shared)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.shared, ignore_errors=True)

    def compile_zynq(self, name, out, *extra):
        return self.ok("compile", "--mblt", self.models[name] + ".mblt", "--backend", "zynq_ps",
                       "--out", out, *extra)

    def test_shipped_devices_are_listed(self):
        caps = json.loads(self.ok("capabilities", "--backend", "zynq_ps", "--json").stdout)
        (backend,) = caps["backends"]
        listed = {d["name"]: d for d in backend["devices"]}
        self.assertEqual(set(listed), set(DEVICES))
        for name, d in listed.items():
            self.assertEqual(d["core_modes"], ["single"])
            self.assertTrue(d["source"].endswith(name + ".zynq.yaml"), d["source"])
        text = self.ok("capabilities", "--backend", "zynq_ps").stdout
        self.assertRegex(text, r"zynq_ps\s+pynq-z2\s+single")

    def test_int8_outputs_byte_identical_to_cpu_ref(self):
        checked = int8_identity.check_backend(self, run, "zynq_ps", self.models, self.tmp)
        self.assertEqual({d for d, _ in checked}, set(DEVICES))

    def test_artifact_carries_its_device(self):
        for name, (cpu, arch, cores) in DEVICES.items():
            with self.subTest(device=name):
                art = self.path(name)
                self.compile_zynq("cnn", art, "--target-device", name)
                with open(os.path.join(art, "device.json")) as f:
                    device = json.load(f)
                self.assertEqual((device["name"], device["cpu"], device["arch"], device["cores"]),
                                 (name, cpu, arch, cores))
                with open(os.path.join(art, "manifest.json")) as f:
                    manifest = json.load(f)
                self.assertEqual(manifest["backend"]["name"], "zynq_ps")
                self.assertEqual(manifest["target_device"], name)
                self.assertIn("weights/zynq_ps.npz", manifest["files"])
        # The same model compiled twice gives the same bytes.
        again = self.path("again")
        self.compile_zynq("cnn", again, "--target-device", "kv260")
        for f in ("graph.json", "plan.json", "device.json", "weights/zynq_ps.npz"):
            self.assertEqual(sha256(os.path.join(again, f)),
                             sha256(os.path.join(self.path("kv260"), f)), f)

    def test_float32_models_match_cpu_ref(self):
        for model, inputs in ((os.path.join(ONNX_MLP, "model.onnx"),
                               os.path.join(ONNX_MLP, "input.npz")),
                              (os.path.join(int8_identity.DIGITS, "cnn.onnx"),
                               self.models["cnn"] + ".in.npz")):
            with self.subTest(model=model):
                with np.load(inputs) as z:
                    shapes = [f"{k}=" + ",".join(map(str, z[k].shape)) for k in z.files]
                outs = {}
                for backend in ("cpu_ref", "zynq_ps"):
                    art = self.path(backend + os.path.basename(model))
                    self.ok("compile", "--model", model, "--backend", backend, "--out", art,
                            *[a for s in shapes for a in ("--input-shape", s)])
                    self.ok("run", "--artifact", art, "--input", inputs, "--out", art + ".npz")
                    with np.load(art + ".npz") as z:
                        outs[backend] = {k: z[k] for k in z.files}
                self.assertEqual(outs["cpu_ref"].keys(), outs["zynq_ps"].keys())
                for k, want in outs["cpu_ref"].items():
                    np.testing.assert_allclose(outs["zynq_ps"][k], want, rtol=1e-4, atol=1e-5)

    def test_latency_estimate(self):
        art = self.path("cnn")
        self.compile_zynq("cnn", art, "--target-device", "zcu104")
        with open(os.path.join(art, "graph.json")) as f:
            nodes = [n["name"] for n in json.load(f)["nodes"]]

        def estimate(*extra):
            rep = self.path("estimate.json")
            r = self.ok("run", "--artifact", art, "--estimate-only", "--report", rep, *extra)
            with open(rep) as f:
                return r.stdout, json.load(f)

        text, rep = estimate("--threads", "2")
        self.assertIn("zynq_ps: device zcu104 (cortex-a53, aarch64, 1200 MHz), 2 of 4 cores, "
                      "estimated\n", text)
        self.assertRegex(text, r"Estimate OK: report of backend 'zynq_ps' written\n$")
        self.assertEqual((rep["format"], rep["version"], rep["threads"]),
                         ("eulernpu-zynq_ps-estimate", 1, 2))
        # Every scheduled op once, and the convs and the classifier (8 rows
        # of A at batch 8) on the NEON int8 GEMM's register blocks.
        self.assertEqual(sorted(op["node"] for op in rep["ops"]), sorted(nodes))
        kernels = {op["op"]: op["kernel"] for op in rep["ops"]}
        self.assertEqual((kernels["QConv"], kernels["QGemm"]), ("int8 gemm", "int8 gemm"))
        # At batch 1 the classifier runs on the GEMM's dot products; the
        # other int8 kernels each have their own rate.
        other = self.path("convnet")
        self.compile_zynq("convnet", other, "--target-device", "zcu104")
        self.ok("run", "--artifact", other, "--estimate-only", "--report", other + ".json")
        with open(other + ".json") as f:
            kernels = {op["node"]: op["kernel"] for op in json.load(f)["ops"]}
        self.assertEqual({n: kernels[n] for n in ("conv1", "dw", "fc", "deconv")},
                         {"conv1": "int8 gemm", "dw": "int8 depthwise", "fc": "int8 dot",
                          "deconv": "int8 scalar"})
        t = rep["totals"]
        self.assertAlmostEqual(sum(op["time_us"] for op in rep["ops"]) / 1000, t["latency_ms"])
        self.assertEqual(t["macs"], sum(op["macs"] for op in rep["ops"]))
        self.assertGreater(t["macs"], 0)
        with open(os.path.join(art, "plan.json")) as f:
            self.assertEqual(t["arena_bytes"], json.load(f)["arena_bytes"])
        # The arena's size is in the manifest and in `inspect`, text and JSON.
        with open(os.path.join(art, "manifest.json")) as f:
            self.assertEqual(json.load(f)["lowered"]["arena_bytes"], t["arena_bytes"])
        self.assertIn(f"  arena            {t['arena_bytes']:,} bytes (one static arena",
                      self.ok("inspect", art).stdout)
        shown = json.loads(self.ok("inspect", art, "--json").stdout)
        self.assertEqual((shown["backend"]["name"], shown["target_device"]), ("zynq_ps", "zcu104"))
        self.assertEqual(shown["lowered"]["arena_bytes"], t["arena_bytes"])
        # A damaged manifest is the corrupt-artifact error; a model option
        # given with an artifact is refused.
        bad = self.path("bad_manifest")
        shutil.copytree(art, bad)
        with open(os.path.join(bad, "manifest.json"), "w") as f:
            f.write("{")
        r, _ = self.error("inspect", bad, title="artifact manifest is corrupt")
        self.assertEqual(r.stdout, "")
        self.error("inspect", art, "--backend", "cpu_ref", title="invalid command line",
                   where="--backend applies to a model")
        # More cores are faster, never more than the device has, and the
        # figures are the same on every run.
        _, four = estimate()
        _, many = estimate("--threads", "64")
        self.assertEqual((four["threads"], many["threads"]), (4, 4))
        self.assertEqual(four, many)
        self.assertLess(four["totals"]["latency_ms"], t["latency_ms"])
        self.assertEqual(four["totals"]["latency_ms_1_thread"], t["latency_ms_1_thread"])
        self.assertEqual(estimate("--threads", "2")[1], rep)
        # A slower board takes longer: the same plan on the Cortex-A9.
        a9 = self.path("cnn_a9")
        self.compile_zynq("cnn", a9, "--target-device", "pynq-z2")
        rep_a9 = self.path("a9.json")
        self.ok("run", "--artifact", a9, "--estimate-only", "--report", rep_a9)
        with open(rep_a9) as f:
            self.assertGreater(json.load(f)["totals"]["latency_ms_1_thread"],
                               t["latency_ms_1_thread"])
        # A normal run with --report: the outputs are cpu_ref's, the table is printed.
        out = self.path("out.npz")
        r = self.ok("run", "--artifact", art, "--input", self.models["cnn"] + ".in.npz",
                    "--out", out, "--report", self.path("run.json"))
        self.assertIn("Totals:", r.stdout)
        with open(out, "rb") as got, open(self.models["cnn"] + ".cpu.npz", "rb") as want:
            self.assertEqual(got.read(), want.read())
        # Without --report nothing is estimated or printed.
        r = self.ok("run", "--artifact", art, "--input", self.models["cnn"] + ".in.npz",
                    "--out", out)
        self.assertNotIn("estimated", r.stdout)

    def test_descriptor_in_plugin_dir_is_a_new_device(self):
        plugin = os.path.join(PLUGIN_DIR, "libeulernpu_zynq_ps.so")
        before = sha256(plugin)
        extra = self.path("devices")
        os.mkdir(extra)
        with open(os.path.join(extra, "tiny.zynq.yaml"), "w") as f:
            f.write(TINY)
        r = self.ok("--plugin-dir", extra, "capabilities", "--backend", "zynq_ps")
        self.assertRegex(r.stdout, r"zynq_ps\s+tiny\s+single")
        self.assertRegex(r.stdout, r"zynq_ps\s+zcu104\s+single")
        art = self.path("tiny")
        self.ok("--plugin-dir", extra, "compile", "--mblt", self.models["mlp"] + ".mblt",
                "--backend", "zynq_ps", "--target-device", "tiny", "--out", art)
        # run needs no descriptor: the artifact carries it.
        out = self.path("tiny.npz")
        self.ok("run", "--artifact", art, "--input", self.models["mlp"] + ".in.npz", "--out", out)
        with open(out, "rb") as got, open(self.models["mlp"] + ".cpu.npz", "rb") as want:
            self.assertEqual(got.read(), want.read())
        # The same file by path, without the directory on the search path.
        by_path = self.path("by_path")
        self.compile_zynq("mlp", by_path, "--target-device", os.path.join(extra, "tiny.zynq.yaml"))
        with open(os.path.join(by_path, "device.json")) as f:
            self.assertEqual(json.load(f)["name"], "tiny")
        self.assertEqual(sha256(plugin), before)

    def test_bad_descriptors_are_errors_naming_the_file_and_key(self):
        def variant(name, old, new):
            return TINY.replace("name: tiny", "name: " + name).replace(old, new)

        bad = {
            "broken": ("name: broken\ncpu: [unclosed\n", "not valid YAML"),
            "nocores": (variant("nocores", "cores: 1\n", ""), "key 'cores': is required"),
            "manycores": (variant("manycores", "cores: 1", "cores: 1000"),
                          "key 'cores': must be between 1 and 16, got 1000"),
            "zeroclock": (variant("zeroclock", "clock_mhz: 100", "clock_mhz: 0"),
                          "key 'clock_mhz': must be greater than 0"),
            "wrongarch": (variant("wrongarch", "arch: aarch64", "arch: armv7-a"),
                          "key 'arch': 'armv7-a' is not the architecture of a cortex-a53"),
            "typo": (variant("typo", "ddr_gbps", "ddr_gbs"), "key 'ddr_gbs': unknown key"),
            "neon": (variant("neon", "neon_bits: 128", "neon_bits: 96"),
                     "key 'neon_bits': must be 64 or 128"),
            "twice": (variant("twice", "", "") + "cores: 2\n", "key 'cores' appears twice"),
            "nocost": (variant("nocost", "", "").split("cost:")[0], "key 'cost': is required"),
            "zerorate": (variant("zerorate", "int8_gemm_macs_per_cycle: 2",
                                 "int8_gemm_macs_per_cycle: 0"),
                         "key 'cost.int8_gemm_macs_per_cycle': must be greater than 0"),
            "costtypo": (variant("costtypo", "cycles_per_element", "cycles_per_elem"),
                         "key 'cost.cycles_per_elem': unknown key"),
        }
        extra = self.path("devices")
        os.mkdir(extra)
        for name, (text, _) in bad.items():
            with open(os.path.join(extra, name + ".zynq.yaml"), "w") as f:
                f.write(text)
        r = self.ok("--plugin-dir", extra, "capabilities", "--backend", "zynq_ps")
        self.assertRegex(r.stdout, r"zynq_ps\s+pynq-z2\s+single")
        for name, (_, where) in bad.items():
            file = os.path.join(extra, name + ".zynq.yaml")
            with self.subTest(descriptor=name):
                self.assertRegex(r.stdout, rf"zynq_ps\s+{name}\s+unusable: invalid descriptor")
                for target in (name, file):
                    _, m = self.error("--plugin-dir", extra, "compile", "--mblt",
                                      self.models["mlp"] + ".mblt", "--backend", "zynq_ps",
                                      "--target-device", target, "--out", self.path("x"),
                                      title="device descriptor is invalid")
                    self.assertIn(file, m["where"])
                    self.assertIn(where, m["where"])
        self.assert_absent(self.path("x"))

    def test_unknown_device_and_core_mode(self):
        self.error("compile", "--mblt", self.models["mlp"] + ".mblt", "--backend", "zynq_ps",
                   "--target-device", "zcu999", "--out", self.path("x"),
                   title="target device not found", where="zcu999")
        self.error("compile", "--mblt", self.models["mlp"] + ".mblt", "--backend", "zynq_ps",
                   "--target-device", "zcu104", "--inference-scheme", "global4", "--out",
                   self.path("x"), title="core mode not supported by target device",
                   where="zcu104")
        self.assert_absent(self.path("x"))

    def test_export_writes_a_bundle_and_refuses_what_it_must(self):
        # The host's side of export (the bundle's build and run on ARM are
        # test_zynq_bundle's): files in place, a directory replaced only if
        # eulernpu wrote its bundle.json, nothing left by a refusal.
        art = self.path("mlp.zynq")
        self.compile_zynq("mlp", art, "--target-device", "kv260")
        bundle = self.path("bundle")
        self.ok("export", "--artifact", art, "--bundle", bundle + "/")
        with open(os.path.join(bundle, "bundle.json")) as f:
            meta = json.load(f)
        self.assertEqual((meta["format"], meta["device"]["name"], meta["toolchain"]),
                         ("eulernpu-zynq_ps-bundle", "kv260", "toolchains/aarch64-linux-gnu.cmake"))
        for f in ("CMakeLists.txt", "model/weights.npz", "runtime/main.cpp"):
            self.assertTrue(os.path.isfile(os.path.join(bundle, f)), f)
        self.assertEqual([f for f in os.listdir(self.tmp) if f.startswith("bundle.")], [])
        # A bundle.json eulernpu did not write does not make a directory one.
        mine = self.path("mine")
        os.mkdir(mine)
        with open(os.path.join(mine, "bundle.json"), "w") as f:
            f.write('{"format": "my-notes"}')
        self.error("export", "--artifact", art, "--bundle", mine,
                   title="output path is in the way", where="not an eulernpu bundle")
        self.assertEqual(os.listdir(mine), ["bundle.json"])
        os.symlink(bundle, self.path("link"))
        self.error("export", "--artifact", art, "--bundle", self.path("link"),
                   title="output path is in the way", where="symbolic link")
        cpu = self.path("cpu")
        self.ok("compile", "--mblt", self.models["mlp"] + ".mblt", "--out", cpu)
        self.error("export", "--artifact", cpu, "--bundle", self.path("cpu.bundle"),
                   title="backend cannot export a bundle", where="backend 'cpu_ref'")
        self.assert_absent(self.path("cpu.bundle"))

    def test_weights_are_packed_for_the_neon_gemm(self):
        """QGemm and QConv weights in the panel4x16 layout, the input zero
        point folded into the biases; the depthwise-free models lose their
        unpacked W; the bytes of the run are cpu_ref's (checked above)."""
        art = self.path("packed")
        self.compile_zynq("wideconv", art, "--target-device", "zcu104")
        with open(os.path.join(art, "graph.json")) as f:
            graph = json.load(f)
        packed = [n for n in graph["nodes"] if n["op"] in ("QGemm", "QConv")]
        self.assertTrue(packed)
        with np.load(os.path.join(art, "weights", "zynq_ps.npz")) as z:
            weights = {k: z[k] for k in z.files}
        for n in packed:
            with self.subTest(node=n["name"]):
                a = n["attributes"]
                self.assertEqual(a["w_layout"], "panel4x16")
                w, offset = n["inputs"][1], n["inputs"][2]
                self.assertEqual(w, n["name"] + "::w_packed")
                shape = a["w_shape"]
                group = a.get("group", 1)
                rows, depth = shape[0] // group, int(np.prod(shape[1:]))
                pad = lambda v, m: (v + m - 1) // m * m
                self.assertEqual(weights[w].shape, (group * pad(rows, 4) * pad(depth, 16),))
                self.assertEqual(weights[offset].dtype, np.int32)
                self.assertEqual(weights[offset].shape, (shape[0],))
        # The unpacked W and biases (cpu_ref's artifact has them) are left out.
        ref = self.path("packed-cpu")
        self.ok("compile", "--mblt", self.models["wideconv"] + ".mblt", "--out", ref)
        with open(os.path.join(ref, "graph.json")) as f:
            ref_nodes = {n["name"]: n for n in json.load(f)["nodes"]}
        for n in packed:
            for k in (1, 2):
                self.assertNotIn(ref_nodes[n["name"]]["inputs"][k], weights)
        # A layout this build does not know, or a W of the wrong size, is a
        # damaged artifact.
        for edit, where in ((lambda n: n["attributes"].update(w_layout="panel8x8"),
                             "unknown weight layout 'panel8x8'"),
                            (lambda n: n["attributes"].update(
                                w_shape=[n["attributes"]["w_shape"][0] + 4]
                                + n["attributes"]["w_shape"][1:]),
                             "")):
            with self.subTest(where=where):
                bad = self.path("bad-" + str(len(where)))
                shutil.copytree(art, bad)
                with open(os.path.join(bad, "graph.json")) as f:
                    g = json.load(f)
                edit(next(n for n in g["nodes"] if n["op"] in ("QGemm", "QConv")))
                with open(os.path.join(bad, "graph.json"), "w") as f:
                    json.dump(g, f)
                rehash_manifest(bad)
                out = self.path("bad.npz")
                self.error("run", "--artifact", bad, "--input",
                           self.models["wideconv"] + ".in.npz", "--out", out,
                           title="artifact is corrupt", where=where)
                self.assert_absent(out)

    def test_edited_device_in_artifact_is_refused_at_run(self):
        art = self.path("edited")
        self.compile_zynq("mlp", art, "--target-device", "zcu104")
        path = os.path.join(art, "device.json")
        with open(path) as f:
            device = json.load(f)
        device["cores"] = 0
        with open(path, "w") as f:
            json.dump(device, f)
        rehash_manifest(art)
        out = self.path("edited.npz")
        self.error("run", "--artifact", art, "--input", self.models["mlp"] + ".in.npz", "--out",
                   out, title="device descriptor is invalid",
                   where="artifact device.json: key 'cores'")
        self.assert_absent(out)


if __name__ == "__main__":
    unittest.main()
