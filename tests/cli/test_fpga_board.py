"""fpga_board: boards as data files, the engine size each board gets and why
the next does not fit, PS/PL partitioning of quantized models, cpu_ref's
bytes on every board, the plan and its estimate, and bad input
(docs/backends/fpga_board.md)."""
import json
import os
import shutil
import tempfile


from harness import SOURCE_DIR, CliTestCase, rehash_manifest, run
import int8_identity

BOARDS = {"pynq-z2": "zynq-7000", "ultra96-v2": "zynq-ultrascale-plus",
          "kv260": "zynq-ultrascale-plus", "zcu104": "zynq-ultrascale-plus",
          "zcu102": "zynq-ultrascale-plus"}
# The size each board gets under the default fit limits, and the resource
# the next larger size overuses (docs/backends/fpga_board.md, "Engine sizes").
FITS = {"pynq-z2": ("B512", "B800", "DSP"), "ultra96-v2": ("B1024", "B1152", "DSP"),
        "kv260": ("B2304", "B3136", "LUT"), "zcu104": ("B3136", "B4096", "LUT"),
        "zcu102": ("B4096", None, None)}
SIZES = ["B512", "B800", "B1024", "B1152", "B1600", "B2304", "B3136", "B4096"]
GOOD_BOARD = """name: tiny
description: a Zynq-7030 test board
part: xc7z030sbg485-1
family: zynq-7000
resources: {lut: 78600, ff: 157200, bram36: 265, uram: 0, dsp: 400}
pl_clock_mhz: 100
ps: pynq-z2
pl_ddr_gbps: 1.0
"""


