#!/usr/bin/python3
"""The real-model suite in int8: how close the quantized model stays to the float one.

For each model of models.json (except those whose known gap is at the compile
stage: test_fp32 checks that the gap is still there), in a temporary directory:

  1. its calibration samples (inputs.py kind=calib) and held-out samples
     (kind=heldout), one .npz per sample, keys = input names;
  2. eulernpu compile                                  -> f32.art (fp32, cpu_ref)
     eulernpu compile --calib-data-path CALIB --report rep.json
                      --sensitivity-samples 0 --save-quantized-ir q.mblt -> cpu.mxq (int8, cpu_ref)
     eulernpu compile --calib-data-path CALIB --backend npu_sim
                      --target-device npu8 --inference-scheme single    -> npu.mxq
     (with EULERNPU_REAL_MODELS_FULL=1: every device and core mode that
     `eulernpu capabilities --backend npu_sim --json` lists);
     eulernpu compile --mblt q.mblt --backend fpga_board --target-device B
                      for each board B of FPGA_BOARDS            -> fpga_B.mxq
  3. every held-out sample on the fp32 and int8 cpu_ref artifacts; the
     first IDENTITY_SAMPLES of them (all with EULERNPU_REAL_MODELS_FULL=1)
     on each npu_sim and fpga_board artifact, whose result must be
     byte-identical to the int8 cpu_ref one (decoded arrays with equal
     dtypes, and the .npz bytes, which eulernpu writes deterministically);
     the first ISA_SAMPLES again on the int8 cpu_ref artifact with each
     other int8 GEMM (EULERNPU_CPU_REF_ISA=scalar, avx2), the same bytes;
  4. the figures, int8 against fp32 over all held-out samples:
       SQNR dB per output   10*log10(sum f^2 / sum (f-q)^2), float64
       top-1 agreement      classifiers (category "classifier*"): argmax equal, %
       MACs in int8 %       from q.mblt: QConv/QConvTranspose/QGemm/QMatMul MACs
                            over those plus Conv/ConvTranspose/Gemm/MatMul ones
                            (Conv: out elements x C/g x kernel; ConvTranspose:
                            in elements x O/g x kernel; Gemm/MatMul: out elements x K)
       float32 nodes kept   the report's float32_nodes
       npu_sim partitions   "N partitions" of the npu8/single compile's stdout, else 1
     and the goals: classifier top-1 >= 99 %, other models' outputs >= 25 dB,
     CNNs (Conv/ConvTranspose >= half the MACs) >= 95 % of the MACs in int8.

The models with an "int8_target_db" are measured a second time (test_int8_target_figures):
the cpu_ref compile adds --accuracy-target DB, npu_sim compiles that quantized IR
(compile --mblt q.mblt), and the figures go in the doc's second table (between
<!-- int8-target-table:begin --> and <!-- int8-target-table:end -->), checked the same
way. The default run measures those with "int8_target_in_default_suite"; a full run all.

A model of models.json "int8_known_gaps" must still fail as recorded there
(stage, error, where), so that fixing the gap fails the test until the entry
is removed. A goal missed does not fail the test, but the table of docs/real_models.md
(between <!-- int8-table:begin --> and <!-- int8-table:end -->) must agree
with the measurement: SQNR within 0.1 dB, agreement within one held-out
sample, MAC share within 0.1 %, the other columns exactly, "goal met" too.
Regenerate it with

    /usr/bin/python3 tests/real_models/test_int8.py --write-docs

(`--measure ID... [--config F] [--int8-args='--equalize']` prints a model's
figures, worst values and float32 nodes instead, for diagnosis), and run the test with

    cd tests/real_models && /usr/bin/python3 -m unittest -v test_int8

Environment: as test_fp32 (EULERNPU_BIN, EULERNPU_SOURCE_DIR, EULERNPU_BUILD_DIR,
EULERNPU_MODEL_CACHE, EULERNPU_REAL_MODELS=id,id, EULERNPU_REAL_MODELS_REPORT=FILE:
the figures and wall times go into each model's "int8" entry of that JSON file),
plus EULERNPU_REAL_MODELS_FULL=1 (every npu_sim device and core mode).
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import harness  # noqa: E402
import inputs  # noqa: E402
import suite  # noqa: E402
import test_fp32 as fp32  # noqa: E402  (a module: its TestCase is not collected here)

DOC = fp32.DOC
DOC_PATH = os.path.join(harness.SOURCE_DIR, "docs", "real_models.md")
BEGIN, END = "<!-- int8-table:begin -->", "<!-- int8-table:end -->"
# the same table for the models with an "int8_target_db", quantized with --accuracy-target
TARGET_BEGIN, TARGET_END = "<!-- int8-target-table:begin -->", "<!-- int8-target-table:end -->"
GOALS = {"classifier_top1_pct": 99.0, "dense_sqnr_db": 25.0, "cnn_int8_macs_pct": 95.0}
DOC_TOL = {"sqnr_db": 0.1, "top1_samples": 1, "macs_pct": 0.1}
DEFAULT_TARGETS = [("npu8", "single")]
# fpga_board runs the quantized IR on its PL engine's model and the PS: the
# smallest engine (B512, PYNQ-Z2's) and the largest (B4096, ZCU102's)
# cut every layer into tiles differently.
FPGA_BOARDS = ["pynq-z2", "zcu102"]
# The figures need every held-out sample in fp32 and int8; the byte identity
# of the other backends is checked on the first few in the default suite
# (each sample is one process per artifact: most of the suite's time went to
# re-checking identity on up to 100 samples per model), on all in the full run.
IDENTITY_SAMPLES = 8
# The int8 GEMM variants checked against the default one, on this many samples.
ISA_VARIANTS = ("scalar", "avx2")
ISA_SAMPLES = 2
MAC_OPS = {"Conv": "conv", "ConvTranspose": "convt", "Gemm": "gemm", "MatMul": "matmul",
           "QConv": "conv", "QConvTranspose": "convt", "QGemm": "qgemm", "QMatMul": "matmul",
           "ConvInteger": "conv", "MatMulInteger": "matmul"}
PARTITIONS_RE = re.compile(r"(\d+) partitions?:")
# what a run sees while the build directory is being rebuilt: retried once
RETRY_TITLES = {"backend not found", "quantizer not found", "target device not found", "no frontend for this model"}


def full_run():
    return os.environ.get("EULERNPU_REAL_MODELS_FULL", "") not in ("", "0")


def compile_gap(spec):
    """The model's fp32 known gap if it is at the compile stage (test_fp32 checks it)."""
    gap = DOC.get("known_gaps", {}).get(spec["id"])
    return gap if gap and gap["stage"] == "compile" else None


