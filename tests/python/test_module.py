"""The Python module: seed 000's call as written, parse then quantize, the
error classes, and `python3 -m eulernpu`. Run by ctest (python.module) with
PYTHONPATH=<build>/python and EULERNPU_BIN naming the built program."""
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import eulernpu
from eulernpu import errors

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIGITS = os.path.join(SOURCE_DIR, "examples", "digits")
EULERNPU = os.environ.get("EULERNPU_BIN", "eulernpu")


@pytest.fixture
def seed_dir(tmp_path, monkeypatch):
    """The seed's layout: model.onnx (the digits CNN at batch 1, so that it
    needs no --input-shape) and calibration/digits, in the working directory."""
    # onnx in a child: its protobuf registrations stay out of this process.
    subprocess.run([sys.executable, "-c",
                    "import onnx, sys; m = onnx.load(sys.argv[1]); "
                    "d = m.graph.input[0].type.tensor_type.shape.dim[0]; d.Clear(); "
                    "d.dim_value = 1; onnx.save(m, sys.argv[2])",
                    os.path.join(DIGITS, "cnn.onnx"), str(tmp_path / "model.onnx")], check=True)
    shutil.copytree(os.path.join(DIGITS, "calib"), tmp_path / "calibration" / "digits")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def files_of(path):
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def without_command_line(files):
    manifest = json.loads(files["manifest.json"])
    del manifest["command_line"]
    return dict(files, **{"manifest.json": manifest})


def test_the_seed_call_as_written(seed_dir, capfd):
    from eulernpu import mxq_compile

    mxq_compile(
        model="model.onnx",
        backend="onnx",
        calib_data_path="calibration/digits",
        target_device="npu8",
        save_path="model.mxq",
    )
    out = capfd.readouterr().out
    assert "--target-device npu8 is backend npu_sim's" in out
    assert "Compile  OK: 6 ops lowered (int8)" in out
    # The command line's explicit flags give the same bytes, the recorded
    # command line aside.
    subprocess.run([EULERNPU, "compile", "--model", "model.onnx", "--frontend", "onnx",
                    "--backend", "npu_sim", "--calib-data-path", "calibration/digits",
                    "--target-device", "npu8", "--out", "flags.mxq"], check=True,
                   capture_output=True)
    got, want = files_of("model.mxq"), files_of("flags.mxq")
    assert json.loads(got["manifest.json"])["command_line"][:2] == ["eulernpu", "compile"]
    assert without_command_line(got) == without_command_line(want)
    # And it runs.
    first = sorted(os.listdir("calibration/digits"))[0]
    np.savez("in.npz", input=np.load(os.path.join("calibration/digits", first)))
    for art, out in (("model.mxq", "seed.npz"), ("flags.mxq", "flags.npz")):
        subprocess.run([EULERNPU, "run", "--artifact", art, "--input", "in.npz", "--output", out],
                       check=True, capture_output=True)
    with np.load("seed.npz") as a, np.load("flags.npz") as b:
        assert a.files == b.files and a[a.files[0]].tobytes() == b[b.files[0]].tobytes()


def test_parse_then_quantize(seed_dir):
    eulernpu.parse("model.onnx", "model.mblt", backend="onnx")
    eulernpu.quantize("model.mblt", "calibration/digits", "model.mxq", target_device="npu8")
    manifest = json.loads(files_of("model.mxq")["manifest.json"])
    assert manifest["backend"]["name"] == "npu_sim"
    assert manifest["calibration"]["samples"] == len(os.listdir("calibration/digits"))
    # Path-like arguments are accepted as well as strings.
    eulernpu.mxq_compile(seed_dir / "model.onnx", seed_dir / "f32.mxq")
    assert json.loads(files_of("f32.mxq")["manifest.json"])["backend"]["name"] == "cpu_ref"


