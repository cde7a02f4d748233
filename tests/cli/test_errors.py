"""Bad input of every kind: a three-line error with its docs anchor, a
non-zero exit, and nothing left at the output path."""
import io
import json
import os
import shutil
import unittest

import numpy as np

from harness import SANITIZED, TINY_MLP, CliTestCase, compile_tiny_mlp, rehash_manifest

SPEC = os.path.join(TINY_MLP, "spec.yaml")
WEIGHTS = os.path.join(TINY_MLP, "weights.npz")
INPUT = os.path.join(TINY_MLP, "input.npz")
GOLDEN = os.path.join(TINY_MLP, "golden.npz")


def load(path):
    with np.load(path) as f:
        return {k: f[k] for k in f.keys()}


class SpecErrorTest(CliTestCase):
    """Spec problems: `compile` fails and leaves no artifact."""

    def write_spec(self, text, name="spec.yaml"):
        path = self.path(name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def spec_with(self, old, new):
        with open(SPEC) as f:
            text = f.read()
        self.assertIn(old, text)
        return self.write_spec(text.replace(old, new))

    def compile_error(self, spec, title, where=None, weights=WEIGHTS):
        out = self.path("artifact")
        self.error("compile", "--spec", spec, "--weights", weights, "--out", out,
                   title=title, where=where)
        self.assert_absent(out)

    def test_weights_tensor_shape_mismatch_is_the_seed_message(self):
        w = load(WEIGHTS)
        w["fc1.weight"] = np.ascontiguousarray(w["fc1.weight"].T)
        np.savez(self.path("w.npz"), **w)
        self.compile_error(SPEC, "weights tensor shape mismatch",
                           "op 'fc1' (component 'hidden') expects weight (16, 8); "
                           "w.npz has 'fc1.weight' (8, 16)",
                           weights=self.path("w.npz"))
        self.error("validate", SPEC, "--weights", self.path("w.npz"),
                   title="weights tensor shape mismatch")

    def test_unknown_weight_key(self):
        spec = self.spec_with("key: fc2.bias", "key: fc2.bais")
        self.compile_error(spec, "weights tensor not found", "needs 'fc2.bais'")

    def test_weight_with_wrong_dtype(self):
        w = load(WEIGHTS)
        w["fc2.bias"] = w["fc2.bias"].astype(np.float64)
        np.savez(self.path("w.npz"), **w)
        self.compile_error(SPEC, "weights tensor dtype mismatch", "float64",
                           weights=self.path("w.npz"))

    def test_unknown_op(self):
        spec = self.spec_with("op: Relu", "op: ReLU")
        self.compile_error(spec, "unknown operator", "relu1")
        self.error("validate", spec, title="unknown operator")

    def test_cycle(self):
        # relu1 now reads the output of bias2, which depends on relu1.
        spec = self.spec_with("inputs: [h]\n", "inputs: [logits]\n")
        self.compile_error(spec, "graph has a cycle")

    def test_reference_to_unknown_tensor(self):
        spec = self.spec_with("inputs: [z]", "inputs: [zz]")
        self.compile_error(spec, "graph references an unknown tensor", "'zz'")

    def test_invalid_yaml(self):
        self.compile_error(self.write_spec("inputs: [x\n  - : :\n"), "spec is not valid YAML")

    def test_structure_errors_name_the_line(self):
        spec = self.spec_with("    shape: [1, 8]", "    shape: [1, eight]")
        self.compile_error(spec, "spec structure is invalid", "spec.yaml:9")
        spec = self.spec_with("op: Gemm", "opp: Gemm")
        self.compile_error(spec, "spec structure is invalid", "unknown key 'opp'")

    def test_a_repeated_key_or_a_second_document_is_refused(self):
        # yaml-cpp keeps the first of two equal keys and drops a second
        # document: an edit that seems to change the model would change nothing.
        spec = self.spec_with("        attributes: {transB: 1}",
                              "        attributes: {transB: 1, transB: 0}")
        self.compile_error(spec, "spec structure is invalid",
                           "spec.yaml:21: key 'transB' appears twice")
        spec = self.spec_with("opset: 17\n", "opset: 17\nopset: 13\n")
        self.compile_error(spec, "spec structure is invalid", "key 'opset' appears twice")
        with open(SPEC) as f:
            text = f.read()
        self.compile_error(self.write_spec(text + "---\nname: other\n"),
                           "spec structure is invalid", "holds 2 YAML documents")

    def test_unknown_dtype_lists_the_valid_ones(self):
        spec = self.spec_with("    dtype: float32", "    dtype: float128")
        r, m = self.error("compile", "--spec", spec, "--weights", WEIGHTS, "--out",
                          self.path("a"), title="spec structure is invalid", where="float128")
        for name in ("bfloat16", "uint16", "uint32", "uint64", "bool"):
            self.assertIn(name, m["where"])

    def test_duplicate_operator_name(self):
        spec = self.spec_with("name: relu1", "name: fc1")
        self.compile_error(spec, "duplicate name in spec", "'fc1'")

    def test_shape_mismatch_between_operators(self):
        spec = self.spec_with("{key: fc2.weight, shape: [16, 4]}", "{key: fc2.weight, shape: [8, 4]}")
        w = load(WEIGHTS)
        w["fc2.weight"] = w["fc2.weight"][:8]
        np.savez(self.path("w.npz"), **w)
        self.compile_error(spec, "operator shape mismatch", "fc2", weights=self.path("w.npz"))

    def test_backend_lowering_missing(self):
        # NonZero is an ONNX operator cpu_ref cannot lower: its output shape
        # depends on the data.
        spec = self.write_spec(
            "name: nz\ninputs:\n  - {name: m, shape: [3, 3]}\n"
            "outputs:\n  - {name: d, dtype: int64, shape: [2, 9]}\n"
            "components:\n  - name: only\n    operators:\n"
            "      - {name: nz1, op: NonZero, inputs: [m], outputs: [d]}\n")
        r, m = self.error("validate", spec, title="backend lowering missing for op NonZero",
                          where="nz1")
        self.assertEqual(m["anchor"], "backend-lowering-missing-for-op-x")
        self.assertIn("data-dependent output shape", m["where"])
        self.assertIn("eulernpu capabilities", m["fix"])
        self.compile_error(spec, "backend lowering missing for op NonZero")

    def test_compile_without_weights(self):
        out = self.path("artifact")
        self.error("compile", "--spec", SPEC, "--out", out, title="weights not provided")
        self.assert_absent(out)

    def test_missing_spec_and_weights_files(self):
        self.compile_error(self.path("nope.yaml"), "file not found")
        self.compile_error(SPEC, "file not found", weights=self.path("nope.npz"))

    def test_output_path_in_the_way(self):
        with open(self.path("artifact"), "w") as f:
            f.write("precious")
        self.error("compile", "--spec", SPEC, "--weights", WEIGHTS, "--out", self.path("artifact"),
                   title="output path is in the way")
        with open(self.path("artifact")) as f:
            self.assertEqual(f.read(), "precious")
        # A link to an earlier artifact directory is not replaced either
        # (it used to be swapped for a new directory), nor is what it
        # points to touched.
        self.assertEqual(compile_tiny_mlp(self.path("real")).returncode, 0)
        os.symlink(self.path("real"), self.path("link"))
        before = sorted(os.listdir(self.path("real")))
        self.error("compile", "--spec", SPEC, "--weights", WEIGHTS, "--out", self.path("link"),
                   title="output path is in the way", where="is a symbolic link")
        self.assertTrue(os.path.islink(self.path("link")))
        self.assertEqual(sorted(os.listdir(self.path("real"))), before)


class IrFileAsModelTest(CliTestCase):
    """An IR file given as a source model: the error names the option that reads it."""

    def test_mblt_given_to_model_points_at_mblt(self):
        mblt = self.path("mlp.mblt")
        self.ok("parse", "--spec", SPEC, "--weights", WEIGHTS, "--output", mblt)
        out = self.path("a.art")
        _, m = self.error("compile", "--model", mblt, "--out", out,
                          title="no frontend for this model", where="is an IR file")
        self.assertIn("--mblt " + mblt, m["fix"])
        self.assert_absent(out)
        _, m = self.error("parse", "--model", mblt, "--output", self.path("again.mblt"),
                          title="no frontend for this model")
        self.assertIn("eulernpu compile --mblt", m["fix"])
        # --mblt reads it.
        self.ok("compile", "--mblt", mblt, "--out", out)


class NpzErrorTest(CliTestCase):
    def truncated(self, source, keep):
        path = self.path("truncated.npz")
        with open(source, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(data[:keep])
        return path

    def test_truncated_weights(self):
        out = self.path("artifact")
        for keep in (0, 10, 100, os.path.getsize(WEIGHTS) - 30):
            self.error("compile", "--spec", SPEC, "--weights", self.truncated(WEIGHTS, keep),
                       "--out", out, title="npz file is corrupt")
            self.assert_absent(out)

    def test_run_errors_leave_no_result(self):
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        out = self.path("r.npz")

        def run_error(input_path, title, where=None):
            self.error("run", "--artifact", self.path("a"), "--input", input_path,
                       "--out", out, title=title, where=where)
            self.assert_absent(out)

        run_error(self.path("missing.npz"), "file not found")
        run_error(self.truncated(INPUT, 50), "npz file is corrupt")
        np.savez(self.path("f64.npz"), x=load(INPUT)["x"].astype(np.float64))
        run_error(self.path("f64.npz"), "input tensor dtype mismatch", "float64")
        np.savez(self.path("shape.npz"), x=np.zeros((2, 8), np.float32))
        run_error(self.path("shape.npz"), "input tensor shape mismatch", "(2, 8)")
        np.savez(self.path("key.npz"), y=load(INPUT)["x"])
        run_error(self.path("key.npz"), "input tensor key not found", "'x'")
        np.savez(self.path("extra.npz"), x=load(INPUT)["x"], extra=np.zeros(1, np.float32))
        run_error(self.path("extra.npz"), "input tensor not in model", "'extra'")

    def test_outputs_never_replace_links_devices_fifos_or_other_files(self):
        # A rename replaces whatever the path names: as root, --out /dev/full
        # would have become a regular file. Every output refuses instead.
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        with open(self.path("notes.txt"), "w") as f:
            f.write("precious")
        os.symlink(self.path("notes.txt"), self.path("link.npz"))
        os.mkfifo(self.path("fifo.json"))
        run = ("run", "--artifact", self.path("a"), "--input", INPUT)
        for out in (self.path("link.npz"), "/dev/full", self.path("notes.txt")):
            self.error(*run, "--out", out, title="output path is in the way")
        # The reports: npu_sim's run report, and the quantization report.
        calib = self.path("calib")
        os.mkdir(calib)
        shutil.copy(INPUT, calib)
        self.assertEqual(compile_tiny_mlp(self.path("npu"), "--backend", "npu_sim",
                                          "--calib-data-path", calib).returncode, 0)
        self.error("run", "--artifact", self.path("npu"), "--input", INPUT, "--out",
                   self.path("r.npz"), "--report", self.path("fifo.json"),
                   title="output path is in the way")
        self.assert_absent(self.path("r.npz"))
        self.error("compile", "--spec", SPEC, "--weights", WEIGHTS, "--calib-data-path", calib,
                   "--report", self.path("notes.txt"), "--out", self.path("q"),
                   title="output path is in the way")
        self.assert_absent(self.path("q"))
        self.error("parse", "--spec", SPEC, "--weights", WEIGHTS, "--output",
                   self.path("link.npz"), title="output path is in the way")
        self.assertTrue(os.path.islink(self.path("link.npz")))
        self.assertFalse(os.path.isfile("/dev/full") and not os.path.islink("/dev/full"))
        with open(self.path("notes.txt")) as f:
            self.assertEqual(f.read(), "precious")
        # An earlier output of the same kind is replaced.
        self.ok(*run, "--out", self.path("r.npz"))
        self.ok(*run, "--out", self.path("r.npz"))

    def test_a_nul_byte_in_user_text_keeps_the_whole_error(self):
        # It used to end the message before its fix: and See: lines.
        listing = self.path("calib.txt")
        with open(listing, "wb") as f:
            f.write(b"sam\x00ple.npz\n")
        _, m = self.error("compile", "--spec", SPEC, "--weights", WEIGHTS, "--calib-data-path",
                          listing, "--out", self.path("q"), title="calibration data not found")
        self.assertIn("sam\\x00ple.npz", m["where"])
        self.assert_absent(self.path("q"))

    def test_a_member_larger_than_its_header_says_is_refused_before_it_is_inflated(self):
        # A zip bomb behind a small array's header: 700 MB of zeros after a
        # header for 8 floats. The header is read from the first chunk, so
        # the size mismatch is found under a 600 MB address space instead of
        # running out of memory.
        import zipfile
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "<f4", "fortran_order": False, "shape": (8,)})
        bomb = self.path("bomb.npz")
        with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
            with z.open("x.npy", "w", force_zip64=True) as f:
                f.write(header.getvalue())
                zeros = bytes(1 << 24)
                for _ in range(700 // 16):
                    f.write(zeros)
        kw = {} if SANITIZED else {"memory_limit": 600 * 1024 * 1024}
        out = self.path("q")
        self.error("compile", "--spec", SPEC, "--weights", bomb, "--out", out,
                   title="npy array is malformed", where="data is 721420288 bytes, but shape (8,) of float32 needs 32",
                   **kw)
        self.assert_absent(out)

    def test_limits_are_set_by_environment_variables(self):
        # docs/errors.md#limits: a bound can be changed for one command, and
        # a value that is not a size is an error naming the variable.
        out = self.path("q")
        self.error("compile", "--spec", SPEC, "--weights", WEIGHTS, "--out", out,
                   title="npz file exceeds a size limit", where="the limit is 1",
                   env={"EULERNPU_MAX_NPZ_MEMBERS": "1"})
        self.error("compile", "--spec", SPEC, "--weights", WEIGHTS, "--out", out,
                   title="npz file exceeds a size limit", where="the limit is 100",
                   env={"EULERNPU_MAX_NPZ_MEMBER_BYTES": "100"})
        for bad in ("lots", "0", "12Q", "99999999999999999999", "1T1"):
            with self.subTest(value=bad):
                self.error("compile", "--spec", SPEC, "--weights", WEIGHTS, "--out", out,
                           title="invalid limit setting", where=f"EULERNPU_MAX_NPZ_MEMBERS='{bad}'",
                           env={"EULERNPU_MAX_NPZ_MEMBERS": bad})
        self.assert_absent(out)
        self.ok("compile", "--spec", SPEC, "--weights", WEIGHTS, "--out", out,
                env={"EULERNPU_MAX_NPZ_MEMBERS": "4", "EULERNPU_MAX_NPZ_MEMBER_BYTES": "1K",
                     "EULERNPU_MAX_NPZ_TOTAL_BYTES": "1M"})

    def test_running_out_of_memory_is_a_three_line_error(self):
        # 600 KB of npz that inflates to 600 MB, read as weights under a
        # 600 MB address space: an "out of memory" error with exit status 1,
        # not an internal error, and nothing left behind.
        import zipfile
        n = 600 * 1024 * 1024 // 4
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "<f4", "fortran_order": False, "shape": (n,)})
        bomb = self.path("bomb.npz")
        with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
            with z.open("x.npy", "w", force_zip64=True) as f:
                f.write(header.getvalue())
                zeros = bytes(1 << 24)
                for left in range(n * 4, 0, -len(zeros)):
                    f.write(zeros[:min(left, len(zeros))])
        out = self.path("q")
        r, _ = self.error("compile", "--spec", SPEC, "--weights", bomb, "--out", out,
                          title="out of memory", memory_limit=600 * 1024 * 1024)
        self.assertEqual(r.returncode, 1)
        self.assert_absent(out)
        # As run's input, no file may hold more than the model's inputs: the
        # bomb is refused by its zip directory, before anything is inflated
        # (inflated, it would fail on its shape instead).
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        self.error("run", "--artifact", self.path("a"), "--input", bomb, "--out",
                   self.path("r.npz"), title="npz file exceeds a size limit",
                   where="take more than")
        self.assert_absent(self.path("r.npz"))

    def test_a_symlink_inside_an_artifact_is_not_followed(self):
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        weights = self.path("a", "weights", "cpu_ref.npz")
        os.rename(weights, self.path("elsewhere.npz"))
        os.symlink(self.path("elsewhere.npz"), weights)
        out = self.path("r.npz")
        self.error("run", "--artifact", self.path("a"), "--input", INPUT, "--out", out,
                   title="artifact path escapes the artifact", where="is a symbolic link")
        self.assert_absent(out)
        # A linked directory too.
        os.remove(weights)
        os.rename(self.path("a", "weights"), self.path("wdir"))
        os.symlink(self.path("wdir"), self.path("a", "weights"))
        os.rename(self.path("elsewhere.npz"), self.path("wdir", "cpu_ref.npz"))
        self.error("run", "--artifact", self.path("a"), "--input", INPUT, "--out", out,
                   title="artifact path escapes the artifact", where="weights' is a symbolic")

    def test_an_edited_file_of_a_directory_artifact_is_corrupt(self):
        # Directory artifacts are checked against manifest.json's sha256, as
        # packed ones are: an edit is refused before a backend reads it.
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        with open(self.path("a", "plan.json")) as f:
            plan = f.read()
        with open(self.path("a", "plan.json"), "w") as f:
            f.write(plan.replace('"arena_bytes": 128', '"arena_bytes": 129'))
        out = self.path("r.npz")
        self.error("run", "--artifact", self.path("a"), "--input", INPUT, "--out", out,
                   title="artifact is corrupt", where="plan.json' differs from the sha256")
        self.assert_absent(out)

    def test_a_node_missing_operands_is_a_corrupt_artifact(self):
        # A hand-edited graph.json whose node lost its inputs or outputs
        # used to crash the kernels. The manifest is recomputed: a sha256
        # proves integrity, not validity.
        out = self.path("r.npz")
        for field, where in (("inputs", "has 0 inputs; it takes at least"),
                             ("outputs", "has 0 outputs; it takes at least 1")):
            self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
            with open(self.path("a", "graph.json")) as f:
                graph = json.load(f)
            graph["nodes"][0][field] = []
            with open(self.path("a", "graph.json"), "w") as f:
                json.dump(graph, f)
            rehash_manifest(self.path("a"))
            self.error("run", "--artifact", self.path("a"), "--input", INPUT, "--out", out,
                       title="artifact is corrupt", where=where)
            self.assert_absent(out)

    def test_hand_edited_plans_are_corrupt_before_anything_runs(self):
        # Each edit keeps valid JSON; each used to run to wrong outputs, or
        # to an internal error for a field of the wrong type.
        def plan_edit(plan):
            plan["schedule"] = []
        def repeated(plan):
            plan["schedule"] = [0, 0, 1, 2, 3]
        def out_of_order(plan):
            plan["schedule"] = [1, 0, 2, 3, 4]
        def overlap(plan):
            next(b for b in plan["buffers"] if b["tensor"] == "h")["offset"] = 0
        def float_offset(plan):
            plan["buffers"][1]["offset"] = 64.5
        def misaligned(plan):
            # Found by fuzzing: kernels loaded misaligned floats from it.
            next(b for b in plan["buffers"] if b["offset"] > 0)["offset"] -= 4
        def graph_edit(graph):
            graph["nodes"][0]["name"] = 5
        edits = [("plan.json", plan_edit, "the schedule has 0 steps for 5 nodes"),
                 ("plan.json", repeated, "runs node 0 twice"),
                 ("plan.json", out_of_order, "reads 'h' before any step produces it"),
                 ("plan.json", overlap, "overlap while both are live"),
                 ("plan.json", float_offset, "'offset' is not an integer"),
                 ("plan.json", misaligned, "is not aligned to 64 bytes"),
                 ("graph.json", graph_edit, "'name' is not a string")]
        out = self.path("r.npz")
        for file, edit, where in edits:
            with self.subTest(where=where):
                self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
                with open(self.path("a", file)) as f:
                    j = json.load(f)
                edit(j)
                with open(self.path("a", file), "w") as f:
                    json.dump(j, f)
                rehash_manifest(self.path("a"))
                self.error("run", "--artifact", self.path("a"), "--input", INPUT, "--out", out,
                           title="artifact is corrupt", where=where)
                self.assert_absent(out)

    def test_broken_artifact(self):
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        out = self.path("r.npz")
        args = ("run", "--artifact", self.path("a"), "--input", INPUT, "--out", out)
        self.error("run", "--artifact", self.path("nope"), "--input", INPUT, "--out", out,
                   title="file not found")
        with open(self.path("a", "graph.json"), "w") as f:
            f.write('{"format": "eulernpu-cpu_ref-graph", "version": 1, "tensors": {"x": 5}}')
        self.error(*args, title="artifact is corrupt")
        with open(self.path("a", "graph.json"), "w") as f:
            f.write("{not json")
        self.error(*args, title="artifact is corrupt")
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        os.remove(self.path("a", "plan.json"))
        self.error(*args, title="artifact file missing", where="plan.json")
        with open(self.path("a", "manifest.json"), "w") as f:
            f.write("[]")
        self.error(*args, title="artifact manifest is corrupt")
        self.assert_absent(out)
        # Declarations of the wrong type are named, not a JSON type error.
        for edit, where in ((lambda m: m["inputs"][0].update(shape=["a", 4]), "inputs[0].shape"),
                            (lambda m: m["outputs"][0].pop("name"), "outputs[0]"),
                            (lambda m: m.update(core_mode=3), "core_mode")):
            self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
            with open(self.path("a", "manifest.json")) as f:
                m = json.load(f)
            edit(m)
            with open(self.path("a", "manifest.json"), "w") as f:
                json.dump(m, f)
            self.error(*args, title="artifact manifest is corrupt", where=where)
            self.assert_absent(out)

    def test_artifact_with_huge_plan_is_refused(self):
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        with open(self.path("a", "plan.json")) as f:
            plan = f.read()
        with open(self.path("a", "plan.json"), "w") as f:
            f.write(plan.replace('"arena_bytes": 128', '"arena_bytes": 99999999999999999'))
        self.error("run", "--artifact", self.path("a"), "--input", INPUT, "--out",
                   self.path("r.npz"), title="artifact is corrupt")

    def test_plan_naming_a_weights_file_outside_the_artifact_is_refused(self):
        # plan.json names its weights file: the host refuses a path that
        # leaves the artifact, whatever the file says; no name is corrupt.
        self.assertEqual(compile_tiny_mlp(self.path("a")).returncode, 0)
        with open(self.path("a", "plan.json")) as f:
            plan = f.read()
        self.assertIn('"file": "weights/cpu_ref.npz"', plan)
        cases = [("../weights.npz", "artifact path escapes the artifact", "'..' part"),
                 ("/etc/weights.npz", "artifact path escapes the artifact", "absolute"),
                 ("weights/./cpu_ref.npz", "artifact path escapes the artifact", "'.'"),
                 ("weights/other.npz", "artifact file missing", "weights/other.npz"),
                 ("", "artifact is corrupt", "plan.json names no weights file")]
        for bad, title, where in cases:
            with open(self.path("a", "plan.json"), "w") as f:
                f.write(plan.replace('"file": "weights/cpu_ref.npz"',
                                     json.dumps({"file": bad})[1:-1]))
            rehash_manifest(self.path("a"))
            self.error("run", "--artifact", self.path("a"), "--input", INPUT, "--out",
                       self.path("r.npz"), title=title, where=where)
            self.assert_absent(self.path("r.npz"))