def int8_gap(spec):
    """The model's int8_known_gaps entry: an int8 failure that must still happen as recorded."""
    return DOC.get("int8_known_gaps", {}).get(spec["id"])


def gap_mismatch(gap, e):
    """Why StageFailed e is not the recorded gap (None if it is)."""
    if (e.stage, e.title) != (gap["stage"], gap["error"]):
        return f"fails as {e.stage}: {e.title}, recorded as {gap['stage']}: {gap['error']}"
    if gap.get("where_contains") and gap["where_contains"] not in e.where:
        return f"fails at {e.where!r}, recorded at ...{gap['where_contains']!r}..."
    return None


def npu_sim_targets():
    """[(device, core mode)] of every device npu_sim lists, default mode first."""
    r = fp32._eulernpu("capabilities", "capabilities", "--backend", "npu_sim", "--json")
    caps = json.loads(r.stdout)
    out = []
    for b in caps["backends"]:
        if b["name"] == "npu_sim":
            for d in b["devices"]:
                out += [(d["name"], mode) for mode in d["core_modes"]]
    if not out:
        raise RuntimeError("eulernpu capabilities lists no npu_sim device")
    return out


# ---------------------------------------------------------------------------
# figures
def sqnr_db(f2, noise2):
    if noise2 == 0.0:
        return math.inf
    if f2 == 0.0:
        return -math.inf
    return 10.0 * math.log10(f2 / noise2)


def _dims(t):
    return [d.dim_value if d.HasField("dim_value") else None for d in t.type.tensor_type.shape.dim]


def count_macs(mblt_path):
    """MACs of the matrix ops of an IR file: {"int8", "float", "conv"} (conv: of both
    precisions, Conv and ConvTranspose only), with shapes from the IR's value_info,
    inputs, outputs and initializers."""
    import onnx  # only needed here
    from onnx import helper
    m = onnx.load(mblt_path)
    g = m.graph
    shapes = {t.name: list(t.dims) for t in g.initializer}
    for v in list(g.input) + list(g.output) + list(g.value_info):
        shapes.setdefault(v.name, _dims(v))

    def shape(name, node):
        s = shapes.get(name)
        if s is None or any(d is None for d in s):
            raise ValueError(f"{mblt_path}: no static shape for {name!r} (input/output of {node.name!r})")
        return s

    macs = {"int8": 0, "float": 0, "conv": 0}
    for n in g.node:
        kind = MAC_OPS.get(n.op_type)
        if kind is None:
            continue
        int8 = n.op_type.startswith("Q") or n.op_type.endswith("Integer")
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if kind == "conv":
            w = shape(n.input[1], n)
            k = int(np.prod(shape(n.output[0], n))) * w[1] * int(np.prod(w[2:]))
        elif kind == "convt":
            w = shape(n.input[1], n)
            k = int(np.prod(shape(n.input[0], n))) * w[1] * int(np.prod(w[2:]))
        elif kind == "qgemm":  # W (N, K)
            k = int(np.prod(shape(n.output[0], n))) * shape(n.input[1], n)[1]
        elif kind == "gemm":
            a = shape(n.input[0], n)
            k = int(np.prod(shape(n.output[0], n))) * (a[-2] if attrs.get("transA", 0) else a[-1])
        else:  # MatMul / QMatMul: A (..., M, K)
            a = shape(n.input[0], n)
            k = int(np.prod(shape(n.output[0], n))) * (a[-1] if len(a) > 1 else a[0])
        macs["int8" if int8 else "float"] += k
        if kind in ("conv", "convt"):
            macs["conv"] += k
    return macs


