"""The vendor's path: install eulernpu, build examples/vendor_plugin against
the installed SDK as a separate CMake project, and load it into the
installed host with --plugin-dir.

The install and the plugin build happen once per run, in a temporary
directory removed afterwards; nothing is cached between runs.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import harness
import int8_identity
from harness import BUILD_DIR, SOURCE_DIR, TINY_MLP, CliTestCase

VENDOR_SOURCE = os.path.join(SOURCE_DIR, "examples", "vendor_plugin")
PLUGIN_FILE = "libeulernpu_acme_npu.so"
ACME_OPS = {"Gemm", "MatMul", "Add", "Relu", "Softmax"}
INT8_OPS = {"QConv", "QConvTranspose", "QGemm", "QMatMul", "QAdd", "QSub", "QMul", "QAveragePool",
            "QGlobalAveragePool", "QConcat", "QLookup", "QSoftmax"}


def _check_call(cmd, what):
    r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=600)
    if r.returncode != 0:
        raise AssertionError(f"{what} failed ({' '.join(cmd)}):\n{r.stdout[-4000:]}{r.stderr[-4000:]}")
    return r


class VendorPluginTest(CliTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.root = tempfile.mkdtemp(prefix="eulernpu-vendor-")
        cls.addClassCleanup(shutil.rmtree, cls.root, ignore_errors=True)
        cls.prefix = os.path.join(cls.root, "prefix")
        cls.vendor_build = os.path.join(cls.root, "vendor-build")
        _check_call(["cmake", "--install", BUILD_DIR, "--prefix", cls.prefix], "install")
        _check_call(["cmake", "-S", VENDOR_SOURCE, "-B", cls.vendor_build,
                     f"-DCMAKE_PREFIX_PATH={cls.prefix}", "-DCMAKE_BUILD_TYPE=Release",
                     "-DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON"], "configuring the plugin")
        _check_call(["cmake", "--build", cls.vendor_build, "-j2"], "building the plugin")
        cls.host = os.path.join(cls.prefix, "bin", "eulernpu")
        cls.plugin = os.path.join(cls.vendor_build, PLUGIN_FILE)

    def installed(self, *args, plugin_dir=True):
        """Runs the installed host, with the plugin's build directory on the
        plugin path unless plugin_dir is False."""
        env = dict(os.environ)
        env.pop("EULERNPU_PLUGIN_PATH", None)
        cmd = [self.host] + (["--plugin-dir", self.vendor_build] if plugin_dir else []) + list(args)
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env,
                              timeout=120)

    def installed_ok(self, *args, **kw):
        r = self.installed(*args, **kw)
        self.assertEqual(r.returncode, 0, f"installed eulernpu {' '.join(args)} failed:\n"
                                          f"{r.stdout}{r.stderr}")
        return r

    def compile_acme(self, out):
        return self.installed_ok("compile", "--backend", "acme_npu",
                                 "--spec", os.path.join(TINY_MLP, "spec.yaml"),
                                 "--weights", os.path.join(TINY_MLP, "weights.npz"),
                                 "--out", out)

    # --- the build ------------------------------------------------------------

    def test_installed_python_module_finds_the_installed_plugins(self):
        # docs/install.md: the module under lib/python3.11/dist-packages finds
        # the plugins of its own prefix, and a vendor's with plugin_dirs.
        site = os.path.join(self.prefix, "lib", "python3.11", "dist-packages")
        self.assertTrue(os.path.isfile(os.path.join(site, "eulernpu", "errors.md")))
        env = dict(os.environ, PYTHONPATH=site)
        env.pop("EULERNPU_PLUGIN_PATH", None)
        code = ("import sys, eulernpu; "
                "sys.exit(eulernpu.run_cli(['plugins'], plugin_dirs=[sys.argv[1]]))")
        r = subprocess.run(["/usr/bin/python3", "-c", code, self.vendor_build],
                           capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(os.path.join(self.prefix, "lib", "eulernpu", "plugins",
                                   "libeulernpu_cpu_ref.so"), r.stdout)
        self.assertIn("acme_npu", r.stdout)


    def test_installed_kernel_library_links_out_of_tree(self):
        # docs/kernels.md's snippet: a project of its own links
        # EulerNpu::kernels from the installed package and runs a kernel.
        src = os.path.join(self.root, "kernels-user")
        os.makedirs(src, exist_ok=True)
        with open(os.path.join(src, "CMakeLists.txt"), "w", encoding="utf-8") as f:
            f.write("cmake_minimum_required(VERSION 3.25)\n"
                    "project(kernels_user LANGUAGES CXX)\n"
                    "find_package(EulerNpuSdk 1 REQUIRED)\n"
                    "add_executable(kernels_user main.cpp)\n"
                    "target_link_libraries(kernels_user PRIVATE EulerNpu::kernels)\n")
        with open(os.path.join(src, "main.cpp"), "w", encoding="utf-8") as f:
            f.write("#include <cstdio>\n#include \"eulernpu/kernels/table.hpp\"\n"
                    "int main() {\n  std::array<int8_t, 256> t{};\n"
                    "  for (int i = 0; i < 256; ++i) t[i] = static_cast<int8_t>(127 - i);\n"
                    "  const int8_t x[3] = {-128, 0, 127};\n  int8_t y[3];\n"
                    "  eulernpu::kernels::qlookup(t, x, 3, y);\n"
                    "  std::printf(\"%d %d %d\\n\", y[0], y[1], y[2]);\n}\n")
        build = os.path.join(self.root, "kernels-user-build")
        _check_call(["cmake", "-S", src, "-B", build, f"-DCMAKE_PREFIX_PATH={self.prefix}",
                     "-DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON"], "configuring the kernel user")
        _check_call(["cmake", "--build", build], "building the kernel user")
        r = _check_call([os.path.join(build, "kernels_user")], "running the kernel user")
        self.assertEqual(r.stdout.strip(), "127 -1 -128")


    def test_plugin_is_built_against_the_installed_sdk(self):
        self.assertTrue(os.path.isfile(self.plugin), f"{PLUGIN_FILE} not in {self.vendor_build}")
        with open(os.path.join(self.vendor_build, "CMakeCache.txt"), encoding="utf-8") as f:
            cache = f.read()
        m = re.search(r"^EulerNpuSdk_DIR:PATH=(.*)$", cache, re.M)
        self.assertIsNotNone(m, "EulerNpuSdk_DIR not in the plugin's CMake cache")
        self.assertEqual(os.path.realpath(m[1]),
                         os.path.realpath(os.path.join(self.prefix, "lib", "cmake", "EulerNpuSdk")))

    def test_installed_tree_has_the_sdk(self):
        for rel in ("include/eulernpu/sdk/abi.h",
                    "lib/cmake/EulerNpuSdk/EulerNpuSdkConfig.cmake",
                    "lib/cmake/EulerNpuSdk/EulerNpuSdkConfigVersion.cmake"):
            self.assertTrue(os.path.isfile(os.path.join(self.prefix, rel)), f"{rel} not installed")

    def test_plugin_exports_only_its_entry_point(self):
        r = subprocess.run(["nm", "-D", "--defined-only", self.plugin], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        symbols = [line.split() for line in r.stdout.splitlines() if line.strip()]
        functions = [s[-1] for s in symbols if len(s) >= 2 and s[-2] in ("T", "W", "i")]
        self.assertEqual(functions, ["enp_plugin_entry"], r.stdout)
        self.assertEqual([s[-1] for s in symbols], ["enp_plugin_entry"], r.stdout)

    # --- discovery --------------------------------------------------------------

    def test_plugins_lists_acme_npu(self):
        r = self.installed_ok("plugins")
        # Built against the installed SDK: the ABI abi.h defines.
        with open(os.path.join(SOURCE_DIR, "sdk", "include", "eulernpu", "sdk", "abi.h")) as f:
            minor = re.search(r"#define ENP_ABI_MINOR (\d+)", f.read()).group(1)
        self.assertRegex(r.stdout, r"(?m)^\s*backend\s+acme_npu\s+0\.2\.0\s+1\." + minor +
                         r"\s+\S*" +
                         re.escape(PLUGIN_FILE) + "$")
        j = json.loads(self.installed_ok("plugins", "--json").stdout)
        acme = [p for p in j["plugins"] if p["name"] == "acme_npu"]
        self.assertEqual(len(acme), 1, j["plugins"])
        self.assertEqual(acme[0]["kind"], "backend")
        self.assertEqual(acme[0]["version"], "0.2.0")
        self.assertEqual(os.path.realpath(acme[0]["path"]), os.path.realpath(self.plugin))
        self.assertEqual(j["rejected"], [])

    def test_installed_host_finds_its_own_plugins(self):
        j = json.loads(self.installed_ok("plugins", "--json", plugin_dir=False).stdout)
        plugin_dir = os.path.realpath(os.path.join(self.prefix, "lib", "eulernpu", "plugins"))
        self.assertEqual([d["origin"] for d in j["search_path"]], ["installed"])
        self.assertEqual(os.path.realpath(j["search_path"][0]["path"]), plugin_dir)
        by_name = {p["name"]: p for p in j["plugins"]}
        self.assertIn("cpu_ref", by_name)
        self.assertEqual(os.path.dirname(os.path.realpath(by_name["cpu_ref"]["path"])), plugin_dir)
        self.assertNotIn("acme_npu", by_name)

    def test_capabilities(self):
        j = json.loads(self.installed_ok("capabilities", "--json").stdout)
        acme = [b for b in j["backends"] if b["name"] == "acme_npu"]
        self.assertEqual(len(acme), 1, [b["name"] for b in j["backends"]])
        self.assertEqual(acme[0]["version"], "0.2.0")
        float_ops = [op for op in acme[0]["ops"] if op["op"] in ACME_OPS]
        self.assertEqual({op["op"] for op in float_ops}, ACME_OPS)
        for op in float_ops:
            self.assertEqual(op["dtypes"], ["float32"], op)
        # The backend kit's int8 ops come with it: every ai.eulernpu op.
        int8_ops = {op["op"] for op in acme[0]["ops"] if op["domain"] == "ai.eulernpu"}
        self.assertEqual(int8_ops, INT8_OPS)
        self.assertEqual(j["matrix"]["ai.eulernpu::QConv"]["acme_npu"], ["int8"])
        self.assertEqual([(d["name"], d["core_modes"], d["default_core_mode"])
                          for d in acme[0]["devices"]], [("acme-edge", ["single"], "single")])
        self.assertEqual(j["matrix"]["Gemm"]["acme_npu"], ["float32"])

        text = self.installed_ok("capabilities", "--backend", "acme_npu").stdout
        self.assertRegex(text, r"(?m)^Gemm\s+f32\s*$")
        self.assertRegex(text, r"(?m)^\s*acme_npu\s+acme-edge\s+single\s*$")

    # --- compile, run, compare ------------------------------------------------

    def test_walkthrough_matches_the_golden_exactly(self):
        art, result = self.path("art"), self.path("result.npz")
        self.assertIn("Compile  OK", self.compile_acme(art).stdout)
        with open(os.path.join(art, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        self.assertEqual(manifest["backend"]["name"], "acme_npu")
        self.assertEqual(manifest["backend"]["version"], "0.2.0")
        self.assertEqual((manifest["target_device"], manifest["core_mode"]), ("acme-edge", "single"))
        self.assertTrue(os.path.isfile(os.path.join(art, "weights", "acme_npu.npz")))
        # The artifact is the backend kit's: graph.json and plan.json, the
        # weights under the plugin's name.
        with open(os.path.join(art, "graph.json"), encoding="utf-8") as f:
            graph = json.load(f)
        with open(os.path.join(art, "plan.json"), encoding="utf-8") as f:
            plan = json.load(f)
        self.assertEqual([n["op"] for n in graph["nodes"]],
                         ["Gemm", "Relu", "MatMul", "Add", "Softmax"])
        self.assertEqual(plan["schedule"], [0, 1, 2, 3, 4])
        self.assertEqual(plan["weights"]["file"], "weights/acme_npu.npz")
        self.assertIn("fc1.weight", plan["weights"]["tensors"])
        self.assertGreater(plan["arena_bytes"], 0)

        r = self.installed_ok("run", "--artifact", art,
                              "--input", os.path.join(TINY_MLP, "input.npz"), "--out", result)
        self.assertIn("Run      OK", r.stdout)
        r = self.installed_ok("compare", "--got", result,
                              "--expected", os.path.join(TINY_MLP, "golden.npz"))
        lines = [line for line in r.stdout.splitlines() if line.startswith("Compare  OK")]
        self.assertEqual(len(lines), 1, r.stdout)
        self.assertRegex(lines[0], r"max abs diff 0\.0(?![0-9.e])")

    def test_int8_identity_suite(self):
        # Every quantized test model gives cpu_ref's bytes on acme_npu: its
        # int8 ops are the backend kit's, run around its own hook.
        def run(*args):
            return self.installed(*args)
        os.mkdir(self.path("models"))
        models = int8_identity.quantize_models(run, self.path("models"))
        self.assertEqual(int8_identity.check_backend(self, run, "acme_npu", models, self.tmp),
                         [("acme-edge", "single")])

    def test_onnx_conformance_suite(self):
        # The build's conformance runner loads the out-of-tree plugin beside
        # the build's plugins; every case of its expected list must pass.
        runner = os.path.join(BUILD_DIR, "bin", "conformance_runner")
        r = subprocess.run([runner, "--backend", "acme_npu", "--plugin-dir", self.vendor_build,
                            "--expected", os.path.join(SOURCE_DIR, "tests", "conformance",
                                                       "expected", "acme_npu.txt"),
                            "node", "pytorch-converted", "pytorch-operator", "simple"],
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stdout[-4000:] + r.stderr[-4000:])
        self.assertRegex(r.stdout, r"(?m)^conformance: [1-9][0-9]* passed, 0 failed")

    # --- errors --------------------------------------------------------------

    def test_truncated_graph_json_is_a_corrupt_artifact(self):
        art, result = self.path("art"), self.path("result.npz")
        self.compile_acme(art)
        graph = os.path.join(art, "graph.json")
        with open(graph, "rb+") as f:
            f.truncate(os.path.getsize(graph) // 2)
        run_args = ("run", "--artifact", art, "--input", os.path.join(TINY_MLP, "input.npz"),
                    "--out", result)
        # The build tree's host and the installed one load the same plugin.
        self.error("--plugin-dir", self.vendor_build, *run_args,
                   title="artifact is corrupt", where="graph.json")
        self.assert_absent(result)
        r = self.installed(*run_args)
        self.assertEqual(r.returncode, 1, r.stderr)
        m = harness.ERROR_RE.match(r.stderr[r.stderr.rfind("error: "):])
        self.assertIsNotNone(m, f"not a three-line error:\n{r.stderr}")
        self.assertEqual(m["title"], "artifact is corrupt")
        self.assert_absent(result)

    def test_unsupported_node_is_reported_with_its_reason(self):
        spec = self.path("spec.yaml")
        with open(spec, "w", encoding="utf-8") as f:
            f.write("format: 1\nname: t\nopset: 17\n"
                    "inputs:\n  - {name: x, dtype: float32, shape: [1, 4]}\n"
                    "outputs:\n  - name: y\n"
                    "components:\n  - name: c\n    operators:\n"
                    "      - {name: s, op: Sigmoid, inputs: [x], outputs: [y]}\n")
        self.error("--plugin-dir", self.vendor_build, "compile", "--backend", "acme_npu",
                   "--spec", spec, "--out", self.path("art"), "--cpu-offload", "none",
                   title="backend lowering missing for op Sigmoid",
                   where="acme_npu has no kernel for Sigmoid")
        self.assert_absent(self.path("art"))

    def test_nodes_it_cannot_lower_run_on_cpu_ref_between_its_own(self):
        # Relu (acme) -> Sigmoid (acme has none: cpu_ref) -> Relu (acme).
        spec = self.path("spec.yaml")
        with open(spec, "w", encoding="utf-8") as f:
            f.write("format: 1\nname: t\nopset: 17\n"
                    "inputs:\n  - {name: x, dtype: float32, shape: [2, 4]}\n"
                    "outputs:\n  - name: y\n"
                    "components:\n  - name: c\n    operators:\n"
                    "      - {name: r1, op: Relu, inputs: [x], outputs: [a]}\n"
                    "      - {name: s, op: Sigmoid, inputs: [a], outputs: [b]}\n"
                    "      - {name: r2, op: Relu, inputs: [b], outputs: [y]}\n")
        inputs = self.path("in.npz")
        np.savez(inputs, x=np.array([[-2, -0.5, 0, 0.5], [1, 2, 3, -4]], np.float32))
        vendor = ("--plugin-dir", self.vendor_build)
        art = self.path("art")
        r = self.ok(*vendor, "compile", "--backend", "acme_npu", "--spec", spec, "--out", art)
        self.assertIn("3 partitions: acme_npu 1 node → cpu_ref (host) 1 node → acme_npu 1 node",
                      r.stdout)
        with open(os.path.join(art, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        self.assertEqual([p["backend"]["name"] for p in manifest["partitions"]],
                         ["acme_npu", "cpu_ref", "acme_npu"])
        self.assertEqual([b["name"] for b in manifest["partitions"][1]["inputs"]], ["a"])
        self.assertEqual([b["name"] for b in manifest["partitions"][1]["outputs"]], ["b"])
        self.assertEqual(manifest["offloaded_nodes"][0]["node"], "s")
        got = self.path("got.npz")
        self.ok(*vendor, "run", "--artifact", art, "--input", inputs, "--out", got)
        x = np.load(inputs)["x"].astype(np.float64)
        want = np.maximum(1 / (1 + np.exp(-np.maximum(x, 0))), 0)
        np.testing.assert_allclose(np.load(got)["y"], want, rtol=1e-6)
        # Head and tail only: the Sigmoid sits inside, so that is refused.
        self.error(*vendor, "compile", "--backend", "acme_npu", "--spec", spec,
                   "--out", self.path("edges"), "--cpu-offload", "edges",
                   title="backend lowering missing for op Sigmoid", where="node 's' (Sigmoid)")
        self.assert_absent(self.path("edges"))


if __name__ == "__main__":
    unittest.main()
