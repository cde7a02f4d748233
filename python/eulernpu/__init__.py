"""eulernpu from Python: the compiler's commands, run in this process.

    from eulernpu import mxq_compile

    mxq_compile(
        model="model.onnx",
        backend="onnx",
        calib_data_path="calibration/digits",
        target_device="npu8",
        save_path="model.mxq",
    )

The functions drive the same code as the `eulernpu` command line (no
second program is started): `mxq_compile` is `eulernpu compile`, `parse`
and `quantize` the two steps of it, and `python3 -m eulernpu COMMAND ...`
takes the command line's arguments. Errors raise `eulernpu.Error`
subclasses (eulernpu.errors) with the command line's title, where, fix and
catalog link. docs/python.md has the whole guide.
"""
import json
import os
import sys
import tempfile

from . import _native
from .progress import ProgressEvent
from .progress import _adapter as _progress_adapter
from .errors import (ArtifactError, BackendError, CalibrationError, ConfigError, Error,
                     InputFileError, LimitError, ModelError, PluginError, RunError, UsageError)

__all__ = ["mxq_compile", "parse", "quantize", "run_cli", "plugins", "capabilities", "Artifact",
           "ProgressEvent", "Error", "LimitError",
           "InputFileError", "ModelError", "CalibrationError", "ConfigError", "BackendError",
           "ArtifactError", "RunError", "UsageError", "PluginError"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def _installed_plugin_dir():
    """The plugins beside this module: <build>/lib/eulernpu/plugins in the
    build tree (<build>/python/eulernpu), <prefix>/lib/eulernpu/plugins
    once installed (<prefix>/lib/pythonX.Y/dist-packages/eulernpu)."""
    for rel in (("..", "..", "lib", "eulernpu", "plugins"), ("..", "..", "..", "eulernpu", "plugins")):
        d = os.path.normpath(os.path.join(_HERE, *rel))
        if os.path.isdir(d):
            return d
    return os.path.normpath(os.path.join(_HERE, "..", "..", "lib", "eulernpu", "plugins"))


def run_cli(args, plugin_dirs=None, progress=None, quiet=False):
    """Runs one command line, `args` as after `eulernpu` (["compile",
    "--model", ...]), with `plugin_dirs` as --plugin-dir. `progress` is
    called with each ProgressEvent (eulernpu.progress) of the command's
    long work; an exception it raises stops the command and is raised
    here. `quiet` prints nothing: no progress display (--quiet) and none of
    the command's output. Returns the exit status; an error raises Error."""
    argv = ["eulernpu"]
    for d in plugin_dirs or []:
        argv += ["--plugin-dir", os.fspath(d)]
    if quiet:
        argv.append("--quiet")
    argv += [os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args]
    callback = _progress_adapter(progress)
    if not quiet:
        return _native.run(argv, _installed_plugin_dir(), callback)
    status, _ = _with_stdout_captured(lambda: _native.run(argv, _installed_plugin_dir(), callback))
    return status


def _with_stdout_captured(fn):
    """Calls fn() with the process's standard output (file descriptor 1,
    where the commands print) going to a temporary file; returns what fn
    returned and what was printed. The redirection is the whole process's:
    not for two calls at once."""
    with tempfile.TemporaryFile() as f:
        sys.stdout.flush()
        saved = os.dup(1)
        try:
            os.dup2(f.fileno(), 1)
            result = fn()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        f.seek(0)
        return result, f.read().decode("utf-8")


def _shape_options(input_shapes):
    out = []
    for name, dims in (input_shapes or {}).items():
        out += ["--input-shape", f"{name}={','.join(str(int(d)) for d in dims)}"]
    return out


def _options(**named):
    """--name value for each given keyword (underscores as dashes)."""
    out = []
    for key, value in named.items():
        if value is not None:
            out += ["--" + key.replace("_", "-"), os.fspath(value)]
    return out


def _check(status, command):
    if status != 0:
        raise Error("internal error", f"eulernpu {command} returned {status}",
                    "report this as a bug", "docs/errors.md#internal-error")


class _calibration_source:
    """A directory or list file as it is; an iterable of {input name:
    array} written, sample by sample in its order, as the .npz files of a
    temporary directory that the calibration then reads (and that is
    removed after the command)."""

    def __init__(self, source):
        self.source, self.tmp = source, None

    def __enter__(self):
        if self.source is None or isinstance(self.source, (str, bytes, os.PathLike)):
            return self.source
        import numpy as np

        self.tmp = tempfile.TemporaryDirectory(prefix="eulernpu-calib-")
        for i, sample in enumerate(self.source):
            if not isinstance(sample, dict):
                raise CalibrationError(
                    "calibration data does not fit the model",
                    f"sample {i} of the calibration iterable is a {type(sample).__name__}, not a "
                    "dict of arrays", "yield one {input name: numpy array} per sample",
                    "docs/errors.md#calibration-data-does-not-fit-the-model")
            # Names in the iterable's order: the loader reads them sorted.
            np.savez(os.path.join(self.tmp.name, f"sample_{i:09d}.npz"),
                     **{str(k): np.asarray(v) for k, v in sample.items()})
        return self.tmp.name

    def __exit__(self, *exc):
        if self.tmp is not None:
            self.tmp.cleanup()
        return False


def mxq_compile(model, save_path, calib_data_path=None, backend=None, target_device=None,
                inference_scheme=None, config=None, preset=None, input_shapes=None,
                cpu_offload=None, plugin_dirs=None, progress=None, quiet=False):
    """Compiles `model` into the artifact `save_path` (a directory, or one
    file if it ends in .mxq): int8 with `calib_data_path`, else float32.
    As on the command line, `backend` may name the source framework
    ("onnx") and `target_device` alone picks the backend listing it.
    `input_shapes` fixes dynamic dimensions: {"input": (1, 3, 224, 224)}.
    `calib_data_path` may also be an iterable of {input name: array}, one
    per sample (a data loader of one's own). `progress` and `quiet` as
    for run_cli."""
    with _calibration_source(calib_data_path) as calib:
        args = ["compile", "--model", os.fspath(model)] + _options(
            backend=backend, target_device=target_device, inference_scheme=inference_scheme,
            calib_data_path=calib, config=config, preset=preset, cpu_offload=cpu_offload,
            output=save_path) + _shape_options(input_shapes)
        _check(run_cli(args, plugin_dirs, progress, quiet), "compile")


def parse(model, save_path, backend=None, input_shapes=None, plugin_dirs=None, quiet=False):
    """Parses `model` into the IR file `save_path` (.mblt), as `eulernpu
    parse`; `quiet` as for run_cli."""
    args = ["parse", "--model", os.fspath(model)] + _options(
        backend=backend, output=save_path) + _shape_options(input_shapes)
    _check(run_cli(args, plugin_dirs, quiet=quiet), "parse")


def quantize(mblt, calib_data_path, save_path, backend=None, target_device=None,
             inference_scheme=None, config=None, preset=None, plugin_dirs=None, progress=None,
             quiet=False):
    """Calibrates and quantizes the IR file `mblt` and compiles it into
    `save_path`, as `eulernpu quantize`; `calib_data_path`, `progress` and
    `quiet` as for mxq_compile."""
    with _calibration_source(calib_data_path) as calib:
        args = ["quantize", "--mblt", os.fspath(mblt)] + _options(
            calib_data_path=calib, backend=backend, target_device=target_device,
            inference_scheme=inference_scheme, config=config, preset=preset, output=save_path)
        _check(run_cli(args, plugin_dirs, progress, quiet), "quantize")


def _captured(args, plugin_dirs=None):
    """Runs a command line and returns what it printed."""
    status, text = _with_stdout_captured(lambda: run_cli(args, plugin_dirs))
    _check(status, args[0])
    return text


def plugins(plugin_dirs=None):
    """What `eulernpu plugins --json` prints, as Python data: the plugin
    ABI, the search path, every loaded plugin (name, kind, version, abi,
    path, description) and every rejected library with the reason."""
    return json.loads(_captured(["plugins", "--json"], plugin_dirs))


def capabilities(backend=None, op=None, plugin_dirs=None):
    """What `eulernpu capabilities --json` prints, as Python data: per
    backend its devices (core modes, default first) and the ops it declares
    with their dtypes, and the op x backend matrix. `backend` and `op`
    narrow it as the options do."""
    return json.loads(_captured(["capabilities", "--json"] + _options(backend=backend, op=op),
                                plugin_dirs))


class Artifact:
    """A compiled artifact (a directory or a .mxq file), opened once: its
    files checked against its manifest and its backend loaded, as `eulernpu
    run` does. `inputs` and `outputs` list each tensor's name, shape and
    dtype (numpy's name); `manifest` is manifest.json as a dict."""

    def __init__(self, path, plugin_dirs=None):
        self.path = os.fspath(path)
        self._native = _native.Artifact(self.path, [os.fspath(d) for d in plugin_dirs or []],
                                        _installed_plugin_dir())
        self.manifest = json.loads(self._native.manifest())
        self.inputs = [_describe(d) for d in self.manifest["inputs"]]
        self.outputs = [_describe(d) for d in self.manifest["outputs"]]

    def run(self, feeds, threads=0, report=False):
        """Runs the artifact on {input name: numpy array} and returns
        {output name: numpy array} in the manifest's order. Arrays in C
        order are read as they are (others are copied into it); the outputs
        are the backend's result buffers, not copies. `report` asks the
        backend for its report (npu_sim attaches one to every run)."""
        return self._native.run(dict(feeds), int(threads), bool(report))

    def report(self):
        """The report the backend attached to the last run (a dict:
        npu_sim's cycles, memory and traffic, ...), or None."""
        text = self._native.last_report()
        return json.loads(text) if text else None

    def __repr__(self):
        return f"Artifact({self.path!r}, backend {self.manifest['backend']['name']!r})"


def _describe(decl):
    return {"name": decl["name"], "shape": tuple(decl["shape"]), "dtype": decl["dtype"]}
