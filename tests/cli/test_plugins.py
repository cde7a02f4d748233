"""Plugin discovery: what loads, what is refused and why, and the
capability matrix built from what plugins declare."""
import json
import os
import shutil
import subprocess
import unittest

from harness import FIXTURE_DIR, PLUGIN_DIR, TINY_MLP, CliTestCase, compile_tiny_mlp, run


def make_bad_plugin_dir(path):
    """A directory holding one library of every kind the host must refuse."""
    os.makedirs(path)
    for lib in ("libnot_a_plugin.so", "libeulernpu_abi2.so", "libeulernpu_missing_dep.so"):
        shutil.copy(os.path.join(FIXTURE_DIR, lib), path)
    with open(os.path.join(path, "libeulernpu_x.so"), "w") as f:
        f.write("this is a text file, not a library\n")
    src = os.path.join(path, "arm.c")
    with open(src, "w") as f:
        f.write("int arm_answer(void) { return 42; }\n")
    subprocess.run(["aarch64-linux-gnu-gcc", "-shared", "-fPIC", "-o",
                    os.path.join(path, "libeulernpu_arm.so"), src], check=True)
    os.remove(src)
    # A real plugin cut short, as an interrupted copy leaves it: the loader
    # would map its segments past the end of the file and die of SIGBUS.
    with open(os.path.join(PLUGIN_DIR, "libeulernpu_npu_sim.so"), "rb") as f:
        whole = f.read()
    for name, keep in (("libeulernpu_half.so", len(whole) // 2), ("libeulernpu_head.so", 4096)):
        with open(os.path.join(path, name), "wb") as f:
            f.write(whole[:keep])
    # A second copy of cpu_ref: the first one found wins, the other is named.
    shutil.copy(os.path.join(PLUGIN_DIR, "libeulernpu_cpu_ref.so"),
                os.path.join(path, "libeulernpu_cpu_ref_copy.so"))


class RejectedLibrariesTest(CliTestCase):
    def setUp(self):
        super().setUp()
        self.bad = self.path("plugins")
        make_bad_plugin_dir(self.bad)

    def rejected(self):
        r = self.ok("--plugin-dir", self.bad, "plugins", "--json")
        return {os.path.basename(x["path"]): x["reason"] for x in json.loads(r.stdout)["rejected"]}

    def test_each_bad_library_is_named_with_its_reason(self):
        reasons = self.rejected()
        self.assertIn("no enp_plugin_entry symbol", reasons["libnot_a_plugin.so"])
        self.assertIn("not an ELF shared library", reasons["libeulernpu_x.so"])
        self.assertIn("built for aarch64", reasons["libeulernpu_arm.so"])
        self.assertIn("ABI 2.0", reasons["libeulernpu_abi2.so"])
        self.assertIn("future_backend", reasons["libeulernpu_abi2.so"])
        self.assertIn("libenp_vanishing.so", reasons["libeulernpu_missing_dep.so"])
        self.assertIn("duplicates", reasons["libeulernpu_cpu_ref.so"])
        for cut in ("libeulernpu_half.so", "libeulernpu_head.so"):
            self.assertIn("a truncated or damaged ELF file", reasons[cut])
        self.assertEqual(len(reasons), 8)

    def test_world_writable_plugins_are_refused_unless_allowed(self):
        # Loading a plugin runs its code: a directory every user can write
        # to (or a library anyone can overwrite) is no place to load from.
        open_dir = self.path("open")
        os.mkdir(open_dir)
        os.chmod(open_dir, 0o777)
        shutil.copy(os.path.join(PLUGIN_DIR, "libeulernpu_npu_sim.so"),
                    os.path.join(open_dir, "libeulernpu_open.so"))
        shut = self.path("shut")
        os.mkdir(shut)
        lib = os.path.join(shut, "libeulernpu_writable.so")
        shutil.copy(os.path.join(PLUGIN_DIR, "libeulernpu_npu_sim.so"), lib)
        os.chmod(lib, 0o666)
        for d, name, why in ((open_dir, "libeulernpu_open.so", "is writable by every user"),
                             (shut, "libeulernpu_writable.so",
                              "the library is writable by every user")):
            r = self.ok("--plugin-dir", d, "plugins", "--json")
            rejected = {os.path.basename(x["path"]): x["reason"]
                        for x in json.loads(r.stdout)["rejected"]}
            self.assertIn(why, rejected[name])
            self.assertIn("--allow-insecure-plugin-dir", rejected[name])
            # Allowed, it loads (and the build's npu_sim is the duplicate).
            r = self.ok("--allow-insecure-plugin-dir", "--plugin-dir", d, "plugins", "--json")
            loaded = [os.path.basename(p["path"]) for p in json.loads(r.stdout)["plugins"]]
            self.assertIn(name, loaded)

    def test_text_listing_names_them_too(self):
        r = self.ok("--plugin-dir", self.bad, "plugins")
        for name in ("libnot_a_plugin.so", "libeulernpu_x.so", "libeulernpu_arm.so",
                     "libeulernpu_abi2.so", "libeulernpu_missing_dep.so"):
            self.assertIn(name, r.stdout)
        self.assertIn("Rejected libraries (8)", r.stdout)

    def test_other_commands_still_work(self):
        self.ok("--plugin-dir", self.bad, "validate", os.path.join(TINY_MLP, "spec.yaml"))
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        r = run("--plugin-dir", self.bad, "compile", "--spec", os.path.join(TINY_MLP, "spec.yaml"),
                "--weights", os.path.join(TINY_MLP, "weights.npz"), "--out", self.path("b"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.ok("--plugin-dir", self.bad, "run", "--artifact", self.path("b"), "--input",
                os.path.join(TINY_MLP, "input.npz"), "--out", self.path("r.npz"))
        self.ok("--plugin-dir", self.bad, "capabilities")



class PluginTableTest(CliTestCase):
    def test_long_names_keep_the_table_aligned(self):
        long_dir = os.path.join(FIXTURE_DIR, "long_name")
        r = self.ok("--plugin-dir", long_dir, "plugins")
        lines = r.stdout.splitlines()
        header = next(l for l in lines if l.strip().startswith("KIND"))
        rows = [l for l in lines if l.startswith("  frontend") or l.startswith("  backend")]
        self.assertTrue(any("vendor_frontend_with_a_long_name" in l for l in rows), r.stdout)
        # Every row's VERSION, ABI and PATH start where the header's do.
        for column in ("VERSION", "ABI", "PATH"):
            at = header.index(column)
            for row in rows:
                self.assertEqual(row[at - 1], " ", f"{column} misaligned in {row!r}")
                self.assertNotEqual(row[at], " ", f"{column} misaligned in {row!r}")


class DiscoveryOrderTest(CliTestCase):
    def loaded(self, *args, env=None):
        r = self.ok(*args, "plugins", "--json", env=env)
        return {p["name"]: p["path"] for p in json.loads(r.stdout)["plugins"]}

    def test_installed_plugins_are_found_beside_the_executable(self):
        loaded = self.loaded()
        self.assertEqual(os.path.dirname(loaded["cpu_ref"]), PLUGIN_DIR)
        self.assertIn("spec", loaded)

    def test_plugin_dir_beats_env_path_beats_installed(self):
        for d in ("first", "second"):
            os.makedirs(self.path(d))
            shutil.copy(os.path.join(PLUGIN_DIR, "libeulernpu_cpu_ref.so"), self.path(d))
        env = {"EULERNPU_PLUGIN_PATH": self.path("second")}
        self.assertEqual(self.loaded(env=env)["cpu_ref"],
                         self.path("second", "libeulernpu_cpu_ref.so"))
        self.assertEqual(self.loaded("--plugin-dir", self.path("first"), env=env)["cpu_ref"],
                         self.path("first", "libeulernpu_cpu_ref.so"))

    def test_search_path_is_reported_in_order(self):
        r = self.ok("--plugin-dir", "/nonexistent/a", "--plugin-dir", "/nonexistent/b", "plugins",
                    "--json", env={"EULERNPU_PLUGIN_PATH": "/nonexistent/c:/nonexistent/d"})
        origins = [(d["path"], d["origin"]) for d in json.loads(r.stdout)["search_path"]]
        self.assertEqual(origins[:4], [("/nonexistent/a", "--plugin-dir"),
                                       ("/nonexistent/b", "--plugin-dir"),
                                       ("/nonexistent/c", "EULERNPU_PLUGIN_PATH"),
                                       ("/nonexistent/d", "EULERNPU_PLUGIN_PATH")])
        self.assertEqual(origins[4], (PLUGIN_DIR, "installed"))


class CapabilitiesTest(CliTestCase):
    def test_json_matrix_comes_from_declarations(self):
        caps = json.loads(self.ok("capabilities", "--json").stdout)
        backends = {b["name"]: b for b in caps["backends"]}
        self.assertIn("cpu_ref", backends)
        ops = {o["op"] for o in backends["cpu_ref"]["ops"]}
        for op in ("Gemm", "MatMul", "Add", "Mul", "Relu", "Sigmoid", "Softmax"):
            self.assertIn(op, ops)
            self.assertIn("float32", caps["matrix"][op]["cpu_ref"])
        self.assertEqual(backends["cpu_ref"]["devices"][0]["core_modes"], ["single"])

    def test_filters(self):
        r = self.ok("capabilities", "--backend", "cpu_ref", "--op", "Gemm")
        rows = [l for l in r.stdout.splitlines() if l.startswith("Gemm")]
        self.assertEqual(len(rows), 1)
        self.assertIn("f32", rows[0])
        self.assertNotIn("Relu", r.stdout)
        caps = json.loads(self.ok("capabilities", "--op", "Relu", "--json").stdout)
        self.assertEqual(list(caps["matrix"]), ["Relu"])

    def test_unknown_backend_is_an_error(self):
        self.error("capabilities", "--backend", "nope", title="backend not found",
                   where="cpu_ref")


class HelpAndVersionTest(CliTestCase):
    COMMANDS = ("plugins", "capabilities", "validate", "compile", "run", "compare")

    def test_every_command_has_help(self):
        for command in self.COMMANDS:
            r = self.ok(command, "--help")
            self.assertIn("Usage:", r.stdout)
            self.assertIn("--help", r.stdout)

    def test_global_help_lists_commands(self):
        r = self.ok("--help")
        for command in self.COMMANDS:
            self.assertIn(command, r.stdout)

    def test_version(self):
        self.assertRegex(self.ok("--version").stdout, r"^eulernpu \d+\.\d+\.\d+ \(plugin ABI 1\.\d+\)\n$")

    def test_unknown_command_and_option(self):
        self.error("frobnicate", title="unknown command")
        self.error("compile", "--frob", title="invalid command line")
        self.error("--log-level", "loud", "plugins", title="invalid command line")

    def test_the_installed_directory_named_again_is_scanned_once(self):
        # Its plugins used to be rejected as duplicates of themselves.
        r = self.ok("--plugin-dir", PLUGIN_DIR, "plugins")
        self.assertIn("Rejected libraries (0):", r.stdout)
        self.assertEqual(r.stdout.count("libeulernpu_cpu_ref.so"), 1)

    def test_log_level_debug_goes_to_stderr(self):
        r = self.ok("--log-level", "debug", "--plugin-dir", "/nonexistent", "plugins")
        self.assertIn("does not exist", r.stderr)
        self.assertNotIn("[debug]", r.stdout)


class PluginFaultsTest(CliTestCase):
    """A backend that misbehaves on purpose (tests/fixtures/faulty_backend.cpp,
    one way per EULERNPU_FAULT): every fault is reported under the plugin's
    name, and nothing is left at the output path."""

    FAULTY = os.path.join(FIXTURE_DIR, "faulty")

    def faulty(self, fault, *args, **kw):
        return ("--plugin-dir", self.FAULTY, *args), {"env": {"EULERNPU_FAULT": fault}, **kw}

    def compiled(self):
        artifact = self.path("a")
        self.ok("--plugin-dir", self.FAULTY, "compile", "--spec",
                os.path.join(TINY_MLP, "spec.yaml"), "--weights",
                os.path.join(TINY_MLP, "weights.npz"), "--backend", "faulty", "--out", artifact)
        return artifact

    def run_args(self, artifact, out):
        return ("run", "--artifact", artifact, "--input", os.path.join(TINY_MLP, "input.npz"),
                "--out", out)

    def test_a_well_behaved_run_succeeds(self):
        # The fixture itself works when told no fault: the errors below are
        # the faults, not a broken fixture.
        out = self.path("r.npz")
        args, kw = self.faulty("", *self.run_args(self.compiled(), out))
        self.ok(*args, **kw)
        self.assertTrue(os.path.exists(out))

    def test_a_crash_in_run_names_the_plugin_and_its_function(self):
        artifact = self.compiled()
        out = self.path("r.npz")
        for fault, signal in (("crash_in_run", "SIGSEGV"), ("abort_in_run", "SIGABRT")):
            with self.subTest(fault=fault):
                args, kw = self.faulty(fault, *self.run_args(artifact, out))
                r, _ = self.error(*args, **kw, title="plugin crashed",
                                  where=f"plugin 'faulty' received {signal}")
                self.assertIn("in its run", r.stderr)
                self.assertEqual(r.returncode, 70)
                self.assert_absent(out)

    def test_an_exception_through_the_abi_is_an_error_naming_the_plugin(self):
        artifact = self.compiled()
        out = self.path("r.npz")
        for fault, what in (("throw_in_run", "an exception ('the faulty backend threw')"),
                            ("throw_int_in_run", "an exception that is not a std::exception")):
            with self.subTest(fault=fault):
                args, kw = self.faulty(fault, *self.run_args(artifact, out))
                r, _ = self.error(*args, **kw, title="plugin failed",
                                  where=f"plugin 'faulty' let {what} escape its run")
                self.assertEqual(r.returncode, 1)
                self.assert_absent(out)

    def test_outputs_of_the_wrong_shape_or_dtype_are_refused(self):
        artifact = self.compiled()
        out = self.path("r.npz")
        for fault, where in (("wrong_shape", "'probs' of shape (1, 5), declared (1, 4)"),
                             ("wrong_dtype", "'probs' as int8, declared float32")):
            with self.subTest(fault=fault):
                args, kw = self.faulty(fault, *self.run_args(artifact, out))
                self.error(*args, **kw, title="plugin returned invalid data",
                           where="backend 'faulty' returned output " + where)
                self.assert_absent(out)
        # A rank with no dimensions to read is refused, not dereferenced.
        args, kw = self.faulty("no_dims", *self.run_args(artifact, out))
        self.error(*args, **kw, title="plugin returned invalid data",
                   where="plugin 'faulty': output tensor 'probs': has a rank but no dimensions")
        self.assert_absent(out)

    def test_the_artifact_summary_reaches_the_manifest_and_a_bad_one_is_refused(self):
        artifact = self.compiled()
        with open(os.path.join(artifact, "manifest.json")) as f:
            self.assertEqual(json.load(f)["lowered"], {"faults": 0})
        self.assertIn("Lowered:\n  faults           0\n", self.ok("inspect", artifact).stdout)
        out = self.path("b")
        args, kw = self.faulty("bad_summary", "compile", "--spec",
                               os.path.join(TINY_MLP, "spec.yaml"), "--weights",
                               os.path.join(TINY_MLP, "weights.npz"), "--backend", "faulty",
                               "--out", out)
        self.error(*args, **kw, title="plugin returned invalid data",
                   where="plugin 'faulty': an artifact summary that is not a JSON object")
        self.assert_absent(out)

    def test_malformed_device_descriptions_are_errors_naming_the_plugin(self):
        for fault, where in (("null_device", "a null device description"),
                             ("small_device_info", "a device description of 8 bytes")):
            with self.subTest(fault=fault):
                args, kw = self.faulty(fault, "capabilities", "--backend", "faulty")
                r, _ = self.error(*args, **kw, title="plugin returned invalid data",
                                  where="plugin 'faulty': " + where)
                # Nothing of the table is printed before the error.
                self.assertEqual(r.stdout, "")

    def test_a_library_that_hangs_while_loading_is_rejected(self):
        args, kw = self.faulty("hang_in_initialize", "plugins", timeout=60)
        kw["env"]["EULERNPU_PLUGIN_LOAD_SECONDS"] = "2"
        r = self.ok(*args, **kw)
        rejected = r.stdout[r.stdout.index("Rejected libraries (1):"):]
        self.assertIn("it did not finish loading within 2 s", rejected)

    def test_faults_while_loading_reject_the_library_and_the_host_goes_on(self):
        # Discovery loads each library in a child first: one that crashes
        # there is rejected with the reason; cpu_ref still works.
        for fault, reason in (
                ("crash_in_entry", "while loading"),
                ("crash_in_initialize", "while loading"),
                ("throw_in_entry", "let an exception ('the faulty backend threw while loading') "
                                   "escape its enp_plugin_entry"),
                ("small_backend_table", "its backend table is smaller than ABI 1.0's"),
                ("null_run", "its function table is incomplete")):
            with self.subTest(fault=fault):
                args, kw = self.faulty(fault, "plugins")
                r = self.ok(*args, **kw)
                rejected = r.stdout[r.stdout.index("Rejected libraries (1):"):]
                self.assertIn("libeulernpu_faulty.so", rejected)
                self.assertIn(reason, rejected)
                args, kw = self.faulty(fault, "compile", "--spec",
                                       os.path.join(TINY_MLP, "spec.yaml"), "--weights",
                                       os.path.join(TINY_MLP, "weights.npz"), "--backend",
                                       "faulty", "--out", self.path("a"))
                self.error(*args, **kw, title="backend not found")
                self.assert_absent(self.path("a"))
                args, kw = self.faulty(fault, "compile", "--spec",
                                       os.path.join(TINY_MLP, "spec.yaml"), "--weights",
                                       os.path.join(TINY_MLP, "weights.npz"), "--out",
                                       self.path("b"))
                self.ok(*args, **kw)


if __name__ == "__main__":
    unittest.main()
