"""CPU head / NPU body / CPU tail (docs/partitions.md): nodes the backend
cannot lower run on cpu_ref, at the head, the tail and inside; the
artifact records each partition and the values crossing each boundary;
`run` chains them, with int8 outputs byte-identical to an all-cpu_ref run
of the same quantized graph; --cpu-offload edges and none refuse what they
do not allow, with a short where: line; --extract-npu-body writes the
accelerator part as an IR file.
"""
import json
import os
import shutil
import unittest

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from harness import SOURCE_DIR, CliTestCase

DIGITS = os.path.join(SOURCE_DIR, "examples", "digits")
CALIB = os.path.join(DIGITS, "calib")
FC2_FLOAT = os.path.join(SOURCE_DIR, "examples", "configs", "mlp_fc2_float.yaml")
N = 400
MLP = ("--model", os.path.join(DIGITS, "mlp.onnx"), "--input-shape", f"input={N},1,8,8",
       "--calib-data-path", CALIB)


def head_and_tail_model():
    """Sin (no int8 form: cpu_ref head) -> Conv -> Relu -> Conv -> Cos
    (cpu_ref tail): the int8 body between them is npu_sim's."""
    rng = np.random.default_rng(21)
    w1 = nh.from_array(rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32), "w1")
    w2 = nh.from_array(rng.normal(0, 0.3, (4, 8, 3, 3)).astype(np.float32), "w2")
    nodes = [h.make_node("Sin", ["x"], ["s"], "head"),
             h.make_node("Conv", ["s", "w1"], ["c1"], "conv1", pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c1"], ["r1"], "relu1"),
             h.make_node("Conv", ["r1", "w2"], ["c2"], "conv2", pads=[1, 1, 1, 1]),
             h.make_node("Cos", ["c2"], ["y"], "tail")]
    g = h.make_graph(nodes, "head_tail", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 8, 8])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 8, 8])], [w1, w2])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 7
    return m