def _run(stage, *args, env=None):
    """(eulernpu result, wall seconds); retries once after a pause if the binary
    or a plugin is missing (the build directory may be being rebuilt)."""
    t0 = time.monotonic()
    try:
        r = fp32._eulernpu(stage, *args, env=env)
    except fp32.StageFailed as e:
        if e.title not in RETRY_TITLES and "without a three-line error" not in e.title:
            raise
        time.sleep(20)
        t0 = time.monotonic()
        r = fp32._eulernpu(stage, *args, env=env)
    except OSError:  # no binary, or one being written (ETXTBSY, EACCES)
        time.sleep(20)
        t0 = time.monotonic()
        r = fp32._eulernpu(stage, *args, env=env)
    return r, time.monotonic() - t0


def _load(path):
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def measure(spec, tmp, targets=None, int8_args=(), target_db=None):
    """Compiles and runs one model in fp32, int8 cpu_ref and int8 npu_sim; returns its figures.
    int8_args: more options for both int8 compiles (e.g. --config, for diagnosis).
    target_db: quantize once with --accuracy-target target_db (cpu_ref) and compile that
    quantized IR for npu_sim (the search runs once, not per target).
    Raises fp32.StageFailed if eulernpu fails."""
    targets = targets or DEFAULT_TARGETS
    model = suite.model_path(spec)
    shape_args = suite.compile_args(spec)  # --input-shape, --freeze-input
    calib, held = os.path.join(tmp, "calib"), os.path.join(tmp, "heldout")
    inputs.write_samples(spec["id"], "calib", spec["calibration_samples"], calib, DOC)  # without frozen inputs
    held_files = [p for p, _ in inputs.write_samples(spec["id"], "heldout", spec["heldout_samples"], held, DOC)]
    f32, cpu = os.path.join(tmp, "f32.art"), os.path.join(tmp, "cpu.mxq")
    rep, qir = os.path.join(tmp, "rep.json"), os.path.join(tmp, "q.mblt")
    times = {}
    _, times["compile_fp32_s"] = _run("compile", "compile", "--model", model, *shape_args, "--out", f32)
    _, times["calibrate_compile_int8_s"] = _run(
        "compile", "compile", "--model", model, *shape_args, "--calib-data-path", calib, "--out", cpu,
        "--report", rep, "--sensitivity-samples", "0", "--save-quantized-ir", qir, *int8_args,
        *(["--accuracy-target", f"{target_db:g}"] if target_db is not None else []))
    npus = []
    for dev, mode in targets:
        out = os.path.join(tmp, f"npu_{dev}_{mode}.mxq")
        source = (["--mblt", qir] if target_db is not None else
                  ["--model", model, *shape_args, "--calib-data-path", calib, *int8_args])
        r, t = _run("compile", "compile", *source, "--backend", "npu_sim", "--target-device", dev,
                    "--inference-scheme", mode, "--out", out)
        m = PARTITIONS_RE.search(r.stdout)
        npus.append({"target": f"{dev}/{mode}", "artifact": out, "compile_s": t,
                     "partitions": int(m.group(1)) if m else 1})
    times["calibrate_compile_npu_sim_s"] = npus[0]["compile_s"]
    for board in FPGA_BOARDS:
        out = os.path.join(tmp, f"fpga_{board}.mxq")
        _run("compile", "compile", "--mblt", qir, "--backend", "fpga_board", "--target-device",
             board, "--out", out)
        npus.append({"target": f"fpga_board/{board}", "artifact": out, "compile_s": 0.0,
                     "partitions": 1})

    names = [o["name"] for o in spec["outputs"]]
    sums = {n: {"f2": 0.0, "noise2": 0.0, "elements": 0, "nonfinite": 0} for n in names}
    classifier = spec["category"].startswith("classifier")
    agree = 0
    mismatches = []
    run_t = {"fp32": 0.0, "int8": 0.0, "npu_sim": 0.0}
    identity_runs = 0
    for i, sample in enumerate(held_files):
        base = os.path.splitext(sample)[0]
        _, t = _run("run", "run", "--artifact", f32, "--input", sample, "--out", base + ".f32.npz")
        run_t["fp32"] += t
        _, t = _run("run", "run", "--artifact", cpu, "--input", sample, "--out", base + ".int8.npz")
        run_t["int8"] += t
        f, q = _load(base + ".f32.npz"), _load(base + ".int8.npz")
        with open(base + ".int8.npz", "rb") as fh:
            q_bytes = fh.read()
        for npu in (npus if full_run() or i < IDENTITY_SAMPLES else []):
            out = f"{base}.{npu['target'].replace('/', '_')}.npz"
            _, t = _run("run", "run", "--artifact", npu["artifact"], "--input", sample, "--out", out)
            if npu is npus[0]:
                run_t["npu_sim"] += t
                identity_runs += 1
            got = _load(out)
            for n in names:
                if n not in got or got[n].dtype != q[n].dtype or not np.array_equal(got[n], q[n]):
                    mismatches.append(f"{npu['target']} {os.path.basename(sample)} {n}: differs from int8 cpu_ref")
            with open(out, "rb") as fh:
                if fh.read() != q_bytes:
                    mismatches.append(f"{npu['target']} {os.path.basename(sample)}: result .npz bytes differ")
        # cpu_ref's other int8 GEMMs (docs/backends/cpu_ref.md), chosen by
        # name; a name this CPU cannot run falls back to the default.
        for isa in (ISA_VARIANTS if full_run() or i < ISA_SAMPLES else ()):
            out = f"{base}.isa_{isa}.npz"
            _run("run", "run", "--artifact", cpu, "--input", sample, "--out", out,
                 env={"EULERNPU_CPU_REF_ISA": isa})
            with open(out, "rb") as fh:
                if fh.read() != q_bytes:
                    mismatches.append(f"cpu_ref EULERNPU_CPU_REF_ISA={isa} {os.path.basename(sample)}: "
                                      "result .npz bytes differ")
        for n in names:
            a, b = f[n].astype(np.float64), q[n].astype(np.float64)
            ok = np.isfinite(a)
            s = sums[n]
            s["f2"] += float(np.sum(a[ok] ** 2))
            s["noise2"] += float(np.sum((a[ok] - b[ok]) ** 2))
            s["elements"] += int(ok.sum())
            s["nonfinite"] += int((~ok).sum())
        if classifier:
            o = names[0]
            agree += int(np.argmax(f[o].reshape(-1)) == np.argmax(q[o].reshape(-1)))
    nheld = len(held_files)

    with open(rep, encoding="utf-8") as fh:
        report = json.load(fh)
    macs = count_macs(qir)
    total = macs["int8"] + macs["float"]
    res = {
        "calibration_samples": spec["calibration_samples"],
        "heldout_samples": nheld,
        "outputs": {n: dict(s, sqnr_db=sqnr_db(s["f2"], s["noise2"])) for n, s in sums.items()},
        "top1": {"agree": agree, "samples": nheld, "pct": 100.0 * agree / nheld} if classifier else None,
        "macs": dict(macs, int8_pct=100.0 * macs["int8"] / total if total else None,
                     conv_share=macs["conv"] / total if total else 0.0),
        "float32_nodes": report["float32_nodes"],
        "accuracy": report.get("accuracy"),
        "int8_values": len(report["layers"]),
        "worst_values": [{k: v[k] for k in ("value", "node", "op_type", "sqnr_db")}
                         for v in sorted(report["layers"], key=lambda v: float(v["sqnr_db"]))[:5]],
        "npu_sim": [{k: v for k, v in n.items() if k != "artifact"} for n in npus],
        "npu_sim_partitions": npus[0]["partitions"],
        "mismatches": mismatches,
        "times": dict(times, run_fp32_s_per_sample=run_t["fp32"] / nheld, run_int8_s_per_sample=run_t["int8"] / nheld,
                      run_npu_sim_s_per_sample=run_t["npu_sim"] / max(1, identity_runs)),
    }
    res["goals"] = goals(spec, res)
    res["goal_met"] = all(g["met"] for g in res["goals"])
    return res


