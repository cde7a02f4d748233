"""Every command the docs show is run here, and its shown output checked.

Runnable examples are ```console blocks: lines starting with "$ " are shell
commands (a trailing backslash continues them), run from the repository root
with the built eulernpu first on PATH. The lines after a command are its
expected output: each must appear, in order, as a line of what the command
printed; a line "..." skips any number of lines. If the expected output has an
"error: " line the command must fail, otherwise it must succeed. Paths under
/tmp/ in commands and output are moved into a fresh directory of this run,
so runs never see each other's files.

Blocks of other languages (```sh for the quick-start scripts, ```yaml, ...)
are not run here: the quick-start commands are what CI itself runs.
"""
import glob
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import EULERNPU, SOURCE_DIR

FENCE = re.compile(r"^```(\w*)\s*$")


def console_blocks(path):
    """Yields (line number, [lines]) of each console block of a Markdown file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m and m.group(1) == "console":
            start, body = i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            yield start, body
        elif m:
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                i += 1
        i += 1


def commands(body):
    """[(command, [expected lines])] of a console block."""
    out = []
    i = 0
    while i < len(body):
        line = body[i]
        if not line.startswith("$ "):
            i += 1
            continue
        cmd = line[2:]
        while cmd.endswith("\\") and i + 1 < len(body):
            i += 1
            cmd = cmd[:-1] + " " + body[i].strip()
        expected = []
        i += 1
        while i < len(body) and not body[i].startswith("$ "):
            if body[i].strip():
                expected.append(body[i].rstrip())
            i += 1
        out.append((cmd, expected))
    return out


def matches(expected, actual):
    """Whether `expected` lines occur in order in `actual` ("..." skips)."""
    pos = 0
    skipping = True  # output before the first expected line is allowed
    for line in expected:
        if line.strip() == "...":
            skipping = True
            continue
        while pos < len(actual) and actual[pos].rstrip() != line:
            if not skipping:
                return False
            pos += 1
        if pos == len(actual):
            return False
        pos += 1
        skipping = False
    return True


class DocsCommandsTest(unittest.TestCase):
    def test_every_console_command_runs_as_shown(self):
        docs = sorted(glob.glob(os.path.join(SOURCE_DIR, "docs", "**", "*.md"), recursive=True))
        docs.append(os.path.join(SOURCE_DIR, "README.md"))
        docs += sorted(glob.glob(os.path.join(SOURCE_DIR, "examples", "*", "README.md")))
        env = dict(os.environ)
        env["PATH"] = os.path.dirname(EULERNPU) + os.pathsep + env["PATH"]
        env.pop("EULERNPU_PLUGIN_PATH", None)
        ran = 0
        scratch = tempfile.mkdtemp(prefix="eulernpu-docs-")
        self.addCleanup(shutil.rmtree, scratch, ignore_errors=True)

        def isolate(text):
            return text.replace("/tmp/", scratch + "/")

        for doc in docs:
            for start, body in console_blocks(doc):
                for cmd, expected in commands(body):
                    cmd, expected = isolate(cmd), [isolate(l) for l in expected]
                    with self.subTest(doc=os.path.relpath(doc, SOURCE_DIR), line=start, cmd=cmd):
                        r = subprocess.run(["bash", "-c", cmd], cwd=SOURCE_DIR, env=env,
                                           capture_output=True, text=True, timeout=600)
                        actual = (r.stdout + r.stderr).split("\n")
                        wants_error = any(l.startswith("error: ") for l in expected)
                        if wants_error:
                            self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
                        else:
                            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                        self.assertTrue(matches(expected, actual),
                                        "expected:\n" + "\n".join(expected) +
                                        "\n\ngot:\n" + r.stdout + r.stderr)
                        ran += 1
        self.assertGreater(ran, 20, "the docs should show (and this test run) real commands")


class MatcherTest(unittest.TestCase):
    def test_matcher_rules(self):
        self.assertTrue(matches(["a", "c"], ["x", "a", "c"]))
        self.assertFalse(matches(["a", "c"], ["a", "b", "c"]))
        self.assertTrue(matches(["a", "...", "c"], ["a", "b", "c"]))
        self.assertFalse(matches(["a"], ["b"]))
        self.assertEqual(commands(["$ a \\", "  b", "out", "$ c"]), [("a  b", ["out"]), ("c", [])])


if __name__ == "__main__":
    unittest.main()
