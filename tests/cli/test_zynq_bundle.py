"""zynq_ps bundles (`eulernpu export`) built and run as a user would on
a board: each test model is compiled for a Zynq-7000 (armv7-a) and a
Zynq UltraScale+ (aarch64) device, exported, cross-built with Debian's
cross compilers through the bundle's own CMake project and toolchain
file, and run under qemu-user. int8 outputs are the bytes of cpu_ref's
output file; float32 outputs agree with cpu_ref to rtol 1e-4, atol 1e-5.
Also: exporting is deterministic and replaces only an earlier bundle,
the errors of `export` and of the runner on the board.

Every bundle is built from its own directory into a fresh build tree;
ccache (when installed) compiles the kernel files that bundles share
once, and the bundles are built at -O1 (BUILD_FLAGS below), which
keeps the suite's time in bounds.
"""
import filecmp
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import numpy as np

from harness import ERROR_RE, SOURCE_DIR, CliTestCase, documented_anchors, run
import int8_identity

# arch -> (device, GNU triple, emulator, cores of the device)
ARCHS = {"aarch64": ("zcu104", "aarch64-linux-gnu", "qemu-aarch64", 4),
         "armv7-a": ("pynq-z2", "arm-linux-gnueabihf", "qemu-arm", 2)}
ONNX_MLP = os.path.join(SOURCE_DIR, "examples", "onnx_mlp")
# float32 bundles compile the elementwise kernels (Relu), the costliest
# file of the runtime (about 45 s for each architecture): the default
# suite builds them for armv7-a, whose NEON float rules are the stricter,
# and EULERNPU_BUNDLE_FULL=1 (ctest -L bundle-full) for both.
FULL = os.environ.get("EULERNPU_BUNDLE_FULL") == "1"
FLOAT_ARCHS = list(ARCHS) if FULL else ["armv7-a"]
# The default suite builds the bundles at -O1, which compiles in about half
# the time of the bundle's own -O3: the NEON intrinsics and the rounding
# rules (-ffp-contract=off stays) are the same at every level. Every bundle
# in the full run and in realmodels.bundle is built exactly as a user
# builds it.
BUILD_FLAGS = {} if FULL else {arch: ["-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG"] for arch in ARCHS}
# Each int8 model's bundle is a build of its own (some 20 s each): the
# default suite runs every model on one of the two architectures, so each
# model's kernels and each architecture's NEON code run on an emulated
# board; the full run builds every model for both.
INT8_MODELS = None if FULL else {"aarch64": {"cnn", "attn", "wideconv"},
                                 "armv7-a": {"mlp", "convnet"}}