def goals(spec, res):
    """The goals that apply to a model, each {"goal", "value", "met"}."""
    out = []
    if spec["category"].startswith("classifier"):
        v = res["top1"]["pct"]
        out.append({"goal": f"top-1 >= {GOALS['classifier_top1_pct']:g} %", "value": v,
                    "met": v >= GOALS["classifier_top1_pct"],
                    "miss": f"top-1 {v:.1f} % < {GOALS['classifier_top1_pct']:g} %"})
    else:
        for n, o in res["outputs"].items():
            v = o["sqnr_db"]
            out.append({"goal": f"{n} >= {GOALS['dense_sqnr_db']:g} dB", "value": v,
                        "met": v >= GOALS["dense_sqnr_db"],
                        "miss": f"{n} {v:.1f} dB < {GOALS['dense_sqnr_db']:g} dB"})
    if res["macs"]["conv_share"] >= 0.5:
        v = res["macs"]["int8_pct"]
        out.append({"goal": f"int8 MACs >= {GOALS['cnn_int8_macs_pct']:g} %", "value": v,
                    "met": v >= GOALS["cnn_int8_macs_pct"],
                    "miss": f"MACs in int8 {v:.2f} % < {GOALS['cnn_int8_macs_pct']:g} %"})
    return out


# ---------------------------------------------------------------------------
# the doc table
COLUMNS = ["model", "calib / held-out", "outputs' SQNR dB", "top-1 agreement", "MACs in int8",
           "float32 nodes kept", "npu_sim partitions", "goal met"]


