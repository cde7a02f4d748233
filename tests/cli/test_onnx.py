"""ONNX models through parse / inspect / compile: the IR file, dynamic
shapes, shape-arithmetic folding, external data, and bad files."""
import os
import shutil
import subprocess
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from harness import CliTestCase, run


def mlp_with_dynamic_reshape(opset=13, batch="N"):
    """x (N, 2, 4) -> Reshape to (N, 8) through Shape/Gather/Concat, as
    PyTorch exports `x.view(x.size(0), -1)` -> MatMul -> Add -> Relu."""
    rng = np.random.default_rng(7)
    w = (rng.integers(-4, 4, (8, 3)) / 4).astype(np.float32)
    b = (rng.integers(-4, 4, (3,)) / 4).astype(np.float32)
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        helper.make_node("Gather", ["shape", "zero"], ["n"], name="take_n", axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"] if opset >= 13 else ["n"], ["n1"],
                         name="unsq", **({} if opset >= 13 else {"axes": [0]})),
        helper.make_node("Concat", ["n1", "minus1"], ["new_shape"], name="cat", axis=0),
        helper.make_node("Reshape", ["x", "new_shape"], ["flat"], name="reshape"),
        helper.make_node("MatMul", ["flat", "w"], ["mm"], name="fc"),
        helper.make_node("Add", ["mm", "b"], ["pre"], name="bias"),
        helper.make_node("Relu", ["pre"], ["y"], name="relu"),
    ]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus1")]
    if opset >= 13:
        inits.append(numpy_helper.from_array(np.array([0], np.int64), "axes0"))
    graph = helper.make_graph(
        nodes, "dyn_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 3])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model, w, b


def reference(x, w, b):
    return np.maximum(x.reshape(x.shape[0], -1).astype(np.float64) @ w + b, 0).astype(np.float32)


class OnnxModelTest(CliTestCase):
    def save(self, model, name="model.onnx"):
        path = self.path(name)
        onnx.save(model, path)
        return path

    def test_parse_writes_a_checked_onnx_ir_with_provenance(self):
        model, _, _ = mlp_with_dynamic_reshape()
        src = self.save(model)
        r = self.ok("parse", "--model", src, "--output", self.path("m.mblt"),
                    "--input-shape", "x=2,2,4")
        self.assertIn("Parse    OK:", r.stdout)
        ir = onnx.load(self.path("m.mblt"))
        onnx.checker.check_model(ir, full_check=True)
        meta = {p.key: p.value for p in ir.metadata_props}
        self.assertEqual(meta["eulernpu.source"], "model.onnx")
        self.assertEqual(meta["eulernpu.input_shapes"], "x=2,2,4")
        self.assertIn("eulernpu.source_sha256", meta)
        # The Shape -> Gather -> Unsqueeze -> Concat chain folded away.
        self.assertEqual([n.op_type for n in ir.graph.node], ["Reshape", "MatMul", "Add", "Relu"])
        dims = [d.dim_value for d in ir.graph.output[0].type.tensor_type.shape.dim]
        self.assertEqual(dims, [2, 3])

    def test_parse_is_deterministic(self):
        src = self.save(mlp_with_dynamic_reshape()[0])
        for name in ("a.mblt", "b.mblt"):
            self.ok("parse", "--model", src, "--output", self.path(name), "--input-shape", "x=1,2,4")
        with open(self.path("a.mblt"), "rb") as a, open(self.path("b.mblt"), "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_dynamic_batch_compiles_per_shape_and_matches_numpy(self):
        for opset in (9, 11, 13, 17):
            model, w, b = mlp_with_dynamic_reshape(opset)
            src = self.save(model, f"m{opset}.onnx")
            for batch in (1, 3):
                with self.subTest(opset=opset, batch=batch):
                    x = np.random.default_rng(batch).standard_normal((batch, 2, 4)).astype(np.float32)
                    np.savez(self.path("in.npz"), x=x)
                    self.ok("compile", "--model", src, "--input-shape", f"x={batch},2,4",
                            "--out", self.path("art"))
                    self.ok("run", "--artifact", self.path("art"), "--input", self.path("in.npz"),
                            "--out", self.path("out.npz"))
                    got = np.load(self.path("out.npz"))["y"]
                    np.testing.assert_allclose(got, reference(x, w, b), rtol=1e-6, atol=1e-6)

    def test_compile_from_the_ir_file(self):
        model, w, b = mlp_with_dynamic_reshape()
        src = self.save(model)
        self.ok("parse", "--model", src, "--output", self.path("m.mblt"), "--input-shape", "x=2,2,4")
        self.ok("compile", "--mblt", self.path("m.mblt"), "--out", self.path("art"))
        x = np.ones((2, 2, 4), np.float32)
        np.savez(self.path("in.npz"), x=x)
        self.ok("run", "--artifact", self.path("art"), "--input", self.path("in.npz"),
                "--out", self.path("out.npz"))
        np.testing.assert_allclose(np.load(self.path("out.npz"))["y"], reference(x, w, b),
                                   rtol=1e-6)

    def test_dynamic_dimension_left_unfixed(self):
        src = self.save(mlp_with_dynamic_reshape()[0])
        out = self.path("art")
        # The model's own name for the open dimension, not a placeholder.
        self.error("compile", "--model", src, "--out", out, title="dynamic input shape",
                   where="'x' has shape (N, 2, 4)")
        self.assert_absent(out)
        r = run("inspect", src)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"x +float32 +\(N, 2, 4\)")
        self.assertRegex(r.stdout, r"y +float32 +\(N, 3\)")
        # The IR file keeps the names, so other ONNX tools show them too.
        mblt = self.path("m.mblt")
        self.assertEqual(run("parse", "--model", src, "--output", mblt).returncode, 0)
        parsed = onnx.load(mblt)
        self.assertEqual(parsed.graph.input[0].type.tensor_type.shape.dim[0].dim_param, "N")
        self.assertEqual(parsed.graph.output[0].type.tensor_type.shape.dim[0].dim_param, "N")

    def test_input_shape_errors(self):
        src = self.save(mlp_with_dynamic_reshape()[0])
        self.error("compile", "--model", src, "--input-shape", "z=1,2,4", "--out", self.path("a"),
                   title="input shape override does not fit", where="'z'")
        self.error("compile", "--model", src, "--input-shape", "x=1,3,4", "--out", self.path("a"),
                   title="input shape override does not fit")
        self.error("compile", "--model", src, "--input-shape", "x=1,two", "--out", self.path("a"),
                   title="invalid command line")
        self.error("compile", "--model", src, "--input-shape", "x", "--out", self.path("a"),
                   title="invalid command line")

    def test_inspect_names_each_unsupported_node(self):
        graph = helper.make_graph(
            [helper.make_node("Relu", ["m"], ["r"], name="act"),
             helper.make_node("NonZero", ["r"], ["d"], name="nonzero")],
            "g", [helper.make_tensor_value_info("m", TensorProto.FLOAT, [3, 3])],
            [helper.make_tensor_value_info("d", TensorProto.INT64, [2, 9])])
        src = self.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
        r = self.ok("inspect", src, "--backend", "cpu_ref")
        self.assertIn("cpu_ref        1/2 nodes supported", r.stdout)
        self.assertIn("node 'nonzero' (NonZero): has a data-dependent output shape", r.stdout)
        self.assertIn("Relu", r.stdout)
        self.assertIn("m                        float32  (3, 3)", r.stdout)
        self.error("compile", "--model", src, "--out", self.path("a"),
                   title="backend lowering missing for op NonZero", where="nonzero")

    def test_external_data_inside_the_model_directory(self):
        model, w, b = mlp_with_dynamic_reshape()
        os.makedirs(self.path("ext"))
        onnx.save_model(model, self.path("ext", "m.onnx"), save_as_external_data=True,
                        all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
        self.ok("compile", "--model", self.path("ext", "m.onnx"), "--input-shape", "x=1,2,4",
                "--out", self.path("art"))
        # A model whose external data escapes its directory is refused.
        m = onnx.load(self.path("ext", "m.onnx"), load_external_data=False)
        for t in m.graph.initializer:
            for kv in t.external_data:
                if kv.key == "location":
                    kv.value = "../weights.bin"
        onnx.save(m, self.path("ext", "escape.onnx"))
        shutil.copy(self.path("ext", "weights.bin"), self.path("weights.bin"))
        self.error("compile", "--model", self.path("ext", "escape.onnx"), "--input-shape",
                   "x=1,2,4", "--out", self.path("b"), title="onnx external data is invalid")
        self.assert_absent(self.path("b"))

    def test_corrupt_and_unsupported_models(self):
        src = self.save(mlp_with_dynamic_reshape()[0])
        with open(src, "rb") as f:
            data = f.read()
        with open(self.path("trunc.onnx"), "wb") as f:
            f.write(data[: len(data) // 2])
        self.error("parse", "--model", self.path("trunc.onnx"), "--output", self.path("t.mblt"),
                   title="onnx model is corrupt")
        self.assert_absent(self.path("t.mblt"))
        model = mlp_with_dynamic_reshape()[0]
        model.opset_import[0].version = 5
        self.error("parse", "--model", self.save(model, "old.onnx"), "--output",
                   self.path("o.mblt"), title="unsupported onnx opset")
        self.error("compile", "--mblt", self.path("missing.mblt"), "--out", self.path("a"),
                   title="file not found")
        # A model whose values would take terabytes compiles no more (it used
        # to, and run then called the artifact corrupt).
        huge = mlp_with_dynamic_reshape()[0]
        self.error("compile", "--model", self.save(huge, "huge.onnx"), "--input-shape",
                   "x=1099511627776,2,4", "--out", self.path("h"),
                   title="model tensor exceeds a size limit", where="more than 64 GiB")
        self.assert_absent(self.path("h"))
        # ir_version unset (0) or beyond any exporter's: refused, as a model
        # and as an IR file alike, instead of compiling.
        for ir_version, where in ((0, "has no IR version"), (99, "has IR version 99")):
            model = mlp_with_dynamic_reshape()[0]
            model.ir_version = ir_version
            path = self.save(model, f"ir{ir_version}.onnx")
            self.error("parse", "--model", path, "--output", self.path("v.mblt"),
                       title="unsupported onnx IR version", where=where)
            self.error("compile", "--mblt", path, "--out", self.path("a"),
                       title="unsupported onnx IR version", where=where)
            self.assert_absent(self.path("v.mblt"))
            self.assert_absent(self.path("a"))


if __name__ == "__main__":
    unittest.main()