def test_errors_are_classes_with_the_three_lines(seed_dir):
    with pytest.raises(eulernpu.InputFileError) as e:
        eulernpu.mxq_compile(model="missing.onnx", save_path="x.mxq")
    assert e.value.title == "file not found"
    assert "missing.onnx" in e.value.where
    assert e.value.fix
    assert e.value.see == "docs/errors.md#file-not-found"
    assert str(e.value).startswith("file not found\n  where: ")
    assert isinstance(e.value, eulernpu.Error)
    with pytest.raises(eulernpu.BackendError) as e:
        eulernpu.mxq_compile("model.onnx", "x.mxq", target_device="zcu104")
    assert e.value.title == "target device is ambiguous"
    assert "fpga_board, zynq_ps" in e.value.where
    with pytest.raises(eulernpu.ConfigError):
        eulernpu.mxq_compile("model.onnx", "x.mxq", calib_data_path="calibration/digits",
                             preset="nonsense")
    with pytest.raises(eulernpu.CalibrationError):
        os.makedirs("empty")
        eulernpu.mxq_compile("model.onnx", "x.mxq", calib_data_path="empty")
    with pytest.raises(eulernpu.UsageError):
        eulernpu.run_cli(["compile", "--nonsense"])
    assert not os.path.exists("x.mxq")


def test_every_catalog_entry_has_its_class():
    with open(os.path.join(SOURCE_DIR, "docs", "errors.md"), encoding="utf-8") as f:
        headings = [line[3:].strip() for line in f if line.startswith("## ")]
    groups = [h for h in headings if h in errors.SECTIONS or h == "The three common errors"]
    assert sorted(groups) == sorted(list(errors.SECTIONS) + ["The three common errors"])
    titles = [h for h in headings if h not in groups]
    table = errors.catalog()
    assert set(table) == set(titles)
    assert all(cls is not errors.Error and issubclass(cls, errors.Error) for cls in table.values())
    assert errors.class_for("backend lowering missing for op Conv") is eulernpu.BackendError
    assert errors.class_for("no such title") is eulernpu.Error