def _num(v, digits):
    return v if isinstance(v, str) else ("inf" if v == math.inf else "-inf" if v == -math.inf else f"{v:.{digits}f}")


def gap_row(spec):
    """The table row of a model that is not measured, or None."""
    gap, what = compile_gap(spec), "fp32 compile fails"
    if gap is None:
        gap, what = int8_gap(spec), "int8 compile fails"
    if gap is None:
        return None
    return (f"| `{spec['id']}` | {spec['calibration_samples']} / {spec['heldout_samples']} | "
            f"not measured: {what} ({gap['error']}; known gap, models.json) | – | – | – | – | – |")


def table_row(spec, res):
    if res is None:
        return gap_row(spec)
    sq = "<br>".join(f"`{n}` {_num(o['sqnr_db'], 2)}" for n, o in res["outputs"].items())
    t = res["top1"]
    top1 = f"{t['pct']:.1f} % ({t['agree']}/{t['samples']})" if t else "–"
    mac = res["macs"]["int8_pct"]
    mac = "–" if mac is None else f"{mac:.2f} %"
    fl = len(res["float32_nodes"])
    misses = [g["miss"] for g in res["goals"] if not g["met"]]
    met = "yes" if not misses else "no: " + "; ".join(misses)
    return (f"| `{spec['id']}` | {res['calibration_samples']} / {res['heldout_samples']} | {sq} | {top1} | "
            f"{mac} | {fl} | {res['npu_sim_partitions']} | {met} |")


def target_models(selected=None):
    """The models with an accuracy target (models.json "int8_target_db"), of `selected` if given.
    The default suite measures those with "int8_target_in_default_suite"; a full run all."""
    models = selected if selected is not None else DOC["models"]
    return [m for m in models if m.get("int8_target_db") is not None and not compile_gap(m) and not int8_gap(m)]


def make_table(results, old_rows=None, with_target=False):
    """The table for every model of models.json (with_target: every target model): measured
    rows from `results`, the others from old_rows (the doc's current rows) when there."""
    old_rows = old_rows or {}
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for spec in (target_models() if with_target else DOC["models"]):
        mid = spec["id"]
        if mid in results or (not with_target and gap_row(spec)):
            lines.append(table_row(spec, results.get(mid)))
        elif mid in old_rows:
            lines.append(old_rows[mid])
    return "\n".join(lines)


def read_doc_rows(path=DOC_PATH, markers=(BEGIN, END)):
    """{model id: row line} of the doc's int8 table (or the one between `markers`); raises
    ValueError without markers."""
    begin, end = markers
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if begin not in text or end not in text:
        raise ValueError(f"{path}: no {begin} ... {end} markers")
    body = text.split(begin, 1)[1].split(end, 1)[0]
    rows = {}
    for line in body.splitlines():
        m = re.match(r"^\| `([^`]+)` \|", line)
        if m:
            rows[m.group(1)] = line
    return rows


def write_doc_table(results, path=DOC_PATH, with_target=False):
    begin, end = (TARGET_BEGIN, TARGET_END) if with_target else (BEGIN, END)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    table = make_table(results, read_doc_rows(path, (begin, end)), with_target)
    new = f"{head}{begin}\n{table}\n{end}{tail}"
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(new)
    os.replace(tmp, path)


