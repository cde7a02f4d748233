"""zynq_ps bundles of the real models (on demand: ctest -L realmodels-full,
or -DEULERNPU_FULL_REAL_MODELS=ON): each model is quantized on cpu_ref as
test_int8 does, compiled for zynq_ps on a Zynq UltraScale+ (aarch64) and
a Zynq-7000 (armv7-a) device, exported, cross-built with the bundle's own
CMake project and run under qemu-user on a held-out sample. The output
file must be byte for byte the one `eulernpu run` writes on cpu_ref.

EULERNPU_REAL_MODELS=id,id narrows the models; EULERNPU_BUNDLE_ARCHS=
aarch64 (or armv7-a) the architectures.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import inputs  # noqa: E402
import suite  # noqa: E402
import test_fp32 as fp32  # noqa: E402
from harness import run  # noqa: E402

DOC = suite.load_models()
# arch -> (device, toolchain triple, emulator, cores)
ARCHS = {"aarch64": ("zcu104", "aarch64-linux-gnu", "qemu-aarch64", 4),
         "armv7-a": ("pynq-z2", "arm-linux-gnueabihf", "qemu-arm", 2)}


class RealModelBundleTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="eulernpu-realbundle-")
        cls.env = dict(os.environ, CCACHE_DIR=os.path.join(cls.root, "ccache"),
                       CCACHE_BASEDIR=cls.root, CCACHE_NOHASHDIR="1")
        cls.launcher = (["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
                        if shutil.which("ccache") else [])
        only = [a for a in os.environ.get("EULERNPU_BUNDLE_ARCHS", "").split(",") if a]
        cls.archs = only or list(ARCHS)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def ok(self, *args):
        r = run(*args, timeout=1800)
        self.assertEqual(r.returncode, 0, f"eulernpu {' '.join(args)}:\n{r.stdout}{r.stderr}")
        return r

    def sh(self, *cmd, cwd=None):
        r = subprocess.run(list(cmd), capture_output=True, text=True, env=self.env, cwd=cwd,
                           timeout=1800)
        self.assertEqual(r.returncode, 0, f"{' '.join(cmd)}:\n{r.stdout[-4000:]}{r.stderr[-4000:]}")
        return r

    def test_bundles_give_cpu_refs_bytes(self):
        for spec in fp32.selected_models():
            mid = spec["id"]
            d = os.path.join(self.root, mid)
            os.makedirs(d)
            calib, held = os.path.join(d, "calib"), os.path.join(d, "held")
            inputs.write_samples(mid, "calib", spec["calibration_samples"], calib, DOC)
            (sample, _), = inputs.write_samples(mid, "heldout", 1, held, DOC)
            qir, cpu = os.path.join(d, "q.mblt"), os.path.join(d, "cpu.mxq")
            self.ok("compile", "--model", suite.model_path(spec), *suite.compile_args(spec),
                    "--calib-data-path", calib, "--out", cpu, "--save-quantized-ir", qir,
                    "--sensitivity-samples", "0")
            self.ok("run", "--artifact", cpu, "--input", sample, "--out", cpu + ".npz")
            with open(cpu + ".npz", "rb") as f:
                want = f.read()
            for arch in self.archs:
                device, triple, emulator, cores = ARCHS[arch]
                with self.subTest(model=mid, arch=arch):
                    art, bundle = os.path.join(d, arch), os.path.join(d, arch + ".bundle")
                    self.ok("compile", "--mblt", qir, "--backend", "zynq_ps", "--target-device",
                            device, "--cpu-offload", "none", "--out", art)
                    self.ok("export", "--artifact", art, "--bundle", bundle)
                    build = os.path.join(bundle, "build")
                    self.sh("cmake", "-S", bundle, "-B", build,
                            f"-DCMAKE_TOOLCHAIN_FILE=toolchains/{triple}.cmake", *self.launcher,
                            cwd=bundle)
                    self.sh("cmake", "--build", build, "-j2")
                    out = art + ".npz"
                    self.sh(emulator, os.path.join(build, "eulernpu_run"), "--input", sample,
                            "--out", out, "--threads", str(cores))
                    with open(out, "rb") as f:
                        self.assertEqual(f.read(), want, "outputs differ from cpu_ref's")


if __name__ == "__main__":
    unittest.main()
