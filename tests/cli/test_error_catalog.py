"""Every error title the code can raise has its section in docs/errors.md.

Titles are found in the sources: UserError("title", ...) in the host and
Error(ENP_..., "title", ...) in the SDK and plugins; the one title built at
run time ("backend lowering missing for op X") is checked by its anchor.
"""
import glob
import os
import re
import unittest

from harness import SOURCE_DIR, documented_anchors

TITLE = re.compile(r'(?:UserError|Error)\(\s*(?:ENP_[A-Z_]+,\s*)?"([^"]+)"', re.S)


def anchor(title):
    return re.sub(r"[^a-z0-9 _-]", "", title.lower()).replace(" ", "-")


class ErrorCatalogTest(unittest.TestCase):
    def test_every_title_is_documented(self):
        sources = []
        for pattern in ("host/src/**/*.cpp", "host/src/**/*.hpp", "sdk/include/**/*.hpp",
                        "plugins/**/*.cpp", "plugins/**/*.hpp"):
            sources += glob.glob(os.path.join(SOURCE_DIR, pattern), recursive=True)
        titles = set()
        for path in sources:
            with open(path, encoding="utf-8") as f:
                titles.update(TITLE.findall(f.read()))
        self.assertGreater(len(titles), 30)
        anchors = documented_anchors()
        missing = sorted(t for t in titles
                         if anchor(t) not in anchors and not t.endswith(" for op "))
        self.assertEqual(missing, [], "error titles without a docs/errors.md section")
        self.assertIn("backend-lowering-missing-for-op-x", anchors)


if __name__ == "__main__":
    unittest.main()
