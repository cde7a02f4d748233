"""The hostile-input corpus: bad inputs for every loader, generated here
from the project's own files, each run through the command a user would
type. Every case must end in the three-line error (not an internal one),
an exit status in 1..127, within a time bound and an address-space cap
(ulimit -v), with nothing left at the output path. docs/reliability.md
describes it."""
import io
import json
import os
import shutil
import struct
import unittest
import zipfile

import numpy as np

from harness import (ERROR_RE, SANITIZED, SOURCE_DIR, TINY_MLP, CliTestCase, _last_error,
                     compile_tiny_mlp, run)

SPEC = os.path.join(TINY_MLP, "spec.yaml")
WEIGHTS = os.path.join(TINY_MLP, "weights.npz")
INPUT = os.path.join(TINY_MLP, "input.npz")
ONNX_MLP = os.path.join(SOURCE_DIR, "examples", "onnx_mlp", "model.onnx")
DEVICE = os.path.join(SOURCE_DIR, "plugins", "npu_sim", "devices", "edge16.npu.yaml")
MEMORY_CAP = 1 << 30
SECONDS = 60


def read(path):
    with open(path, "rb") as f:
        return f.read()


def npz(members, compression=zipfile.ZIP_STORED):
    """An archive of raw members: name -> bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def npy(array):
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def npy_header(shape, descr="<f4"):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def varint(n):
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def model_of_empty_nodes(count):
    """ir_version 8 and a graph of `count` empty nodes: 2 bytes each on
    disk, a few hundred once parsed."""
    graph = b"\x0a\x00" * count
    return b"\x08\x08" + b"\x3a" + varint(len(graph)) + graph


def bomb(path, header, size):
    """A deflated member: `header`, then `size` bytes of zeros."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("x.npy", "w", force_zip64=True) as f:
            f.write(header)
            zeros = bytes(1 << 24)
            for left in range(size, 0, -len(zeros)):
                f.write(zeros[:min(left, len(zeros))])


def snapshot(path):
    """A file's bytes, or a directory's {relative path: bytes}."""
    if os.path.isfile(path):
        return read(path)
    found = {}
    for parent, _, files in os.walk(path):
        for f in files:
            full = os.path.join(parent, f)
            found[os.path.relpath(full, path)] = read(full)
    return found


def largest_file(path):
    shot = snapshot(path)
    return len(shot) if isinstance(shot, bytes) else max(len(b) for b in shot.values())


