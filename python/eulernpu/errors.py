"""eulernpu's errors as Python exceptions.

Every error eulernpu reports has three lines and a link (docs/errors.md): a
title, where it happened, how to fix it, and the catalog entry. In Python
each is an `Error` carrying them as attributes, of the subclass of the
catalog section its title is listed in (ModelError for "Specs and models",
CalibrationError for "Calibration data", ...), so that a caller can catch
a kind of failure without matching titles:

    try:
        eulernpu.mxq_compile(model="model.onnx", save_path="model.mxq")
    except eulernpu.ModelError as e:
        print(e.title, e.where, e.fix, e.see)
"""
import os
import re


class Error(Exception):
    """An error eulernpu reported: `title`, `where`, `fix` and `see` (the
    catalog entry, docs/errors.md#...). str() gives the CLI's lines."""

    def __init__(self, title, where, fix, see):
        self.title, self.where, self.fix, self.see = title, where, fix, see
        super().__init__(f"{title}\n  where: {where}\n  fix: {fix}\n  See: {see}")


class LimitError(Error):
    """A file or value is over one of the loaders' bounds ("Limits")."""


class InputFileError(Error):
    """An .npz/.npy or other input file cannot be read ("Input files")."""


class ModelError(Error):
    """The model or spec is not valid or not supported ("Specs and models")."""


class CalibrationError(Error):
    """The calibration data does not fit the model ("Calibration data")."""


class ConfigError(Error):
    """A quantization config, preset or option is invalid ("Quantization settings")."""


class BackendError(Error):
    """No backend, device or core mode as asked, or the model does not fit
    it ("Backends and devices")."""


class ArtifactError(Error):
    """An artifact cannot be written, read or trusted ("Artifacts")."""


class RunError(Error):
    """Running or comparing failed ("Running and comparing")."""


class UsageError(Error):
    """The arguments are not valid ("Command line")."""


class PluginError(Error):
    """A plugin is missing, rejected, or misbehaved ("Plugins")."""


# The catalog's sections, in docs/errors.md's words.
SECTIONS = {
    "Limits": LimitError,
    "Input files": InputFileError,
    "Specs and models": ModelError,
    "Calibration data": CalibrationError,
    "Quantization settings": ConfigError,
    "Backends and devices": BackendError,
    "Artifacts": ArtifactError,
    "Running and comparing": RunError,
    "Command line": UsageError,
    "Plugins": PluginError,
}
# "The three common errors" are listed first for their frequency; each
# belongs with the kind of failure it is.
COMMON = {
    "weights tensor shape mismatch": ModelError,
    "backend lowering missing for op X": BackendError,
    "golden tensor key not found": RunError,
}
_GROUPS = set(SECTIONS) | {"The three common errors"}
_CATALOG = None


def catalog():
    """{title: class} of every error docs/errors.md lists."""
    global _CATALOG
    if _CATALOG is None:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "errors.md")
        out, section = {}, None
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.startswith("## "):
                    continue
                heading = line[3:].strip()
                if heading in _GROUPS:
                    section = heading
                elif heading in out:
                    continue  # listed twice (out of memory): the first says what it is
                elif section in SECTIONS:
                    out[heading] = SECTIONS[section]
                else:
                    out[heading] = COMMON.get(heading, Error)
        _CATALOG = out
    return _CATALOG


def class_for(title):
    """The Error subclass of a title. Titles that name a value ("backend
    lowering missing for op Conv") match their catalog entry's pattern."""
    table = catalog()
    if title in table:
        return table[title]
    for entry, cls in table.items():
        if entry.endswith(" X") and title.startswith(entry[:-1]):
            return cls
    return Error


def _raise(title, where, fix, see):
    """Called by the native part with a command's error."""
    raise class_for(title)(title, where, fix, see)
