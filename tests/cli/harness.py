"""Shared helpers for the CLI tests: run eulernpu, check the error format.

Paths come from the environment ctest sets (tests/CMakeLists.txt), so the
tests run the binaries of the build under test.
"""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

SOURCE_DIR = os.environ.get("EULERNPU_SOURCE_DIR",
                            os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD_DIR = os.environ.get("EULERNPU_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))
EULERNPU = os.environ.get("EULERNPU_BIN", os.path.join(BUILD_DIR, "bin", "eulernpu"))
PLUGIN_DIR = os.path.join(BUILD_DIR, "lib", "eulernpu", "plugins")
FIXTURE_DIR = os.environ.get("EULERNPU_FIXTURE_DIR", os.path.join(BUILD_DIR, "tests", "fixtures"))
TINY_MLP = os.path.join(SOURCE_DIR, "examples", "tiny_mlp")

ERROR_RE = re.compile(
    r"^error: (?P<title>.+)\n  where: (?P<where>.+)\n  fix: (?P<fix>.+)\n"
    r"  See: docs/errors\.md#(?P<anchor>[a-z0-9_-]+)\n$")


# Set in the sanitizer tree (scripts/sanitize.sh): every run's stderr is
# checked for a sanitizer report.
SANITIZED = os.environ.get("EULERNPU_SANITIZED") == "1"
SANITIZER_REPORT = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error: ")


def check_sanitizer_report(stderr):
    """Fails the running test if `stderr` holds a sanitizer report."""
    if SANITIZED and stderr and SANITIZER_REPORT.search(stderr):
        raise AssertionError("sanitizer report:\n" + stderr[-6000:])


def run(*args, env=None, cwd=None, timeout=300, memory_limit=None, file_size_limit=None):
    """Runs eulernpu with `args`; returns the CompletedProcess (text mode).
    `memory_limit` caps its address space in bytes (as ulimit -v does);
    `file_size_limit` the size of any file it writes (ulimit -f), with
    SIGXFSZ ignored so that a write past it fails as on a full disk."""
    if memory_limit is not None and SANITIZED:
        raise unittest.SkipTest("an address-space limit cannot hold a sanitizer's shadow memory")
    full_env = dict(os.environ)
    full_env.pop("EULERNPU_PLUGIN_PATH", None)
    if env:
        full_env.update(env)
    limit = None
    if memory_limit is not None or file_size_limit is not None:
        import resource
        import signal

        def limit():
            if memory_limit is not None:
                resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
            if file_size_limit is not None:
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # kept across exec
                resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))
    r = subprocess.run([EULERNPU, *args], capture_output=True, text=True,
                       env=full_env, cwd=cwd, timeout=timeout, preexec_fn=limit)
    check_sanitizer_report(r.stderr)
    return r


class CliTestCase(unittest.TestCase):
    """A test case with a fresh temporary directory per test."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="eulernpu-test-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def ok(self, *args, **kw):
        r = run(*args, **kw)
        self.assertEqual(r.returncode, 0, f"eulernpu {' '.join(args)} failed:\n{r.stdout}{r.stderr}")
        return r

    def error(self, *args, title, where=None, **kw):
        """Asserts a three-line error whose title is `title` (a regex if it
        has regex metacharacters) and whose anchor exists in docs/errors.md."""
        r = run(*args, **kw)
        self.assertNotEqual(r.returncode, 0, f"expected failure: {r.stdout}{r.stderr}")
        m = ERROR_RE.match(_last_error(r.stderr))
        self.assertIsNotNone(m, f"not a three-line error:\n{r.stderr}")
        self.assertRegex(m["title"], f"^{title}$")
        if where is not None:
            self.assertIn(where, m["where"])
        self.assertIn(m["anchor"], documented_anchors(), f"no anchor for {m['title']!r}")
        return r, m

    def assert_absent(self, path):
        self.assertFalse(os.path.exists(path), f"{path} was left behind")
        parent = os.path.dirname(path) or "."
        base = os.path.basename(path)
        # Directories stage as NAME.staging-*, files as the hidden .NAME.tmp-*.
        leftovers = [f for f in os.listdir(parent)
                     if f.startswith(base + ".") or f.startswith("." + base + ".")]
        self.assertEqual(leftovers, [], "temporary files were left behind")


def _last_error(stderr):
    """The error block: from the last 'error: ' line to the end."""
    idx = stderr.rfind("error: ")
    return stderr[idx:] if idx >= 0 else stderr


_ANCHORS = None


def documented_anchors():
    """Anchors of the '## ' headings in docs/errors.md (GitHub style)."""
    global _ANCHORS
    if _ANCHORS is None:
        _ANCHORS = set()
        with open(os.path.join(SOURCE_DIR, "docs", "errors.md"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("## "):
                    heading = line[3:].strip().lower()
                    anchor = re.sub(r"[^a-z0-9 _-]", "", heading).replace(" ", "-")
                    _ANCHORS.add(anchor)
    return _ANCHORS


def compile_tiny_mlp(out, *extra):
    return run("compile", "--spec", os.path.join(TINY_MLP, "spec.yaml"),
               "--weights", os.path.join(TINY_MLP, "weights.npz"), "--out", out, *extra)


def rehash_manifest(artifact):
    """Records every file of a directory artifact in its manifest.json again,
    as someone who edits a file and recomputes the hashes would: what the
    backend's own checks must then catch is left for them."""
    import hashlib
    import json as _json
    path = os.path.join(artifact, "manifest.json")
    with open(path) as f:
        manifest = _json.load(f)
    files = {}
    for root, _, names in os.walk(artifact):
        for name in names:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, artifact)
            if rel == "manifest.json":
                continue
            with open(full, "rb") as f:
                data = f.read()
            files[rel] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    manifest["files"] = files
    with open(path, "w") as f:
        _json.dump(manifest, f)