def parse_row(line):
    cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
    if len(cells) != len(COLUMNS):
        raise ValueError(f"{len(cells)} cells, expected {len(COLUMNS)}: {line}")
    return dict(zip(COLUMNS, cells))


def _float(s):
    return float(s)  # also "inf" / "-inf"


def check_doc_row(spec, res, line):
    """The differences between a doc row and the measurement: a list of strings."""
    try:
        row = parse_row(line)
    except ValueError as e:
        return [str(e)]
    errs = []
    if row["calib / held-out"] != f"{res['calibration_samples']} / {res['heldout_samples']}":
        errs.append(f"calib / held-out {row['calib / held-out']!r}, measured with "
                    f"{res['calibration_samples']} / {res['heldout_samples']}")
    doc_sq = dict(re.findall(r"`([^`]+)` (-?inf|-?[0-9.]+)", row["outputs' SQNR dB"]))
    if sorted(doc_sq) != sorted(res["outputs"]):
        errs.append(f"SQNR outputs {sorted(doc_sq)} != {sorted(res['outputs'])}")
    for n, o in res["outputs"].items():
        if n in doc_sq:
            d, v = _float(doc_sq[n]), o["sqnr_db"]
            same = (d == v) if math.isinf(d) or math.isinf(v) else abs(d - v) <= DOC_TOL["sqnr_db"]
            if not same:
                errs.append(f"SQNR of {n}: doc {doc_sq[n]} dB, measured {_num(v, 2)} dB")
    t = res["top1"]
    if t is None:
        if row["top-1 agreement"] != "–":
            errs.append(f"top-1 agreement {row['top-1 agreement']!r} for a model that is no classifier")
    else:
        m = re.search(r"\((\d+)/(\d+)\)", row["top-1 agreement"])
        if not m or int(m.group(2)) != t["samples"] or abs(int(m.group(1)) - t["agree"]) > DOC_TOL["top1_samples"]:
            errs.append(f"top-1 agreement: doc {row['top-1 agreement']!r}, measured {t['agree']}/{t['samples']}")
    mac = res["macs"]["int8_pct"]
    m = re.match(r"^([0-9.]+) %$", row["MACs in int8"])
    if mac is None:
        if row["MACs in int8"] != "–":
            errs.append(f"MACs in int8: doc {row['MACs in int8']!r}, the model has no matrix op")
    elif not m or abs(float(m.group(1)) - mac) > DOC_TOL["macs_pct"]:
        errs.append(f"MACs in int8: doc {row['MACs in int8']!r}, measured {mac:.2f} %")
    if row["float32 nodes kept"] != str(len(res["float32_nodes"])):
        errs.append(f"float32 nodes kept: doc {row['float32 nodes kept']}, measured {len(res['float32_nodes'])}")
    if row["npu_sim partitions"] != str(res["npu_sim_partitions"]):
        errs.append(f"npu_sim partitions: doc {row['npu_sim partitions']}, measured {res['npu_sim_partitions']}")
    met = row["goal met"].split(":")[0]
    if met != ("yes" if res["goal_met"] else "no"):
        errs.append(f"goal met: doc {row['goal met']!r}, measured {'yes' if res['goal_met'] else 'no'} "
                    f"({'; '.join(g['miss'] for g in res['goals'] if not g['met']) or 'all met'})")
    return errs


# ---------------------------------------------------------------------------
def _summary(results):
    lines = [f"{'model':22s} {'SQNR dB (per output)':34s} {'top-1':>11s} {'int8 MACs':>9s} {'f32':>4s} "
             f"{'parts':>5s} {'calib s':>7s} {'f32 run s':>9s}  goal"]
    for mid, r in results.items():
        if "error" in r:
            lines.append(f"{mid:22s} {r['error']}")
            continue
        sq = " ".join(_num(o["sqnr_db"], 1) for o in r["outputs"].values())
        t = r["top1"]
        top1 = f"{t['agree']}/{t['samples']}" if t else "-"
        mac = r["macs"]["int8_pct"]
        lines.append(f"{mid:22s} {sq:34s} {top1:>11s} {('-' if mac is None else f'{mac:.2f}'):>9s} "
                     f"{len(r['float32_nodes']):4d} {r['npu_sim_partitions']:5d} "
                     f"{r['times']['calibrate_compile_int8_s']:7.2f} {r['times']['run_fp32_s_per_sample']:9.3f}  "
                     f"{'met' if r['goal_met'] else 'MISSED'}")
    return "\n".join(lines)


