"""Shared helpers of the real-model suite: models.json, the model cache, output keys."""
import json
import os
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS_JSON = os.path.join(HERE, "models.json")
REFERENCES_DIR = os.path.join(HERE, "references")


def load_models(path=MODELS_JSON):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _dump(v, indent):
    pad = "  " * indent
    if isinstance(v, dict):
        if not v:
            return "{}"
        items = [f'{pad}  {json.dumps(k)}: {_dump(x, indent + 1)}' for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list):
        if not v:
            return "[]"
        if all(not isinstance(x, (dict, list)) for x in v):  # lists of scalars on one line
            return "[" + ", ".join(json.dumps(x) for x in v) + "]"
        return "[\n" + ",\n".join(f"{pad}  {_dump(x, indent + 1)}" for x in v) + "\n" + pad + "]"
    return json.dumps(v)


def save_models(doc, path=MODELS_JSON):
    """Writes models.json atomically, keys in their order, short lists on one line."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(_dump(doc, 0) + "\n")
    os.replace(tmp, path)


def cache_dir():
    d = os.environ.get("EULERNPU_MODEL_CACHE")
    return d if d else os.path.join(os.path.expanduser("~"), ".cache", "eulernpu", "models")


def model_path(spec):
    return os.path.join(cache_dir(), spec["file"])


def ort_node_modules():
    return os.path.join(cache_dir(), "ort", "node_modules")


def output_key(name):
    """An npz-safe key for an output name (':' -> %3A, '/' -> %2F, ...)."""
    return urllib.parse.quote(name, safe="._-")


def reference_key(sample, output_name):
    return f"{sample}/{output_key(output_name)}"


def compile_args(spec):
    """The compile options an input spec asks for: --input-shape for its dynamic
    inputs ("input_shape_arg"), --freeze-input for inputs made constants
    ("freeze_input_arg", e.g. sr=16000, which lets the If on it fold)."""
    args = []
    for i in spec["inputs"]:
        if i.get("input_shape_arg"):
            args += ["--input-shape", i["input_shape_arg"]]
        if i.get("freeze_input_arg"):
            args += ["--freeze-input", i["freeze_input_arg"]]
    return args


def runtime_inputs(spec, sample):
    """A sample without the frozen inputs: what the compiled artifact takes
    (and what calibration reads)."""
    frozen = {i["name"] for i in spec["inputs"] if i.get("freeze_input_arg")}
    return {k: v for k, v in sample.items() if k not in frozen}