class PartitionTest(CliTestCase):
    def read_bytes(self, path):
        with open(path, "rb") as f:
            return f.read()

    def manifest(self, art):
        with open(os.path.join(art, "manifest.json"), encoding="utf-8") as f:
            return json.load(f)

    # --- a float32 island inside the int8 graph ------------------------------

    def test_interior_partition_runs_byte_identical_to_cpu_ref(self):
        npu, ref = self.path("npu"), self.path("ref")
        r = self.ok("compile", *MLP, "--config", FC2_FLOAT, "--backend", "npu_sim", "--out", npu)
        self.assertIn("3 partitions: npu_sim 3 nodes → cpu_ref (host) 4 nodes → npu_sim 2 nodes",
                      r.stdout)
        self.ok("compile", *MLP, "--config", FC2_FLOAT, "--out", ref)
        m = self.manifest(npu)
        parts = m["partitions"]
        self.assertEqual([(p["backend"]["name"], p["offloaded"]) for p in parts],
                         [("npu_sim", False), ("cpu_ref", True), ("npu_sim", False)])
        # The int8 values crossing each boundary, with their quantization.
        self.assertEqual([b["name"] for b in parts[0]["outputs"]], ["fc1.relu_int8"])
        self.assertEqual(parts[0]["outputs"], parts[1]["inputs"])
        self.assertEqual(parts[1]["outputs"], parts[2]["inputs"])
        for b in parts[0]["outputs"] + parts[1]["outputs"]:
            self.assertEqual(b["dtype"], "int8")
            self.assertGreater(b["scale"], 0)
            self.assertIn("zero_point", b)
        self.assertEqual(sorted(n["node"] for n in m["offloaded_nodes"]),
                         sorted(set(n["node"] for n in m["offloaded_nodes"])))
        for p in parts:
            self.assertTrue(os.path.isfile(os.path.join(npu, p["dir"], "graph.json")), p["dir"])
            # Each partition's arena, as the kit planned it for the run on
            # the host (npu_sim keeps that plan beside its NPU plan).
            plan = "functional/plan.json" if p["backend"]["name"] == "npu_sim" else "plan.json"
            with open(os.path.join(npu, p["dir"], plan), encoding="utf-8") as f:
                self.assertEqual(p["lowered"]["arena_bytes"], json.load(f)["arena_bytes"])
        self.assertNotIn("lowered", m)
        r = self.ok("inspect", npu)
        self.assertIn("Partitions:\n  p0.npu_sim (npu_sim)\n    ops ", r.stdout)
        self.assertIn("  p1.cpu_ref (cpu_ref, on the host)\n", r.stdout)
        inputs = os.path.join(DIGITS, "test_inputs.npz")
        got, want = self.path("got.npz"), self.path("want.npz")
        report = self.path("report.json")
        r = self.ok("run", "--artifact", npu, "--input", inputs, "--out", got, "--report", report)
        self.ok("run", "--artifact", ref, "--input", inputs, "--out", want)
        self.assertEqual(self.read_bytes(got), self.read_bytes(want))
        # The report: npu_sim's per partition, the host partition's size.
        with open(report, encoding="utf-8") as f:
            rep = json.load(f)
        units = [(p["backend"], p["unit"], p["report"] is None) for p in rep["partitions"]]
        self.assertEqual(units, [("npu_sim", "target", False), ("cpu_ref", "host", True),
                                 ("npu_sim", "target", False)])
        self.assertEqual(rep["partitions"][1]["macs"], N * 64 * 32)
        self.assertIn("Partition 1: cpu_ref (host), 4 nodes", r.stdout)
        # An estimate runs the target's partitions only.
        r = self.ok("run", "--artifact", npu, "--estimate-only")
        self.assertIn("(not estimated: runs on the host)", r.stdout)

    def test_packed_partitioned_artifact_runs_the_same(self):
        npu, mxq = self.path("npu"), self.path("npu.mxq")
        self.ok("compile", *MLP, "--config", FC2_FLOAT, "--backend", "npu_sim", "--out", npu)
        self.ok("compile", *MLP, "--config", FC2_FLOAT, "--backend", "npu_sim", "--out", mxq)
        inputs = os.path.join(DIGITS, "test_inputs.npz")
        a, b = self.path("a.npz"), self.path("b.npz")
        self.ok("run", "--artifact", npu, "--input", inputs, "--out", a)
        self.ok("run", "--artifact", mxq, "--input", inputs, "--out", b)
        self.assertEqual(self.read_bytes(a), self.read_bytes(b))

    # --- head and tail --------------------------------------------------------

    def compile_head_tail(self, *extra, out=None):
        src = self.path("ht.onnx")
        onnx.save(head_and_tail_model(), src)
        calib = self.path("calib")
        if not os.path.isdir(calib):
            os.mkdir(calib)
            rng = np.random.default_rng(22)
            for i in range(8):
                np.save(os.path.join(calib, f"s{i}.npy"),
                        rng.normal(0, 1, (1, 3, 8, 8)).astype(np.float32))
        return ("compile", "--model", src, "--calib-data-path", calib, "--out", out, *extra)

    def test_head_and_tail_on_cpu_ref_byte_identical(self):
        npu, ref = self.path("npu"), self.path("ref")
        body = self.path("body.mblt")
        for mode in ("auto", "edges"):
            r = self.ok(*self.compile_head_tail("--backend", "npu_sim", "--cpu-offload", mode,
                                                "--extract-npu-body", body, out=npu))
            # npu_sim quantizes only graph inputs, so the QuantizeLinear after
            # Sin (and the DequantizeLinear before Cos) go with them.
            self.assertIn("3 partitions: cpu_ref (host) 2 nodes → npu_sim 2 nodes → "
                          "cpu_ref (host) 2 nodes", r.stdout)
        self.ok(*self.compile_head_tail(out=ref))
        inputs = self.path("in.npz")
        np.savez(inputs, x=np.random.default_rng(23).normal(0, 1, (1, 3, 8, 8)).astype(np.float32))
        got, want = self.path("got.npz"), self.path("want.npz")
        self.ok("run", "--artifact", npu, "--input", inputs, "--out", got)
        self.ok("run", "--artifact", ref, "--input", inputs, "--out", want)
        self.assertEqual(self.read_bytes(got), self.read_bytes(want))
        # The extracted body: valid ONNX, its boundary recorded, and it
        # compiles for the backend on its own.
        ir = onnx.load(body)
        onnx.checker.check_model(ir)
        meta = {p.key: p.value for p in ir.metadata_props}
        boundary = json.loads(meta["eulernpu.boundary"])
        self.assertEqual((boundary["backend"], boundary["partition"], boundary["partitions"]),
                         ("npu_sim", 1, 3))
        self.assertEqual([(b["name"], b["dtype"]) for b in boundary["inputs"]],
                         [("s_int8", "int8")])
        self.assertGreater(boundary["inputs"][0]["scale"], 0)
        ops = [n.op_type for n in ir.graph.node]
        self.assertNotIn("Sin", ops)
        self.assertNotIn("Cos", ops)
        self.assertIn("QConv", ops)
        r = self.ok("compile", "--mblt", body, "--backend", "npu_sim", "--cpu-offload", "none",
                    "--out", self.path("body_art"))
        self.assertNotIn("partitions", r.stdout)

    def test_a_graph_that_folds_away_still_runs_on_every_backend(self):
        # Shape of a static input folds to a constant: no node is left, and
        # the artifact must still give the value (one partition, no nodes).
        nodes = [h.make_node("Shape", ["x"], ["s"], "shape")]
        g = h.make_graph(nodes, "folds", [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                         [h.make_tensor_value_info("s", T.INT64, [2])])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
        m.ir_version = 7
        model = self.path("folds.onnx")
        onnx.save(m, model)
        inputs = self.path("in.npz")
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        np.savez(inputs, x=x)
        for backend in ("cpu_ref", "npu_sim"):
            art, out = self.path(backend), self.path(backend + ".npz")
            r = self.ok("compile", "--model", model, "--backend", backend, "--out", art)
            self.assertIn("0 ops lowered", r.stdout)
            self.assertNotIn("partitions", self.manifest(art))
            self.ok("run", "--artifact", art, "--input", inputs, "--out", out)
            got = np.load(out)
            self.assertEqual(got["s"].tolist(), [2, 3])

    def test_none_refuses_with_a_short_where_line(self):
        out = self.path("x")
        _, m = self.error(*self.compile_head_tail("--backend", "npu_sim", "--cpu-offload", "none",
                                                  out=out),
                          title="backend lowering missing for op Sin")
        self.assertIn("node 'head' (Sin)", m["where"])
        self.assert_absent(out)
        # Many refused nodes: counts by op, the first three, and the command
        # that lists them all (the float MLP: every node but Flatten).
        _, m = self.error("compile", "--model", os.path.join(DIGITS, "mlp.onnx"), "--input-shape",
                          "input=1,1,8,8", "--backend", "npu_sim", "--cpu-offload", "none",
                          "--out", out, title="backend lowering missing for op Gemm")
        self.assertIn("5 nodes (Gemm 3, Relu 2)", m["where"])
        self.assertIn("and 2 more", m["where"])
        self.assertIn("--backend npu_sim' lists them all", m["where"])
        self.assertLess(len(m["where"]), 600)

    def test_edges_refuses_an_interior_partition(self):
        out = self.path("x")
        _, m = self.error("compile", *MLP, "--config", FC2_FLOAT, "--backend", "npu_sim",
                          "--cpu-offload", "edges", "--out", out,
                          title="backend lowering missing for op [A-Za-z]+")
        self.assertIn("inside the graph", m["where"])
        self.assertIn("--cpu-offload auto", m["fix"])
        self.assert_absent(out)

    def test_bad_cpu_offload_and_no_body(self):
        self.error("compile", *MLP, "--cpu-offload", "sometimes", "--out", self.path("x"),
                   title="invalid command line", where="sometimes")
        # A backend that lowers nothing of the graph has no body to extract.
        spec_model = self.path("sin.onnx")
        g = h.make_graph([h.make_node("Sin", ["x"], ["y"], "s")], "g",
                         [h.make_tensor_value_info("x", T.FLOAT, [2])],
                         [h.make_tensor_value_info("y", T.FLOAT, [2])])
        onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), spec_model)
        body = self.path("body.mblt")
        self.error("compile", "--model", spec_model, "--backend", "npu_sim",
                   "--extract-npu-body", body, "--out", self.path("y"),
                   title="no partition for the backend")
        self.assert_absent(body)

    def test_inspect_shows_the_partitions_and_their_boundaries(self):
        qir = self.path("q.mblt")
        self.ok("compile", "--model", os.path.join(DIGITS, "mlp.onnx"), "--input-shape",
                "input=1,1,8,8", "--calib-data-path", CALIB, "--config", FC2_FLOAT,
                "--save-quantized-ir", qir, "--out", self.path("ref"))
        r = self.ok("inspect", qir, "--backend", "npu_sim")
        self.assertIn("Partitions on npu_sim (--cpu-offload auto): 3 partitions: npu_sim 3 nodes → "
                      "cpu_ref (host) 4 nodes → npu_sim 2 nodes", r.stdout)
        self.assertRegex(r.stdout, r"out fc1\.relu_int8 int8 \(1, 64\) scale [0-9.e-]+ zero_point -?\d+")
        j = json.loads(self.ok("inspect", qir, "--backend", "npu_sim", "--json").stdout)
        self.assertEqual([p["backend"] for p in j["partitions"]], ["npu_sim", "cpu_ref", "npu_sim"])

    def test_inspect_says_a_dynamic_dimension_once_and_takes_input_shape(self):
        mlp = os.path.join(DIGITS, "mlp.onnx")
        r = self.ok("inspect", mlp, "--backend", "cpu_ref")
        self.assertIn("Dynamic inputs (backends need static shapes; fix them with --input-shape):",
                      r.stdout)
        self.assertIn("nodes wait on the dynamic inputs above", r.stdout)
        self.assertNotIn("has a dynamic dimension", r.stdout)
        r = self.ok("inspect", mlp, "--backend", "cpu_ref", "--input-shape", "input=1,1,8,8")
        self.assertIn("6/6 nodes supported", r.stdout)
        self.assertIn("1 partition: cpu_ref 6 nodes", r.stdout)
        self.error("inspect", mlp, "--input-shape", "input", title="invalid command line",
                   where="--input-shape 'input' is not NAME=...")

    def if_model(self):
        then = h.make_graph([h.make_node("Identity", ["x"], ["t"])], "then", [],
                            [h.make_tensor_value_info("t", T.FLOAT, [2])])
        other = h.make_graph([h.make_node("Neg", ["x"], ["e"])], "else", [],
                             [h.make_tensor_value_info("e", T.FLOAT, [2])])
        g = h.make_graph([h.make_node("Relu", ["x0"], ["x"], "relu"),
                          h.make_node("If", ["c"], ["y"], "branch", then_branch=then,
                                      else_branch=other)], "g",
                         [h.make_tensor_value_info("x0", T.FLOAT, [2]),
                          h.make_tensor_value_info("c", T.BOOL, [])],
                         [h.make_tensor_value_info("y", T.FLOAT, [2])])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
        m.ir_version = 7
        path = self.path("if.onnx")
        onnx.save(m, path)
        return path

    def test_a_node_neither_backend_lowers_is_refused(self):
        # An If on a run-time condition: no backend lowers control flow.
        src, out = self.if_model(), self.path("x")
        self.error("compile", "--model", src, "--backend", "npu_sim", "--out", out,
                   title="backend lowering missing for op If",
                   where="neither 'npu_sim' nor cpu_ref can lower node 'branch' (If)")
        self.assert_absent(out)
        # Frozen, the condition is a constant and the If becomes its branch.
        inputs = self.path("in.npz")
        np.savez(inputs, x0=np.array([-1.5, 2.0], np.float32))
        for value, want in (("1", [0.0, 2.0]), ("0", [-0.0, -2.0])):
            art, got = self.path("if" + value), self.path("if" + value + ".npz")
            self.ok("compile", "--model", src, "--freeze-input", "c=" + value, "--out", art)
            self.ok("run", "--artifact", art, "--input", inputs, "--out", got)
            np.testing.assert_array_equal(np.load(got)["y"], np.array(want, np.float32))
        self.error("compile", "--model", src, "--freeze-input", "c=1,0", "--out", out,
                   title="frozen input does not fit", where="2 values for 1 elements")
        self.error("compile", "--model", src, "--freeze-input", "nope=1", "--out", out,
                   title="frozen input does not fit", where="no such input")

    def test_a_manifest_whose_chain_is_broken_is_corrupt(self):
        npu = self.path("npu")
        self.ok("compile", *MLP, "--config", FC2_FLOAT, "--backend", "npu_sim", "--out", npu)
        m = self.manifest(npu)
        m["partitions"][1]["inputs"][0]["name"] = "nowhere"
        with open(os.path.join(npu, "manifest.json"), "w", encoding="utf-8") as f:
            json.dump(m, f)
        self.error("run", "--artifact", npu, "--input", os.path.join(DIGITS, "test_inputs.npz"),
                   "--out", self.path("o.npz"), title="artifact manifest is corrupt",
                   where="reads 'nowhere'")
        self.assert_absent(self.path("o.npz"))


if __name__ == "__main__":
    unittest.main()