def write_report(results):
    """Merges the figures into each model's "int8" entry of $EULERNPU_REAL_MODELS_REPORT."""
    path = os.environ.get("EULERNPU_REAL_MODELS_REPORT")
    if not path or not results:
        return
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if not isinstance(doc, dict):
            doc = {}
    except (OSError, ValueError):
        doc = {}
    for mid, r in results.items():
        doc.setdefault(mid, {})["int8"] = r
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, default=str)  # inf -> Infinity is valid for Python's json
    os.replace(tmp, path)


class RealModelsInt8(unittest.TestCase):
    results = {}
    target_results = {}

    @classmethod
    def setUpClass(cls):
        if not os.path.exists(harness.EULERNPU):
            raise unittest.SkipTest(f"no eulernpu at {harness.EULERNPU}")
        fp32.fetch(fp32.selected_models())
        cls.targets = npu_sim_targets() if full_run() else DEFAULT_TARGETS

    @classmethod
    def tearDownClass(cls):
        if cls.results:
            print("\n" + _summary(cls.results), file=sys.stderr)
            write_report(cls.results)
        if cls.target_results:
            print("\nwith the accuracy target:\n" + _summary(cls.target_results), file=sys.stderr)

    def test_int8_figures(self):
        try:
            doc_rows = read_doc_rows()
        except (OSError, ValueError) as e:
            doc_rows, doc_error = None, str(e)
        for spec in fp32.selected_models():
            mid = spec["id"]
            with self.subTest(model=mid):
                if compile_gap(spec):
                    self.skipTest(f"{mid}: known gap at compile stage (test_fp32 checks it)")
                gap = int8_gap(spec)
                tmp = tempfile.mkdtemp(prefix=f"eulernpu-int8-{mid}-")
                try:
                    res = measure(spec, tmp, self.targets)
                except fp32.StageFailed as e:
                    self.results[mid] = {"error": f"{e.stage}: {e.title}" + (" (known gap)" if gap else "")}
                    if gap is None:
                        self.fail(f"{mid}: {e}")
                    why = gap_mismatch(gap, e)
                    self.assertIsNone(why, f"{mid}: fails differently from its int8_known_gaps entry: {why}\n{e}")
                    if doc_rows is not None:
                        self.assertEqual(doc_rows.get(mid), gap_row(spec), f"{mid}: the doc row of a known gap")
                    continue
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
                if gap is not None:
                    self.results[mid] = res
                    self.fail(f"{mid} now quantizes: remove it from int8_known_gaps in models.json "
                              f"(it was: {gap['stage']}: {gap['error']}) and run test_int8.py --write-docs")
                self.results[mid] = res
                self.assertEqual(res["mismatches"], [], f"{mid}: another backend or int8 GEMM is not bit-exact with int8 cpu_ref")
                for n, o in res["outputs"].items():
                    self.assertGreater(o["elements"], 0, f"{mid} {n}: no finite float32 element")
                if doc_rows is None:
                    self.fail(f"{DOC_PATH}: {doc_error}")
                self.assertIn(mid, doc_rows, f"{mid}: no row in {DOC_PATH}'s int8 table; "
                              "run /usr/bin/python3 tests/real_models/test_int8.py --write-docs")
                errs = check_doc_row(spec, res, doc_rows[mid])
                self.assertEqual(errs, [], f"{mid}: docs/real_models.md disagrees with the measurement "
                                 "(regenerate with test_int8.py --write-docs):\n  " + "\n  ".join(errs))


    def test_int8_target_figures(self):
        """The models that miss a goal in the default preset, quantized with their
        --accuracy-target (models.json "int8_target_db"): the second table of the doc."""
        try:
            doc_rows = read_doc_rows(markers=(TARGET_BEGIN, TARGET_END))
        except (OSError, ValueError) as e:
            self.fail(str(e))
        doc_ids = set(doc_rows)
        self.assertEqual(doc_ids, {m["id"] for m in target_models()},
                         f"{DOC_PATH}: the target table's models differ from models.json's int8_target_db ones")
        for spec in target_models(fp32.selected_models()):
            if not full_run() and not spec.get("int8_target_in_default_suite"):
                continue
            mid = spec["id"]
            with self.subTest(model=mid, target_db=spec["int8_target_db"]):
                tmp = tempfile.mkdtemp(prefix=f"eulernpu-int8-target-{mid}-")
                try:
                    res = measure(spec, tmp, self.targets, target_db=spec["int8_target_db"])
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
                self.target_results[mid] = res
                self.assertEqual(res["mismatches"], [], f"{mid}: another backend or int8 GEMM is not bit-exact with int8 cpu_ref")
                self.assertEqual(float(res["accuracy"]["target_db"]), spec["int8_target_db"])
                acc = res["accuracy"]
                if acc["met"]:  # the chosen round: the fewest nodes that met the target
                    chosen = [r for r in acc["rounds"] if float(r["sqnr_db"]) >= spec["int8_target_db"]]
                    self.assertEqual(min(r["kept"] for r in chosen), len(acc["kept_fp32"]),
                                     f"{mid}: kept_fp32 is not the smallest set that met the target")
                errs = check_doc_row(spec, res, doc_rows[mid])
                self.assertEqual(errs, [], f"{mid}: the accuracy-target table of docs/real_models.md disagrees "
                                 "with the measurement (regenerate with test_int8.py --write-docs):\n  " +
                                 "\n  ".join(errs))