def tree(root):
    """{relative path: sha256} of every file under `root`."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


class ZynqBundleTest(CliTestCase):

    @classmethod
    def setUpClass(cls):
        for _, triple, emulator, _ in ARCHS.values():
            for tool in (triple + "-g++", emulator, "cmake"):
                if shutil.which(tool) is None:
                    raise AssertionError(f"{tool} is missing: scripts/setup.sh installs it")
        cls.root = tempfile.mkdtemp(prefix="eulernpu-bundle-")
        cls.models = int8_identity.quantize_models(run, cls.root)
        cls.env = dict(os.environ, CCACHE_DIR=os.path.join(cls.root, "ccache"),
                       CCACHE_BASEDIR=cls.root, CCACHE_NOHASHDIR="1")
        cls.launcher = (["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
                        if shutil.which("ccache") else [])
        cls.built = {}  # (arch, name) -> eulernpu_run
        cls.build_seconds = 0.0

    @classmethod
    def tearDownClass(cls):
        print(f"\nbundles built: {len(cls.built)} in {cls.build_seconds:.0f} s", flush=True)
        shutil.rmtree(cls.root, ignore_errors=True)

    # --- helpers ----------------------------------------------------------------

    def export(self, artifact, bundle):
        r = self.ok("export", "--artifact", artifact, "--bundle", bundle)
        self.assertRegex(r.stdout, r"^Export   OK: \d+ files written to ")
        return bundle

    def build(self, bundle, arch):
        """Builds a bundle as its README says; returns the program."""
        triple = ARCHS[arch][1]
        start = time.monotonic()
        for cmd in (["cmake", "-S", bundle, "-B", os.path.join(bundle, "build"),
                     f"-DCMAKE_TOOLCHAIN_FILE=toolchains/{triple}.cmake", *self.launcher,
                     *BUILD_FLAGS.get(arch, [])],
                    ["cmake", "--build", os.path.join(bundle, "build"), "-j2"]):
            r = subprocess.run(cmd, capture_output=True, text=True, env=self.env, cwd=bundle,
                               timeout=900)
            self.assertEqual(r.returncode, 0, f"{' '.join(cmd)}:\n{r.stdout[-4000:]}{r.stderr}")
        type(self).build_seconds += time.monotonic() - start
        exe = os.path.join(bundle, "build", "eulernpu_run")
        self.assertTrue(os.access(exe, os.X_OK), exe)
        return exe

    def board(self, arch, exe, *args):
        """Runs the program under the arch's emulator (static: no sysroot)."""
        return subprocess.run([ARCHS[arch][2], exe, *args], capture_output=True, text=True,
                              timeout=600)

    def program(self, arch, name):
        """The int8 model `name` compiled, exported and built for `arch`."""
        key = (arch, name)
        if key not in self.built:
            device = ARCHS[arch][0]
            base = os.path.join(self.root, f"{name}-{device}")
            self.ok("compile", "--mblt", self.models[name] + ".mblt", "--backend", "zynq_ps",
                    "--target-device", device, "--out", base + ".zynq")
            self.export(base + ".zynq", base + ".bundle")
            type(self).built[key] = self.build(base + ".bundle", arch)
        return self.built[key]

    def assert_board_error(self, r, title, out=None):
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        m = ERROR_RE.match(r.stderr)
        self.assertIsNotNone(m, f"not a three-line error:\n{r.stderr}")
        self.assertEqual(m["title"], title)
        self.assertIn(m["anchor"], documented_anchors())
        if out is not None:
            self.assert_absent(out)

    # --- the bytes on the board ---------------------------------------------------

    def test_int8_bundles_give_cpu_refs_bytes_on_arm(self):
        if INT8_MODELS is not None:  # every model runs on one architecture at least
            self.assertEqual(set().union(*INT8_MODELS.values()), set(self.models))
        for arch, (device, _, _, cores) in ARCHS.items():
            names = sorted(self.models) if INT8_MODELS is None else sorted(INT8_MODELS[arch])
            self.assertTrue(set(names) <= set(self.models), names)
            for name in names:
                with self.subTest(arch=arch, model=name):
                    exe = self.program(arch, name)
                    with open(self.models[name] + ".cpu.npz", "rb") as f:
                        want = f.read()
                    # Every thread count gives the same bytes.
                    for threads in sorted({1, cores}):
                        out = self.path(f"{name}-{arch}-{threads}.npz")
                        r = self.board(arch, exe, "--input", self.models[name] + ".in.npz",
                                       "--out", out, "--threads", str(threads))
                        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                        self.assertRegex(r.stdout, r"^Run      OK: \d+ output tensors?\n$")
                        with open(out, "rb") as f:
                            self.assertEqual(f.read(), want, f"{threads} threads")
                    # `eulernpu compare` reads the board's file.
                    self.ok("compare", "--got", out, "--expected", self.models[name] + ".cpu.npz",
                            "--tol", "0")

    def test_float32_bundles_match_cpu_ref(self):
        cases = [(os.path.join(ONNX_MLP, "model.onnx"), os.path.join(ONNX_MLP, "input.npz")),
                 (os.path.join(int8_identity.DIGITS, "cnn.onnx"), self.models["cnn"] + ".in.npz")]
        for model, inputs in cases:
            with np.load(inputs) as z:
                extra = [a for k in z.files
                         for a in ("--input-shape", f"{k}=" + ",".join(map(str, z[k].shape)))]
            stem = os.path.basename(os.path.dirname(model)) + "-" + os.path.basename(model)
            # Under the class's directory, whose paths ccache makes relative.
            ref = os.path.join(self.root, stem + ".cpu")
            self.ok("compile", "--model", model, "--out", ref, *extra)
            self.ok("run", "--artifact", ref, "--input", inputs, "--out", ref + ".npz")
            with np.load(ref + ".npz") as z:
                want = {k: z[k] for k in z.files}
            for arch in FLOAT_ARCHS:
                device, _, _, cores = ARCHS[arch]
                with self.subTest(model=stem, arch=arch):
                    art = os.path.join(self.root, f"{stem}-{arch}.zynq")
                    self.ok("compile", "--model", model, "--backend", "zynq_ps", "--target-device",
                            device, "--out", art, *extra)
                    exe = self.build(self.export(art, art + ".bundle"), arch)
                    out = art + ".npz"
                    r = self.board(arch, exe, "--input", inputs, "--out", out, "--threads",
                                   str(cores))
                    self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                    with np.load(out) as z:
                        self.assertEqual(sorted(z.files), sorted(want))
                        for k, v in want.items():
                            self.assertEqual(z[k].dtype, v.dtype)
                            np.testing.assert_allclose(z[k], v, rtol=1e-4, atol=1e-5, err_msg=k)

    # --- export ---------------------------------------------------------------------

    def test_export_is_deterministic_and_replaces_only_a_bundle(self):
        art = self.path("cnn.zynq")
        self.ok("compile", "--mblt", self.models["cnn"] + ".mblt", "--backend", "zynq_ps",
                "--target-device", "pynq-z2", "--out", art)
        first = self.export(art, self.path("first"))
        second = self.export(art, self.path("second"))
        files = tree(first)
        self.assertEqual(files, tree(second))
        # A packed artifact of the same model exports the same bundle.
        self.ok("compile", "--mblt", self.models["cnn"] + ".mblt", "--backend", "zynq_ps",
                "--target-device", "pynq-z2", "--out", art + ".mxq")
        self.assertEqual(tree(self.export(art + ".mxq", self.path("packed"))), files)
        # What a pynq-z2 bundle holds: its own toolchain only, the model's
        # kernel files only, nlohmann/json with its licence.
        self.assertIn("toolchains/arm-linux-gnueabihf.cmake", files)
        self.assertNotIn("toolchains/aarch64-linux-gnu.cmake", files)
        self.assertIn("sdk/kit/src/kernels_qconv.cpp", files)
        self.assertNotIn("sdk/kit/src/kernels_rnn.cpp", files)
        for f in ("bundle.json", "README.md", "CMakeLists.txt", "model/graph.json",
                  "model/plan.json", "model/weights.npz", "runtime/main.cpp",
                  "third_party/nlohmann/json.hpp", "third_party/nlohmann/LICENSE.MIT"):
            self.assertIn(f, files)
        with open(os.path.join(first, "bundle.json")) as f:
            import json
            meta = json.load(f)
        self.assertEqual((meta["device"]["name"], meta["toolchain"]),
                         ("pynq-z2", "toolchains/arm-linux-gnueabihf.cmake"))
        self.assertGreater(meta["arena_bytes"], 0)
        # No absolute path of this machine in the bundle.
        for rel in files:
            with open(os.path.join(first, rel), "rb") as f:
                self.assertNotIn(self.tmp.encode(), f.read(), rel)
        # An earlier bundle is replaced whole (a stale file goes with it).
        with open(os.path.join(first, "stale.txt"), "w") as f:
            f.write("left from before")
        self.export(art, first)
        self.assertEqual(tree(first), files)
        self.assertTrue(filecmp.cmp(os.path.join(first, "model", "weights.npz"),
                                    os.path.join(second, "model", "weights.npz"), shallow=False))

    def test_export_errors(self):
        art = self.path("mlp.zynq")
        self.ok("compile", "--mblt", self.models["mlp"] + ".mblt", "--backend", "zynq_ps",
                "--out", art)
        # A directory that is not a bundle is left alone.
        other = self.path("notes")
        os.mkdir(other)
        with open(os.path.join(other, "keep.txt"), "w") as f:
            f.write("mine")
        self.error("export", "--artifact", art, "--bundle", other,
                   title="output path is in the way", where="is not a bundle")
        self.assertEqual(os.listdir(other), ["keep.txt"])
        # A file is not replaced either.
        self.error("export", "--artifact", art, "--bundle", os.path.join(other, "keep.txt"),
                   title="output path is in the way")
        # Backends without bundles: cpu_ref and npu_sim.
        for backend in ("cpu_ref", "npu_sim"):
            with self.subTest(backend=backend):
                other_art = self.path(backend)
                self.ok("compile", "--mblt", self.models["mlp"] + ".mblt", "--backend", backend,
                        "--out", other_art)
                out = self.path(backend + ".bundle")
                self.error("export", "--artifact", other_art, "--bundle", out,
                           title="backend cannot export a bundle", where=f"backend '{backend}'")
                self.assert_absent(out)
        # An artifact that is not one.
        out = self.path("none.bundle")
        self.error("export", "--artifact", self.path("missing"), "--bundle", out,
                   title="artifact file missing|file not found|not an artifact")
        self.assert_absent(out)
        self.error("export", "--artifact", art, title="missing required option")

    # --- the runner's errors on the board -------------------------------------------

    def test_runner_errors_are_three_lines_and_leave_nothing(self):
        arch = "aarch64"
        exe = self.program(arch, "cnn")
        good = self.models["cnn"] + ".in.npz"
        with np.load(good) as z:
            x = z["input"]
        out = self.path("out.npz")

        def inputs(name, save=np.savez, **arrays):
            p = self.path(name)
            save(p, **arrays)
            return p

        cases = [
            (["--input", inputs("wrong_key.npz", image=x)], "input tensor key not found"),
            # (An empty extra array: any bytes beyond the model's inputs
            # are refused before the keys are matched.)
            (["--input", inputs("extra.npz", input=x, other=np.zeros(0, np.float32))],
             "input tensor not in model"),
            (["--input", inputs("more.npz", input=x, other=x)], "npz file exceeds a size limit"),
            (["--input", inputs("shape.npz", input=x[:2])], "input tensor shape mismatch"),
            (["--input", inputs("dtype.npz", input=x.view(np.int32))],
             "input tensor dtype mismatch"),
            (["--input", inputs("deflated.npz", save=np.savez_compressed, input=x)],
             "npz member is compressed"),
            (["--input", self.path("absent.npz")], "file not found"),
            (["--input", good, "--threads", "0"], "invalid command line"),
            (["--input", good, "--bogus", "1"], "invalid command line"),
            (["--input", good], "invalid command line"),
        ]
        with open(self.path("garbage.npz"), "wb") as f:
            f.write(b"PK\x03\x04 this is not a zip file at all")
        cases.append((["--input", self.path("garbage.npz")], "npz file is corrupt"))
        for args, title in cases:
            with self.subTest(args=args[1:]):
                full = args + (["--out", out] if "--input" in args and args != ["--input", good]
                               else [])
                r = self.board(arch, exe, *full)
                self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                m = ERROR_RE.match(r.stderr)
                self.assertIsNotNone(m, f"not a three-line error:\n{r.stderr}")
                self.assertRegex(m["title"], f"^({title})$")
                self.assertIn(m["anchor"], documented_anchors())
                self.assert_absent(out)
        # An output directory that does not exist: nothing written anywhere.
        missing_dir = self.path("no", "such", "out.npz")
        r = self.board(arch, exe, "--input", good, "--out", missing_dir)
        self.assert_board_error(r, "cannot write output file")
        self.assertFalse(os.path.exists(self.path("no")))
        # --help says how to call it.
        r = self.board(arch, exe, "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("eulernpu_run --input I.npz --out R.npz [--threads N]", r.stdout)


if __name__ == "__main__":
    unittest.main()