class CompareErrorTest(CliTestCase):
    def test_golden_tensor_key_not_found(self):
        np.savez(self.path("g.npz"), logits=load(GOLDEN)["probs"])
        r, m = self.error("compare", "--got", GOLDEN, "--expected", self.path("g.npz"),
                          title="golden tensor key not found", where="'logits'")
        self.assertIn("MISSING", r.stdout)

    def test_extra_result_key_fails_too(self):
        g = load(GOLDEN)
        np.savez(self.path("r.npz"), probs=g["probs"], extra=g["probs"])
        self.error("compare", "--got", self.path("r.npz"), "--expected", GOLDEN,
                   title="result tensor key not in golden")

    def test_values_beyond_tolerance(self):
        g = load(GOLDEN)["probs"].copy()
        g[0, 3] += np.float32(0.5)
        np.savez(self.path("r.npz"), probs=g)
        r, m = self.error("compare", "--got", self.path("r.npz"), "--expected", GOLDEN,
                          title="tensor values differ beyond tolerance", where="(0, 3)")
        self.assertIn("FAIL", r.stdout)
        # Within a looser tolerance it passes, and says so.
        r = self.ok("compare", "--got", self.path("r.npz"), "--expected", GOLDEN, "--tol", "0.6")
        self.assertRegex(r.stdout, r"^Compare  OK: 1 tensor · max abs diff 0\.5 < tol 0\.6\n$")

    def test_shape_mismatch(self):
        np.savez(self.path("r.npz"), probs=np.zeros((4,), np.float32))
        self.error("compare", "--got", self.path("r.npz"), "--expected", GOLDEN,
                   title="tensor shape mismatch")

    def test_nan_matches_nan_only(self):
        a = np.array([1.0, np.nan, np.inf], np.float32)
        np.savez(self.path("a.npz"), t=a)
        self.ok("compare", "--got", self.path("a.npz"), "--expected", self.path("a.npz"),
                "--tol", "0")
        np.savez(self.path("b.npz"), t=np.array([1.0, 2.0, np.inf], np.float32))
        self.error("compare", "--got", self.path("b.npz"), "--expected", self.path("a.npz"),
                   title="tensor values differ beyond tolerance")

    def test_float64_golden_against_float32_result(self):
        np.savez(self.path("g64.npz"), probs=load(GOLDEN)["probs"].astype(np.float64))
        self.ok("compare", "--got", GOLDEN, "--expected", self.path("g64.npz"))

    def test_bad_tolerance_and_missing_options(self):
        self.error("compare", "--got", GOLDEN, "--expected", GOLDEN, "--tol", "-1",
                   title="invalid command line")
        self.error("compare", "--got", GOLDEN, title="missing required option")


if __name__ == "__main__":
    unittest.main()


class RunReportErrorTest(CliTestCase):
    def test_a_backend_without_run_report(self):
        art = self.path("a")
        self.assertEqual(compile_tiny_mlp(art).returncode, 0)
        self.error("run", "--artifact", art, "--estimate-only",
                   title="backend has no run report", where="cpu_ref")
        out, report = self.path("r.npz"), self.path("r.json")
        self.error("run", "--artifact", art, "--input", os.path.join(TINY_MLP, "input.npz"),
                   "--out", out, "--report", report,
                   title="backend has no run report", where="cpu_ref")
        self.assert_absent(report)
        self.assert_absent(out)