def write_docs_main():
    targets = npu_sim_targets() if full_run() else DEFAULT_TARGETS
    ids = [a for m in fp32.selected_models() for a in ("--model", m["id"])]
    r = subprocess.run([fp32.FETCH, "--quiet", *ids], capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        raise SystemExit(f"scripts/fetch_models.sh failed:\n{r.stderr}")
    results, bad = {}, []
    t0 = time.monotonic()
    for spec in fp32.selected_models():
        if compile_gap(spec):
            continue
        tmp = tempfile.mkdtemp(prefix=f"eulernpu-int8-{spec['id']}-")
        try:
            results[spec["id"]] = res = measure(spec, tmp, targets)
        except fp32.StageFailed as e:
            if int8_gap(spec) and gap_mismatch(int8_gap(spec), e) is None:
                print(f"{spec['id']}: known int8 gap: {e.title}", file=sys.stderr)
                continue
            raise SystemExit(f"{spec['id']}: {e}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        bad += res["mismatches"]
        print(f"measured {spec['id']} ({time.monotonic() - t0:.0f} s)", file=sys.stderr)
    tresults = {}
    for spec in target_models(fp32.selected_models()):
        tmp = tempfile.mkdtemp(prefix=f"eulernpu-int8-target-{spec['id']}-")
        try:
            tresults[spec["id"]] = res = measure(spec, tmp, targets, target_db=spec["int8_target_db"])
        except fp32.StageFailed as e:
            raise SystemExit(f"{spec['id']} with --accuracy-target {spec['int8_target_db']:g}: {e}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        bad += res["mismatches"]
        print(f"measured {spec['id']} with its accuracy target ({time.monotonic() - t0:.0f} s)", file=sys.stderr)
    write_doc_table(results)
    write_doc_table(tresults, with_target=True)
    write_report(results)
    print(_summary(results), file=sys.stderr)
    print("with the accuracy target:\n" + _summary(tresults), file=sys.stderr)
    print(f"rewrote the int8 table of {DOC_PATH}", file=sys.stderr)
    if bad:
        print("npu_sim differs from int8 cpu_ref:\n  " + "\n  ".join(bad), file=sys.stderr)
        return 1
    return 0


def measure_main(ids, int8_args=()):
    """Prints one model's figures, its worst int8 values and its float32 nodes, for diagnosis
    (int8_args: more options for both int8 compiles, e.g. --config F or --equalize)."""
    results = {}
    for mid in ids:
        spec = inputs.model_spec(mid, DOC)
        tmp = tempfile.mkdtemp(prefix=f"eulernpu-int8-{mid}-")
        try:
            results[mid] = res = measure(spec, tmp, DEFAULT_TARGETS, tuple(int8_args))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(f"{mid}: the worst int8 values (report SQNR over the calibration samples):")
        for v in res["worst_values"]:
            print(f"  {float(v['sqnr_db']):7.2f} dB  {v['op_type']:16s} {v['value']}")
        print(f"{mid}: {len(res['float32_nodes'])} float32 node(s): " +
              ", ".join(f"{n['node']} ({n['op_type']})" for n in res["float32_nodes"]))
        for g in res["goals"]:
            print(f"  goal {g['goal']}: {'met' if g['met'] else 'MISSED'}")
    print(_summary(results))
    return 1 if any(r["mismatches"] for r in results.values()) else 0


if __name__ == "__main__":
    if "--write-docs" in sys.argv[1:]:
        sys.exit(write_docs_main())
    if "--measure" in sys.argv[1:]:
        import argparse
        ap = argparse.ArgumentParser(description="measure models in int8 without the doc check")
        ap.add_argument("--measure", nargs="+", metavar="ID", required=True)
        ap.add_argument("--config", help="a quantization config (docs/config.md) for both int8 compiles")
        ap.add_argument("--int8-args", default="", help="more options for both int8 compiles, one string "
                        "(--int8-args='--equalize')")
        a = ap.parse_args()
        import shlex
        extra = (["--config", a.config] if a.config else []) + shlex.split(a.int8_args)
        sys.exit(measure_main(a.measure, extra))
    unittest.main()