class HostileInputsTest(CliTestCase):

    def check(self, name, *args, out=None, title=None, where=None):
        """Runs one case; `out` is the output path that must stay absent;
        `title` and `where`, if given, what the error must say."""
        kw = {} if SANITIZED else {"memory_limit": MEMORY_CAP}
        r = run(*args, timeout=SECONDS, **kw)
        self.assertTrue(1 <= r.returncode <= 127,
                        f"{name}: exit status {r.returncode}\n{r.stderr[-2000:]}")
        m = ERROR_RE.match(_last_error(r.stderr))
        self.assertIsNotNone(m, f"{name}: not a three-line error:\n{r.stderr[-2000:]}")
        self.assertNotIn("internal", m["title"], f"{name}: {r.stderr}")
        if title is not None:
            self.assertEqual(m["title"], title, f"{name}: {r.stderr}")
        if where is not None:
            self.assertIn(where, m["where"], f"{name}: {r.stderr}")
        if out is not None:
            self.assert_absent(out)

    def check_files(self, cases, suffix, command):
        """Writes each case's contents to NAME+suffix and checks
        command(path, out) on it, `out` being a fresh output path."""
        for name, data in cases.items():
            with self.subTest(case=name):
                path = self.write(name + suffix, data)
                out = self.path(name + ".out")
                self.check(name, *command(path, out), out=out)

    def write(self, name, data):
        path = self.path(name)
        with open(path, "w" if isinstance(data, str) else "wb") as f:
            f.write(data)
        return path

    def test_npz_inputs(self):
        artifact = self.path("a")
        self.assertEqual(compile_tiny_mlp(artifact).returncode, 0)
        good = read(INPUT)
        x = npy(np.zeros((1, 8), np.float32))
        cases = {
            "text": b"not a zip at all\n",
            "empty": b"",
            "truncated": good[:len(good) // 2],
            "tail_only": good[-100:],
            "flipped": bytes(b ^ 0xFF if 40 < i < 60 else b for i, b in enumerate(good)),
            "not_npy_member": npz({"x.txt": b"hello"}),
            "bad_magic": npz({"x.npy": b"\x93NUMPZ" + x[6:]}),
            "huge_header_len": npz({"x.npy": x[:8] + struct.pack("<H", 65535) + x[10:]}),
            "shape_lies": npz({"x.npy": npy_header((1, 1 << 40)) + bytes(32)}),
            "negative_dim": npz({"x.npy": npy_header((1, 8)).replace(b"(1, 8)", b"(1,-8)")
                                 + bytes(32)}),
            "object_dtype": npz({"x.npy": npy_header((1, 8), "|O") + bytes(64)}),
            "fortran": npz({"x.npy": npy(np.asfortranarray(np.zeros((2, 8), np.float32)))}),
            # zipfile cuts a name at a NUL: the byte is patched in after.
            "nul_in_key": npz({"xAy.npy": x}).replace(b"xAy.npy", b"x\0y.npy"),
            "many_members": npz({f"m{i}.npy": x for i in range(20000)}),
        }
        # Two members with one name, as a hand-made archive can hold.
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("x.npy", x)
            z.writestr("x.npy", x)
        cases["duplicate_key"] = buf.getvalue()  # zipfile warns; the archive is meant so
        self.check_files(cases, ".npz", lambda path, out: (
            "run", "--artifact", artifact, "--input", path, "--out", out))
        # Zip bombs: one behind a small array's header, one whose header
        # is honest but whose array exceeds what the model needs.
        path = self.path("bomb_small_header.npz")
        bomb(path, npy_header((8,)), 1200 << 20)
        out = self.path("q")
        self.check("bomb_small_header", "compile", "--spec", SPEC, "--weights", path, "--out", out,
                   out=out, title="npy array is malformed")
        path = self.path("bomb_honest.npz")
        bomb(path, npy_header((1200 << 18,)), 1200 << 20)
        out = self.path("r.npz")
        self.check("bomb_honest", "run", "--artifact", artifact, "--input", path, "--out", out,
                   out=out)

    def test_onnx_models(self):
        import onnx
        from onnx import helper, TensorProto
        good = read(ONNX_MLP)
        model = onnx.load(ONNX_MLP)

        def variant(edit):
            m = onnx.ModelProto()
            m.CopyFrom(model)
            edit(m)
            return m.SerializeToString()

        def ir_version(v):
            return lambda m: setattr(m, "ir_version", v)

        def huge_initializer(m):
            t = m.graph.initializer[0]
            del t.dims[:]
            t.dims.extend([1 << 31, 1 << 31])

        def external_outside(m):
            t = m.graph.initializer[0]
            t.ClearField("raw_data")
            t.ClearField("float_data")
            t.data_location = TensorProto.EXTERNAL
            t.external_data.add(key="location", value="../../../../etc/passwd")

        def external_past_end(m):
            t = m.graph.initializer[0]
            t.ClearField("raw_data")
            t.ClearField("float_data")
            t.data_location = TensorProto.EXTERNAL
            t.external_data.add(key="location", value="weights.bin")
            t.external_data.add(key="offset", value="4096")
            t.external_data.add(key="length", value="64")

        def external_link(m):
            # Beside the model, but a link to a file outside its directory.
            external_past_end(m)
            t = m.graph.initializer[0]
            del t.external_data[:]
            t.external_data.add(key="location", value="link.bin")

        def unknown_op(m):
            m.graph.node[0].op_type = "NoSuchOp"

        def cycle(m):
            m.graph.node[0].input[0] = m.graph.node[-1].output[0]

        def deep_subgraphs(m):
            # Nested through then_branch only: each level holds one copy.
            empty = helper.make_graph([], "e", [], [])
            body = empty
            for _ in range(200):
                node = helper.make_node("If", ["c"], [], then_branch=body, else_branch=empty)
                body = helper.make_graph([node], "b", [], [])
            m.graph.node.append(helper.make_node("If", ["c"], ["z"], then_branch=body,
                                                 else_branch=empty))

        def huge_output_shape(m):
            d = m.graph.input[0].type.tensor_type.shape.dim
            d[0].dim_value = 1 << 40

        def long_name(m):
            m.graph.node[0].output[0] = "x" * 70000

        cases = {
            "text": b"this is not protobuf",
            "empty": b"",
            "truncated": good[:len(good) // 2],
            "ir_version_0": variant(ir_version(0)),
            "ir_version_99": variant(ir_version(99)),
            "huge_initializer": variant(huge_initializer),
            "external_outside": variant(external_outside),
            "external_past_end": variant(external_past_end),
            "external_link": variant(external_link),
            "unknown_op": variant(unknown_op),
            "cycle": variant(cycle),
            "deep_subgraphs": variant(deep_subgraphs),
            "huge_input_shape": variant(huge_output_shape),
            # Protobuf nesting far past any recursion limit.
            "nested_bytes": b"\x3a\xff\xff\xff\x0f" * 20000,
            # 16 MB that parsing would turn into gigabytes.
            "empty_nodes": model_of_empty_nodes(8_000_000),
            # The same behind an unknown group, which protobuf skips.
            "group_then_empty_nodes": b"\x08\x08\xc3\x3e\xc4\x3e" +
                                      model_of_empty_nodes(8_000_000)[2:],
            "long_name": variant(long_name),
        }
        # The models live in m/; the link beside them leads out of it.
        os.makedirs(self.path("m"))
        self.write("m/weights.bin", bytes(100))
        self.write("secret.bin", bytes(4096))
        os.symlink(self.path("secret.bin"), self.path("m", "link.bin"))
        expected = {"empty_nodes": ("onnx model exceeds a size limit", "more than 1000000 nodes"),
                    "long_name": ("onnx model exceeds a size limit", "a name of 70000 bytes"),
                    "group_then_empty_nodes": ("onnx model is corrupt", "not a valid ONNX"),
                    "external_link": ("onnx external data is invalid", "a link to"),
                    "external_outside": ("onnx external data is invalid", "outside the model's"),
                    "external_past_end": ("onnx external data is invalid", "wants bytes [4096")}
        for name, data in cases.items():
            with self.subTest(case=name):
                path = self.write(f"m/{name}.onnx", data)
                title, where = expected.get(name, (None, None))
                out = self.path(f"{name}.mxq")
                self.check(name, "compile", "--model", path, "--out", out, out=out, title=title,
                           where=where)
                if name == "huge_input_shape":
                    continue  # parse keeps a declaration; only compiling it needs the bytes
                out = self.path(f"{name}.mblt")
                self.check(name, "parse", "--model", path, "--output", out, out=out)

    def test_ir_files(self):
        """The IR reader runs the same count checks as the ONNX frontend."""
        good = self.path("good.mblt")
        r = run("parse", "--model", ONNX_MLP, "--output", good)
        self.assertEqual(r.returncode, 0, r.stderr)
        data = read(good)
        cases = {
            "truncated": data[:len(data) // 2],
            "empty_nodes": model_of_empty_nodes(8_000_000),
            "not_protobuf": b"IR? no",
        }
        self.check_files(cases, ".mblt",
                         lambda path, out: ("compile", "--mblt", path, "--out", out))
        self.check("limit", "compile", "--mblt", self.path("empty_nodes.mblt"), "--out",
                   self.path("x.mxq"), title="onnx model exceeds a size limit",
                   where="more than 1000000 nodes")

    def test_disk_full_mid_write(self):
        """Every output a command writes, with the disk filling up half-way
        through it (RLIMIT_FSIZE at half the output's largest file): the
        error names the output, the earlier output at the path is still
        there byte for byte, and no temporary file or directory is left."""
        calib = self.path("calib")
        os.makedirs(calib)
        for i in range(2):
            shutil.copy(INPUT, os.path.join(calib, f"{i}.npz"))
        quantize = ("quantize", "--spec", SPEC, "--weights", WEIGHTS, "--calib-data-path", calib,
                    "--backend", "npu_sim")
        npu = self.path("npu")
        self.ok(*quantize, "--out", npu)
        cases = {
            "x.mblt": lambda out: ("parse", "--model", ONNX_MLP, "--output", out),
            "packed.mxq": lambda out: ("compile", "--spec", SPEC, "--weights", WEIGHTS, "--out",
                                       out),
            "dir_artifact": lambda out: ("compile", "--spec", SPEC, "--weights", WEIGHTS, "--out",
                                         out),
            "int8_artifact": lambda out: (*quantize, "--out", out),
            "quant.json": lambda out: (*quantize, "--out", self.path("q2"), "--report", out),
            "r.npz": lambda out: ("run", "--artifact", npu, "--input", INPUT, "--out", out),
            "run.json": lambda out: ("run", "--artifact", npu, "--input", INPUT, "--out",
                                   self.path("r2.npz"), "--report", out),
        }
        for name, command in cases.items():
            with self.subTest(output=name):
                out = self.path(name)
                self.ok(*command(out))
                before = snapshot(out)
                files = sorted(os.listdir(self.tmp))
                r = run(*command(out), file_size_limit=largest_file(out) // 2, timeout=SECONDS)
                self.assertTrue(1 <= r.returncode <= 127, r.stderr)
                m = ERROR_RE.match(_last_error(r.stderr))
                self.assertIsNotNone(m, r.stderr)
                self.assertEqual(m["title"], "cannot write output file", r.stderr)
                self.assertIn(out, m["where"])
                self.assertEqual(snapshot(out), before, f"{name} changed")
                # Temporary files (".NAME.tmp-*", "NAME.staging-*") are gone.
                self.assertEqual(sorted(os.listdir(self.tmp)), files,
                                 "temporary files were left behind")

    def test_specs(self):
        good = read(SPEC).decode()
        laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
            f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
            f"*{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(9))
        cases = {
            "empty": "",
            "not_yaml": "{[}: ::\n\t- -",
            "billion_laughs": good + laughs,
            "deep_nesting": "format: 1\nname: " + "[" * 100000 + "]" * 100000 + "\n",
            "duplicate_key": good.replace("name: tiny_mlp", "name: tiny_mlp\nname: other", 1),
            "two_documents": good + "\n---\nformat: 1\n",
            "nul_byte": good.replace("tiny_mlp", "tiny\0mlp", 1),
            "stray_comma": ",\n" + good,
            "nonscalar_key": good.replace("name: tiny_mlp", "{&k [1, 2]}: x", 1),
            "huge_shape": good.replace("shape: [1, 8]", "shape: [4294967296, 4294967296]", 1),
            "negative_shape": good.replace("shape: [1, 8]", "shape: [1, -8]", 1),
            "long_list": good.replace("shape: [1, 8]", "shape: [" + "1, " * 200000 + "8]", 1),
            "unknown_op": good.replace("op: Gemm", "op: NoSuchOp", 1),
            "huge_file": good + ("#" + "x" * 1023 + "\n") * 5000,
        }
        self.check_files(cases, ".yaml", lambda path, out: (
            "compile", "--spec", path, "--weights", WEIGHTS, "--out", out))

    def test_calibration_data(self):
        x = npy(np.zeros((1, 8), np.float32))
        os.makedirs(self.path("calib_nan"))
        self.write("calib_nan/s.npz", npz({"x.npy": npy(np.full((1, 8), np.nan, np.float32))}))
        os.makedirs(self.path("calib_wrong_key"))
        self.write("calib_wrong_key/s.npz", npz({"y.npy": x}))
        os.makedirs(self.path("calib_wrong_shape"))
        self.write("calib_wrong_shape/s.npy", npy(np.zeros((3, 3), np.float32)))
        os.makedirs(self.path("calib_empty"))
        os.makedirs(self.path("calib_garbage"))
        self.write("calib_garbage/s.npy", b"\x93NUMPY garbage")
        cases = {
            "nan": self.path("calib_nan"),
            "wrong_key": self.path("calib_wrong_key"),
            "wrong_shape": self.path("calib_wrong_shape"),
            "empty_dir": self.path("calib_empty"),
            "garbage": self.path("calib_garbage"),
            "missing": self.path("nowhere"),
            "list_nul": self.write("list_nul.txt", b"a\0b.npy\n"),
            "list_missing": self.write("list_missing.txt", "does_not_exist.npy\n"),
            "list_binary": self.write("list_binary.txt", bytes(range(256)) * 40),
        }
        for name, path in cases.items():
            with self.subTest(case=name):
                out = self.path(f"{name}.q")
                self.check(name, "compile", "--spec", SPEC, "--weights", WEIGHTS,
                           "--calib-data-path", path, "--out", out, out=out)

    def test_quantization_configs(self):
        calib = os.path.join(SOURCE_DIR, "examples", "tiny_mlp", "input.npz")
        cases = {
            "not_yaml": "{[}: ::",
            "unknown_key": "frobnicate: 1\n",
            "bad_type": "calibration: {method: [1, 2]}\n",
            "duplicate_key": "preset: fast\npreset: best\n",
            "deep": "a: " + "[" * 50000 + "]" * 50000 + "\n",
            "nul": "preset: fa\0st\n",
        }
        self.check_files(cases, ".cfg.yaml", lambda path, out: (
            "compile", "--spec", SPEC, "--weights", WEIGHTS, "--calib-data-path", calib,
            "--config", path, "--out", out))

    def test_device_descriptors(self):
        good = read(DEVICE).decode()
        cases = {
            "not_yaml": "{[}: ::",
            "empty": "",
            "negative_clock": good.replace("clock_mhz: 500", "clock_mhz: -500"),
            "huge_array": good.replace("rows: 16", "rows: 99999999999"),
            "zero_cores": good.replace("cores_per_cluster: 1", "cores_per_cluster: 0"),
            "duplicate_key": good.replace("clock_mhz: 500", "clock_mhz: 500\nclock_mhz: 600"),
            "unknown_mode": good.replace("default_core_mode: single", "default_core_mode: x"),
            "laughs": good + "x: &a [1, 1, 1, 1, 1, 1, 1, 1]\ny: [*a, *a, *a, *a, *a, *a]\n",
        }
        self.check_files(cases, ".npu.yaml", lambda path, out: (
            "compile", "--spec", SPEC, "--weights", WEIGHTS, "--backend", "npu_sim",
            "--target-device", path, "--out", out))

    def test_artifacts(self):
        packed = self.path("good.mxq")
        self.assertEqual(compile_tiny_mlp(packed).returncode, 0)
        directory = self.path("good")
        self.assertEqual(compile_tiny_mlp(directory).returncode, 0)
        good = read(packed)
        with zipfile.ZipFile(packed) as z:
            members = {n: z.read(n) for n in z.namelist()}

        def repack(edit):
            m = dict(members)
            edit(m)
            return npz(m)

        def escape(m):
            m["../escape.txt"] = b"x"

        def drop_plan(m):
            del m["plan.json"]

        def manifest_garbage(m):
            m["manifest.json"] = b"{\"format\": {\"a\": 1}}"

        cases = {
            "text": b"not an artifact",
            "truncated": good[:len(good) // 2],
            "path_escape": repack(escape),
            "missing_member": repack(drop_plan),
            "manifest_garbage": repack(manifest_garbage),
        }
        self.check_files(cases, ".mxq", lambda path, out: (
            "run", "--artifact", path, "--input", INPUT, "--out", out))
        # Directory artifacts edited by hand, hashes recomputed: the plan's
        # and graph's own checks must catch them.
        from harness import rehash_manifest
        edits = {
            "graph_not_json": ("graph.json", lambda t: "{not json"),
            "plan_huge_arena": ("plan.json",
                                lambda t: json.dumps(dict(json.loads(t), arena_bytes=1 << 62))),
            "graph_no_nodes": ("graph.json",
                               lambda t: json.dumps(dict(json.loads(t), nodes=[]))),
        }
        for name, (member, edit) in edits.items():
            with self.subTest(case=name):
                copy = self.path(name)
                shutil.copytree(directory, copy)
                with open(os.path.join(copy, member)) as f:
                    text = f.read()
                with open(os.path.join(copy, member), "w") as f:
                    f.write(edit(text))
                rehash_manifest(copy)
                out = self.path(f"{name}.r.npz")
                self.check(name, "run", "--artifact", copy, "--input", INPUT, "--out", out, out=out)


if __name__ == "__main__":
    unittest.main()