class FpgaBoardTest(CliTestCase):

    @classmethod
    def setUpClass(cls):
        cls.shared = tempfile.mkdtemp(prefix="eulernpu-fpga-")
        cls.models = int8_identity.quantize_models(run, cls.shared)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.shared, ignore_errors=True)

    def compile(self, name, out, *extra):
        return self.ok("compile", "--mblt", self.models[name] + ".mblt", "--backend",
                       "fpga_board", "--out", out, *extra)

    def error_where(self, *args, title, where):
        """An error whose where: line matches the regex `where`."""
        _, m = self.error(*args, title=title)
        self.assertRegex(m["where"], where)
        return m

    def plan(self, art):
        with open(os.path.join(art, "plan.json")) as f:
            return json.load(f)

    def test_shipped_boards_are_listed(self):
        caps = json.loads(self.ok("capabilities", "--backend", "fpga_board", "--json").stdout)
        (backend,) = caps["backends"]
        listed = {d["name"]: d for d in backend["devices"]}
        self.assertEqual(set(listed), set(BOARDS))
        for name, d in listed.items():
            self.assertEqual(d["core_modes"], ["single"])
            self.assertTrue(d["source"].endswith(name + ".board.yaml"), d["source"])

    def test_each_board_gets_the_largest_size_that_fits(self):
        for board, (size, next_size, resource) in FITS.items():
            with self.subTest(board=board):
                art = self.path("fit-" + board)
                self.compile("cnn", art, "--target-device", board)
                plan = self.plan(art)
                self.assertEqual(plan["engine"]["size"], size)
                self.assertEqual(plan["family"], BOARDS[board])
                for key, r in plan["resources"].items():
                    self.assertLessEqual(r["used"], r["limit"] * r["available"], key)
                if next_size is None:
                    continue
                # The next size is refused, naming the resource it overuses.
                self.error_where("compile", "--mblt", self.models["cnn"] + ".mblt", "--backend",
                                 "fpga_board", "--target-device", board, "--pl-config",
                                 next_size, "--out", self.path("nofit"),
                                 title="PL engine does not fit",
                                 where=rf"^engine {next_size} on board '{board}' .*: "
                                       rf"{resource}: needs ")
                self.assert_absent(self.path("nofit"))

    def test_int8_outputs_byte_identical_to_cpu_ref(self):
        checked = int8_identity.check_backend(self, run, "fpga_board", self.models, self.tmp)
        self.assertEqual({d for d, _ in checked}, set(BOARDS))

    def test_every_size_gives_cpu_refs_bytes(self):
        for size in SIZES:
            with self.subTest(size=size):
                art = self.path("size-" + size)
                self.compile("wideconv", art, "--target-device", "zcu102", "--pl-config", size)
                self.assertEqual(self.plan(art)["engine"]["size"], size)
                self.ok("run", "--artifact", art, "--input", self.models["wideconv"] + ".in.npz",
                        "--out", art + ".npz")
                with open(art + ".npz", "rb") as a, \
                        open(self.models["wideconv"] + ".cpu.npz", "rb") as b:
                    self.assertEqual(a.read(), b.read())

    def test_partitions_head_interior_and_tail(self):
        # Every quantized model starts with QuantizeLinear and ends with
        # DequantizeLinear on the PS; convnet keeps its HardSwish and
        # Sigmoid (table lookups) there, between PL subgraphs.
        for name in sorted(self.models):
            with self.subTest(model=name):
                art = self.path("part-" + name)
                self.compile(name, art, "--target-device", "zcu104")
                plan = self.plan(art)
                subs = plan["subgraphs"]
                self.assertEqual(subs[0]["device"], "PS")
                self.assertEqual(subs[-1]["device"], "PS")
                self.assertIn("PL", [s["device"] for s in subs])
                with open(os.path.join(art, "functional", "graph.json")) as f:
                    graph = json.load(f)
                ops = {n["name"]: n["op"] for n in graph["nodes"]}
                placed = [op["node"] for s in subs for op in s["ops"]]
                self.assertEqual(sorted(placed), sorted(ops))  # each node exactly once
                for s in subs:
                    # Neighbours differ: the runs are maximal.
                    for op in s["ops"]:
                        if s["device"] == "PL":
                            self.assertIn(op["op"], {"QConv", "QGemm", "MaxPool", "QAveragePool",
                                                     "QGlobalAveragePool", "QAdd", "Reshape",
                                                     "Flatten", "Squeeze", "Unsqueeze",
                                                     "Identity"})
                        else:
                            self.assertNotIn(op["op"], {"QConv", "QGemm"}, op)
                    if s["device"] == "PL":
                        # What crosses in and out is listed with its bytes.
                        self.assertTrue(s["inputs"] and s["outputs"], s["name"])
                for a, b in zip(subs, subs[1:]):
                    self.assertNotEqual(a["device"], b["device"])
                if name == "convnet":
                    devices = [s["device"] for s in subs]
                    self.assertGreaterEqual(devices.count("PL"), 2, devices)

    def test_inspect_shows_the_split_compile_makes(self):
        mblt = self.models["convnet"] + ".mblt"
        art = self.path("inspect")
        self.compile("convnet", art)  # the default board, as inspect plans for
        compiled = self.plan(art)
        text = self.ok("inspect", mblt, "--backend", "fpga_board").stdout
        self.assertIn("Plan of fpga_board:\nfpga_board: board kv260 (", text)
        for s in compiled["subgraphs"]:
            self.assertRegex(text, rf"\n +{s['name']} +{s['device']} +{len(s['ops'])} ")
        shown = json.loads(self.ok("inspect", mblt, "--backend", "fpga_board", "--json").stdout)
        self.assertEqual(shown["backend_plan"]["subgraphs"], compiled["subgraphs"])
        self.assertEqual(shown["backend_plan"]["engine"], compiled["engine"])
        # Without --backend, no backend plans (it costs a lowering each).
        self.assertNotIn("backend_plan",
                         json.loads(self.ok("inspect", mblt, "--json").stdout))

    def test_report_and_estimate(self):
        art = self.path("report")
        self.compile("convnet", art, "--target-device", "kv260")
        plan = self.plan(art)
        rep = self.path("report.json")
        r = self.ok("run", "--artifact", art, "--input", self.models["convnet"] + ".in.npz",
                    "--out", self.path("report.npz"), "--report", rep)
        self.assertIn("fpga_board: board kv260 (", r.stdout)
        with open(rep) as f:
            report = json.load(f)
        # The engine's model counts the cycles the plan's tile schedule says.
        self.assertEqual(report["run"]["engine_cycles"], plan["totals"]["engine_cycles"])
        self.assertGreater(report["run"]["engine_cycles"], 0)
        engine_ops = [op for s in plan["subgraphs"] for op in s["ops"] if op.get("unit") == "engine"]
        self.assertEqual(report["run"]["engine_tiles"], sum(op["tiles"] for op in engine_ops))
        totals = plan["totals"]
        parts = sum(s["time_us"] + s["transfer_us"] for s in plan["subgraphs"]) / 1000
        self.assertAlmostEqual(totals["latency_ms"], parts, places=9)
        self.assertAlmostEqual(totals["latency_ms"],
                               totals["pl_ms"] + totals["ps_ms"] + totals["transfer_ms"],
                               places=9)
        for s in plan["subgraphs"]:
            if s["device"] == "PL":
                clock = plan["pl_clock_mhz"] * 1e6
                for op in s["ops"]:
                    self.assertAlmostEqual(op["compute_us"], op["cycles"] / clock * 1e6, places=6)
                    self.assertAlmostEqual(op["time_us"], max(op["compute_us"], op["memory_us"]),
                                           places=6)
        # --estimate-only needs no inputs and gives the same plan.
        r = self.ok("run", "--artifact", art, "--estimate-only", "--report", rep)
        with open(rep) as f:
            self.assertEqual(json.load(f)["totals"], totals)

    def test_float32_models_run_on_the_ps(self):
        model = os.path.join(SOURCE_DIR, "examples", "onnx_mlp", "model.onnx")
        art = self.path("float")
        self.ok("compile", "--model", model, "--backend", "fpga_board", "--out", art,
                "--input-shape", "x=2,2,4")
        self.assertEqual([s["device"] for s in self.plan(art)["subgraphs"]], ["PS"])

    def test_a_new_board_file_needs_no_rebuild(self):
        d = self.path("boards")
        os.mkdir(d)
        with open(os.path.join(d, "tiny.board.yaml"), "w") as f:
            f.write(GOOD_BOARD)
        art = self.path("tiny")
        self.ok("--plugin-dir", d, "compile", "--mblt", self.models["cnn"] + ".mblt",
                "--backend", "fpga_board", "--target-device", "tiny", "--out", art)
        plan = self.plan(art)
        self.assertEqual((plan["board"], plan["engine"]["size"]), ("tiny", "B1024"))
        # A Zynq-7010 (17,600 LUTs, 80 DSPs) has room for no engine.
        with open(os.path.join(d, "z7010.board.yaml"), "w") as f:
            f.write(GOOD_BOARD.replace("name: tiny", "name: z7010").replace(
                "{lut: 78600, ff: 157200, bram36: 265, uram: 0, dsp: 400}",
                "{lut: 17600, ff: 35200, bram36: 60, uram: 0, dsp: 80}"))
        self.error_where("--plugin-dir", d, "compile", "--mblt", self.models["cnn"] + ".mblt",
                         "--backend", "fpga_board", "--target-device", "z7010", "--out",
                         self.path("z7010"), title="PL engine does not fit",
                         where=r"the smallest engine, B512, does not fit: LUT: needs 13,482 of "
                               r"12,320 \(0\.7 of 17,600\)")
        self.assert_absent(self.path("z7010"))

    def test_bad_boards_and_options(self):
        cases = {
            "missing": (GOOD_BOARD.replace("dsp: 400", "").replace(", }", "}"),
                        r"key 'resources.dsp': is required"),
            "absurd": (GOOD_BOARD.replace("lut: 78600", "lut: 900000000"),
                       r"key 'resources.lut': must be between"),
            "zero_lut": (GOOD_BOARD.replace("lut: 78600", "lut: 0"),
                         r"key 'resources.lut': must be between 1"),
            "uram_on_7000": (GOOD_BOARD.replace("uram: 0", "uram: 4"),
                             r"Zynq-7000 parts have no UltraRAM"),
            "no_ps": (GOOD_BOARD.replace("ps: pynq-z2", "ps: nosuch"),
                      r"key 'ps': zynq_ps device 'nosuch': target device not found"),
            "family": (GOOD_BOARD.replace("family: zynq-7000", "family: virtex"),
                       r"key 'family': must be one of"),
            "typo": (GOOD_BOARD + "pl_clok_mhz: 3\n", r"key 'pl_clok_mhz': unknown key"),
        }
        for name, (text, where) in cases.items():
            with self.subTest(case=name):
                p = self.path(name + ".board.yaml")
                with open(p, "w") as f:
                    f.write(text)
                out = self.path("bad-" + name)
                self.error_where("compile", "--mblt", self.models["cnn"] + ".mblt", "--backend",
                                 "fpga_board", "--target-device", p, "--out", out,
                                 title="device descriptor is invalid", where=where)
                self.assert_absent(out)
        out = self.path("bad-option")
        self.error("compile", "--mblt", self.models["cnn"] + ".mblt", "--backend", "fpga_board",
                   "--pl-config", "B9999", "--out", out, title="invalid command line",
                   where="--pl-config 'B9999' is not an engine size")
        self.error("compile", "--mblt", self.models["cnn"] + ".mblt", "--backend", "fpga_board",
                   "--backend-option", "fit_dsp=1.5", "--out", out, title="invalid command line",
                   where="fit_dsp = '1.5' is not a share")
        self.error("compile", "--mblt", self.models["cnn"] + ".mblt", "--backend", "fpga_board",
                   "--backend-option", "threads=3", "--out", out, title="invalid command line",
                   where="--backend-option threads is set by eulernpu itself")
        # A tight limit leaves no size.
        self.error_where("compile", "--mblt", self.models["cnn"] + ".mblt", "--backend",
                         "fpga_board", "--target-device", "pynq-z2", "--backend-option",
                         "fit_dsp=0.01", "--out", out, title="PL engine does not fit",
                         where=r"the smallest engine, B512, does not fit: DSP: needs 160 of 2 ")
        self.assert_absent(out)

    def test_corrupt_artifacts(self):
        art = self.path("corrupt")
        self.compile("cnn", art, "--target-device", "zcu104")
        inputs = self.models["cnn"] + ".in.npz"
        with open(os.path.join(art, "plan.json")) as f:
            good = f.read()
        for name, text in {
                "size": good.replace('"size": "', '"size": "X'),
                "format": good.replace("eulernpu-fpga_board-plan", "other"),
                "not_json": "{",
        }.items():
            with self.subTest(case=name):
                with open(os.path.join(art, "plan.json"), "w") as f:
                    f.write(text)
                rehash_manifest(art)
                self.error("run", "--artifact", art, "--input", inputs, "--out",
                           self.path("c.npz"), title="artifact is corrupt")
                self.assert_absent(self.path("c.npz"))
        # Another backend's artifact relabelled as fpga_board's has none of
        # its files.
        other = self.path("other")
        shutil.copytree(self.models["cnn"] + ".cpu", other)
        with open(os.path.join(other, "manifest.json")) as f:
            manifest = json.load(f)
        manifest["backend"]["name"] = "fpga_board"
        with open(os.path.join(other, "manifest.json"), "w") as f:
            json.dump(manifest, f)
        rehash_manifest(other)
        self.error("run", "--artifact", other, "--input", inputs, "--out", self.path("o.npz"),
                   title="artifact file missing", where="board.json' is not in the artifact")
        self.assert_absent(self.path("o.npz"))

    def test_pl_trace_is_written_whole_or_not_at_all(self):
        art = self.path("trace")
        self.compile("cnn", art, "--target-device", "pynq-z2")
        inputs = self.models["cnn"] + ".in.npz"
        trace = self.path("t.trace")
        self.ok("run", "--artifact", art, "--input", inputs, "--out", self.path("t.npz"),
                "--backend-option", f"pl_trace={trace}")
        with open(trace, "rb") as f:
            self.assertEqual(f.read(8), b"ENPTRACE")
        missing = self.path("nodir", "t.trace")
        self.error("run", "--artifact", art, "--input", inputs, "--out", self.path("u.npz"),
                   "--backend-option", f"pl_trace={missing}", title="cannot write output file")
        self.assert_absent(self.path("u.npz"))
        self.error("run", "--artifact", art, "--input", inputs, "--out", self.path("u.npz"),
                   "--backend-option", "pl_trace_tiles=0", "--backend-option",
                   f"pl_trace={trace}", title="invalid command line")


if __name__ == "__main__":
    import unittest
    unittest.main()