def test_python_m_eulernpu_mirrors_the_command_line(seed_dir):
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "eulernpu", "plugins"], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "cpu_ref" in r.stdout and "npu_sim" in r.stdout
    r = subprocess.run([sys.executable, "-m", "eulernpu", "compile", "--model", "model.onnx",
                        "--backend", "onnx", "--output", "m.mxq"], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert os.path.exists("m.mxq")
    r = subprocess.run([sys.executable, "-m", "eulernpu", "compile", "--model", "missing.onnx",
                        "--output", "n.mxq"], capture_output=True, text=True, env=env)
    assert r.returncode == 1
    assert r.stderr.startswith("error: file not found\n  where: ")
    assert "  See: docs/errors.md#file-not-found" in r.stderr
    assert not os.path.exists("n.mxq")


def test_the_guides_snippets_run(seed_dir):
    """docs/python.md's Python blocks, in order, in the seed's layout."""
    with open(os.path.join(SOURCE_DIR, "docs", "python.md"), encoding="utf-8") as f:
        text = f.read()
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    assert len(blocks) == 7
    for block in blocks:
        exec(compile(block, "docs/python.md", "exec"), {})
    assert os.path.exists("model.mxq") and os.path.exists("model_q.mxq")
    assert not os.path.exists("x.mxq")


def test_plugins_and_capabilities_as_data(tmp_path, capfd):
    p = eulernpu.plugins()
    names = {x["name"]: x for x in p["plugins"]}
    assert {"cpu_ref", "npu_sim", "onnx", "int8_quantizer"} <= set(names)
    assert names["npu_sim"]["kind"] == "backend" and names["onnx"]["kind"] == "frontend"
    assert p["abi"] == names["cpu_ref"]["abi"]
    c = eulernpu.capabilities(backend="npu_sim")
    assert [b["name"] for b in c["backends"]] == ["npu_sim"]
    npu8 = next(d for d in c["backends"][0]["devices"] if d["name"] == "npu8")
    assert npu8["default_core_mode"] in npu8["core_modes"]
    assert "float32" in eulernpu.capabilities(op="Conv")["matrix"]["Conv"]["cpu_ref"]
    # Nothing of the JSON reached the caller's output.
    assert "backends" not in capfd.readouterr().out
    with pytest.raises(eulernpu.BackendError):
        eulernpu.capabilities(backend="nosuch")
    # A directory of no plugins is searched as --plugin-dir is.
    empty = tmp_path / "none"
    empty.mkdir()
    assert str(empty) in [d["path"] for d in eulernpu.plugins([empty])["search_path"]]


def test_artifact_runs_numpy_arrays_in_process(seed_dir):
    eulernpu.mxq_compile("model.onnx", "npu.mxq", calib_data_path="calibration/digits",
                         target_device="npu8")
    art = eulernpu.Artifact("npu.mxq")
    assert art.inputs == [{"name": "input", "shape": (1, 1, 8, 8), "dtype": "float32"}]
    assert art.outputs == [{"name": "logits", "shape": (1, 10), "dtype": "float32"}]
    assert art.manifest["backend"]["name"] == "npu_sim"
    x = np.load(os.path.join("calibration/digits", sorted(os.listdir("calibration/digits"))[0]))
    got = art.run({"input": x})
    assert list(got) == ["logits"]
    assert got["logits"].shape == (1, 10) and got["logits"].dtype == np.float32
    # The bytes `eulernpu run` writes for the same input.
    np.savez("in.npz", input=x)
    subprocess.run([EULERNPU, "run", "--artifact", "npu.mxq", "--input", "in.npz", "--out",
                    "cli.npz"], check=True, capture_output=True)
    with np.load("cli.npz") as cli:
        assert cli["logits"].tobytes() == got["logits"].tobytes()
    # Another layout of the same values gives the same bytes; the result owns
    # its memory.
    fortran = np.asfortranarray(x)
    assert not fortran.flags.c_contiguous
    assert art.run({"input": fortran})["logits"].tobytes() == got["logits"].tobytes()
    assert got["logits"].flags.owndata is False and got["logits"].base is not None
    # npu_sim reports every run.
    report = art.report()
    assert report is not None and "summary" in report


def test_artifact_errors(seed_dir):
    with pytest.raises(eulernpu.InputFileError):
        eulernpu.Artifact("missing.mxq")
    eulernpu.mxq_compile("model.onnx", "f32")
    art = eulernpu.Artifact(seed_dir / "f32")
    assert art.report() is None
    x = np.zeros((1, 1, 8, 8), np.float32)
    with pytest.raises(eulernpu.RunError) as e:
        art.run({"input": x.astype(np.float64)})
    assert e.value.title == "input tensor dtype mismatch"
    with pytest.raises(eulernpu.RunError) as e:
        art.run({"input": x[:, :, :4]})
    assert e.value.title == "input tensor shape mismatch"
    with pytest.raises(eulernpu.RunError) as e:
        art.run({})
    assert e.value.title == "input tensor key not found"
    with pytest.raises(eulernpu.RunError) as e:
        art.run({"input": x, "extra": x})
    assert e.value.title == "input tensor not in model"
    with pytest.raises(eulernpu.BackendError) as e:
        art.run({"input": x}, report=True)  # cpu_ref reports nothing
    assert e.value.title == "backend has no run report"
    assert art.run({"input": x})["logits"].shape == (1, 10)


def test_calibration_from_an_iterable(seed_dir):
    # A data loader of one's own: the same samples in the same order as
    # the directory give the same int8 model.
    names = sorted(os.listdir("calibration/digits"))

    def loader():
        for n in names:
            yield {"input": np.load(os.path.join("calibration/digits", n))}

    eulernpu.mxq_compile("model.onnx", "iter.mxq", calib_data_path=loader(), target_device="npu8")
    eulernpu.mxq_compile("model.onnx", "dir.mxq", calib_data_path="calibration/digits",
                         target_device="npu8")
    a, b = files_of("iter.mxq"), files_of("dir.mxq")
    for name in a:
        if name != "manifest.json":
            assert a[name] == b[name], name
    ma, mb = json.loads(a["manifest.json"]), json.loads(b["manifest.json"])
    assert ma["calibration"]["samples"] == mb["calibration"]["samples"] == len(names)
    assert eulernpu.Artifact("iter.mxq").run({"input": np.load(
        os.path.join("calibration/digits", names[0]))})["logits"].shape == (1, 10)
    with pytest.raises(eulernpu.CalibrationError) as e:
        eulernpu.mxq_compile("model.onnx", "bad.mxq", calib_data_path=iter([[1, 2]]))
    assert "sample 0 of the calibration iterable is a list" in e.value.where
    with pytest.raises(eulernpu.CalibrationError) as e:
        eulernpu.mxq_compile("model.onnx", "bad.mxq", calib_data_path=iter([]))
    assert e.value.title == "no calibration samples"
    assert not os.path.exists("bad.mxq")


def test_progress_events_reach_a_callback(seed_dir, capfd):
    events = []
    eulernpu.mxq_compile("model.onnx", "p.mxq", calib_data_path="calibration/digits",
                         target_device="npu8", preset="best", progress=events.append)
    assert all(isinstance(e, eulernpu.ProgressEvent) for e in events)
    assert {e.task for e in events} == {"compile"}
    steps = ["load", "optimize", "calibrate", "report", "lower", "write"]
    begun = [(e.step, e.detail, e.index, e.steps) for e in events if e.kind == "begin"]
    assert begun == [("load", "", 1, 6), ("optimize", "", 2, 6), ("calibrate", "pass 1/2", 3, 6),
                     ("calibrate", "pass 2/2", 3, 6), ("report", "", 4, 6), ("lower", "", 5, 6),
                     ("write", "", 6, 6)]
    # Every step that begins ends, before the next begins.
    kinds = [e.kind for e in events if e.kind != "advance"]
    assert kinds == ["begin", "end"] * 7
    # A counted step advances up to its total, with the time left known
    # once work is done.
    first_pass = [e for e in events if e.detail == "pass 1/2"]
    assert (first_pass[0].total, first_pass[0].unit, first_pass[0].eta_s) == (64, "samples", None)
    done = [e.done for e in first_pass]
    assert done == sorted(done) and done[-1] == 64 and len(done) > 10
    advances = [e for e in first_pass if e.kind == "advance"]
    assert all(e.eta_s is not None and e.eta_s >= 0 and e.fraction == e.done / 64
               for e in advances)
    assert [e.fraction for e in events if e.step == "lower"] == [None, None]
    # Without quiet, the display and the output are printed as usual.
    captured = capfd.readouterr()
    assert "Compile  OK" in captured.out
    assert "Compile [3/6] calibrate pass 1/2: 64 samples" in captured.err


def test_quiet_prints_nothing_and_changes_no_byte(seed_dir, capfd):
    eulernpu.mxq_compile("model.onnx", "loud.mxq", calib_data_path="calibration/digits",
                         target_device="npu8")
    capfd.readouterr()
    events = []
    eulernpu.mxq_compile("model.onnx", "quiet.mxq", calib_data_path="calibration/digits",
                         target_device="npu8", quiet=True, progress=events.append)
    assert capfd.readouterr() == ("", "")
    assert events  # the callback still hears everything
    assert files_of("quiet.mxq") == files_of("loud.mxq")
    eulernpu.parse("model.onnx", "q.mblt", quiet=True)
    assert capfd.readouterr() == ("", "") and os.path.exists("q.mblt")


def test_a_raising_callback_stops_the_command(seed_dir):
    class Stop(Exception):
        pass

    def stop_in_calibration(event):
        if event.step == "calibrate" and event.done >= 10:
            raise Stop()

    with pytest.raises(Stop):
        eulernpu.mxq_compile("model.onnx", "stopped.mxq", calib_data_path="calibration/digits",
                             target_device="npu8", progress=stop_in_calibration)
    assert not os.path.exists("stopped.mxq")
    assert not [f for f in os.listdir(".") if "stopped" in f]
    # The module works on after it.
    eulernpu.mxq_compile("model.onnx", "after.mxq", target_device="npu8", quiet=True)
    with pytest.raises(TypeError):
        eulernpu.mxq_compile("model.onnx", "x.mxq", progress="not callable")


def test_benchmark_progress_through_run_cli(seed_dir):
    eulernpu.mxq_compile("model.onnx", "f.mxq", quiet=True)
    events = []
    status = eulernpu.run_cli(["benchmark", "--artifact", "f.mxq", "--iterations", "3000",
                               "--warmup", "1"], progress=events.append, quiet=True)
    assert status == 0
    begun = [e.step for e in events if e.kind == "begin"]
    assert begun == ["load", "first run", "warm-up", "measure"]
    measure = [e for e in events if e.step == "measure"]
    assert measure[-1].done == measure[-1].total == 3000 and measure[-1].unit == "runs"
    # At most one advance a thousandth: the callback cannot slow the runs much.
    assert len(measure) <= 1002
