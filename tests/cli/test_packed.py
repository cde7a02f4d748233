"""Packed artifacts (.mxq): deterministic bytes, the same results as the
directory form, and hostile files refused with a three-line error."""
import os
import struct
import subprocess
import zipfile
import zlib

from harness import TINY_MLP, CliTestCase, compile_tiny_mlp

UNSAFE = "packed artifact has an unsafe entry"
CORRUPT = "packed artifact is corrupt"
TOO_BIG = "packed artifact exceeds a size limit"
MISMATCH = "packed artifact does not match its manifest"


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def members(path):
    """{name: bytes} of a zip file."""
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i) for i in z.infolist()}


def write_zip(path, entries):
    """Writes `entries` ([(ZipInfo or name, bytes)]) as a zip file, in order."""
    with zipfile.ZipFile(path, "w") as z:
        for info, data in entries:
            z.writestr(info, data)


def zip64_bomb(path, declared):
    """A zip whose one deflated entry, 'weights/w.npz', declares `declared`
    uncompressed bytes (in zip64 extra fields) but holds a few."""
    name = b"weights/w.npz"
    data = zlib.compress(b"x" * 100)[2:-4]  # raw deflate
    crc = zlib.crc32(b"x" * 100)
    local_extra = struct.pack("<HHQQ", 1, 16, declared, len(data))
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 8, 0, 0x21, crc,
                        0xFFFFFFFF, 0xFFFFFFFF, len(name), len(local_extra))
    local += name + local_extra + data
    central_extra = struct.pack("<HHQQ", 1, 16, declared, len(data))
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 8, 0, 0x21, crc,
                          0xFFFFFFFF, 0xFFFFFFFF, len(name), len(central_extra), 0, 0, 0,
                          0o100644 << 16, 0)
    central += name + central_extra
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local), 0)
    with open(path, "wb") as f:
        f.write(local + central + eocd)


class PackedArtifactTest(CliTestCase):
    def setUp(self):
        super().setUp()
        self.input = os.path.join(TINY_MLP, "input.npz")

    def compile(self, out):
        r = compile_tiny_mlp(out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "Compile  OK: 5 ops lowered · plan written\n")

    def test_compiling_twice_gives_identical_bytes(self):
        self.compile(self.path("a.mxq"))
        os.mkdir(self.path("elsewhere"))
        self.compile(self.path("elsewhere", "b.mxq"))
        self.assertEqual(read_bytes(self.path("a.mxq")), read_bytes(self.path("elsewhere", "b.mxq")))

    def test_holds_exactly_the_directory_artifact(self):
        self.compile(self.path("dir"))
        self.compile(self.path("a.mxq"))
        packed = members(self.path("a.mxq"))
        files = {os.path.relpath(os.path.join(d, f), self.path("dir")):
                 read_bytes(os.path.join(d, f))
                 for d, _, fs in os.walk(self.path("dir")) for f in fs}
        self.assertEqual(packed, files)
        with zipfile.ZipFile(self.path("a.mxq")) as z:
            infos = z.infolist()
        self.assertEqual([i.filename for i in infos], sorted(files))
        for i in infos:
            self.assertEqual(i.date_time, (1980, 1, 1, 0, 0, 0))
            self.assertEqual(i.extra, b"")
            self.assertEqual(i.external_attr >> 16, 0o100644)
            self.assertEqual(i.compress_type, zipfile.ZIP_DEFLATED
                             if i.filename.endswith(".json") else zipfile.ZIP_STORED)

    def test_run_gives_the_same_bytes_as_the_directory(self):
        self.compile(self.path("dir"))
        self.compile(self.path("a.mxq"))
        self.ok("run", "--artifact", self.path("dir"), "--input", self.input,
                "--out", self.path("r_dir.npz"))
        r = self.ok("run", "--artifact", self.path("a.mxq"), "--input", self.input,
                    "--out", self.path("r_mxq.npz"))
        self.assertEqual(r.stdout, "Run      OK: 1 output tensor (1, 4)\n")
        self.assertEqual(read_bytes(self.path("r_dir.npz")), read_bytes(self.path("r_mxq.npz")))

    def test_output_option_and_unzipped_copy(self):
        self.ok("compile", "--spec", os.path.join(TINY_MLP, "spec.yaml"), "--weights",
                os.path.join(TINY_MLP, "weights.npz"), "--output", self.path("a.mxq"))
        self.compile(self.path("b.mxq"))
        self.assertEqual(read_bytes(self.path("a.mxq")), read_bytes(self.path("b.mxq")))
        self.error("compile", "--spec", os.path.join(TINY_MLP, "spec.yaml"), "--weights",
                   os.path.join(TINY_MLP, "weights.npz"), "--out", self.path("c.mxq"),
                   "--output", self.path("d.mxq"), title="invalid command line")
        # `unzip` gives back a directory artifact that runs the same.
        subprocess.run(["unzip", "-q", self.path("a.mxq"), "-d", self.path("unpacked")],
                       check=True)
        for name in ("unpacked", "a.mxq"):
            self.ok("run", "--artifact", self.path(name), "--input", self.input,
                    "--out", self.path(name + ".npz"))
        self.assertEqual(read_bytes(self.path("unpacked.npz")), read_bytes(self.path("a.mxq.npz")))

    def test_failed_compile_leaves_nothing(self):
        self.error("compile", "--spec", os.path.join(TINY_MLP, "spec.yaml"),
                   "--out", self.path("a.mxq"), title="weights not provided")
        self.assert_absent(self.path("a.mxq"))
        self.error("compile", "--spec", os.path.join(TINY_MLP, "spec.yaml"), "--weights",
                   os.path.join(TINY_MLP, "weights.npz"), "--out", self.path("no", "a.mxq"),
                   title="cannot write output file")
        self.assertFalse(os.path.exists(self.path("no")))

    def test_never_replaces_something_else(self):
        with open(self.path("notes.mxq"), "w") as f:
            f.write("keep me")
        self.error("compile", "--spec", os.path.join(TINY_MLP, "spec.yaml"), "--weights",
                   os.path.join(TINY_MLP, "weights.npz"), "--out", self.path("notes.mxq"),
                   title="output path is in the way", where="notes.mxq")
        self.assertEqual(read_bytes(self.path("notes.mxq")), b"keep me")
        os.mkdir(self.path("d.mxq"))
        self.error("compile", "--spec", os.path.join(TINY_MLP, "spec.yaml"), "--weights",
                   os.path.join(TINY_MLP, "weights.npz"), "--out", self.path("d.mxq"),
                   title="output path is in the way")
        # An older packed artifact is replaced.
        self.compile(self.path("a.mxq"))
        self.compile(self.path("a.mxq"))
        self.assert_absent(self.path("a.mxq.tmp"))


class HostilePackedArtifactTest(CliTestCase):
    """Hand-made zips: each is refused with its error, naming file and entry."""

    def setUp(self):
        super().setUp()
        r = compile_tiny_mlp(self.path("good.mxq"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.good = members(self.path("good.mxq"))

    def refused(self, name, title, where=None):
        _, m = self.error("run", "--artifact", self.path(name), "--input",
                          os.path.join(TINY_MLP, "input.npz"), "--out", self.path("r.npz"),
                          title=title, where=where)
        self.assertIn(self.path(name), m["where"])
        self.assert_absent(self.path("r.npz"))
        return m

    def with_entries(self, name, extra=(), drop=(), replace=None):
        entries = [(n, replace.get(n, d) if replace else d)
                   for n, d in sorted(self.good.items()) if n not in drop]
        write_zip(self.path(name), entries + list(extra))

    def test_the_good_one_runs(self):
        self.with_entries("copy.mxq")  # written by Python's zipfile
        self.ok("run", "--artifact", self.path("copy.mxq"), "--input",
                os.path.join(TINY_MLP, "input.npz"), "--out", self.path("r.npz"))

    def test_names_that_escape(self):
        for i, bad in enumerate(["../evil", "/abs", "weights/../../evil", "a\\b", "./x", "a//b"]):
            with self.subTest(bad=bad):
                self.with_entries(f"e{i}.mxq", extra=[(zipfile.ZipInfo(bad), b"x")])
                self.refused(f"e{i}.mxq", UNSAFE, where=f"entry '{bad}'")

    def test_empty_name(self):
        self.with_entries("empty.mxq", extra=[(zipfile.ZipInfo(""), b"x")])
        self.refused("empty.mxq", UNSAFE)

    def test_duplicate_entry(self):
        self.with_entries("dup.mxq", extra=[("graph.json", self.good["graph.json"])])
        self.refused("dup.mxq", UNSAFE, where="'graph.json'")

    def test_directory_and_symlink_entries(self):
        self.with_entries("dir.mxq", extra=[(zipfile.ZipInfo("weights/"), b"")])
        self.refused("dir.mxq", UNSAFE, where="is a directory")
        link = zipfile.ZipInfo("weights/link.npz")
        link.create_system = 3
        link.external_attr = 0o120777 << 16
        self.with_entries("link.mxq", extra=[(link, b"/etc/passwd")])
        self.refused("link.mxq", UNSAFE, where="is a symbolic link")

    def test_tampered_member(self):
        graph = self.good["graph.json"] + b" "  # still valid JSON
        self.with_entries("tampered.mxq", replace={"graph.json": graph})
        self.refused("tampered.mxq", MISMATCH, where="entry 'graph.json'")

    def test_unlisted_and_missing_files(self):
        self.with_entries("extra.mxq", extra=[("notes.txt", b"hi")])
        self.refused("extra.mxq", MISMATCH, where="'notes.txt' is not listed")
        self.with_entries("missing.mxq", drop=["plan.json"])
        self.refused("missing.mxq", MISMATCH, where="lists 'plan.json'")
        self.with_entries("nomanifest.mxq", drop=["manifest.json"])
        self.refused("nomanifest.mxq", "not an artifact")

    def test_oversized_declared_size(self):
        zip64_bomb(self.path("bomb.mxq"), 1 << 40)
        self.refused("bomb.mxq", TOO_BIG, where="entry 'weights/w.npz'")

    def test_too_many_entries(self):
        self.with_entries("many.mxq", extra=[(f"x/{i}", b"") for i in range(10001)])
        self.refused("many.mxq", TOO_BIG)

    def test_truncated_and_damaged_files(self):
        data = read_bytes(self.path("good.mxq"))
        for cut in (len(data) // 2, len(data) - 10, 30):
            with self.subTest(cut=cut):
                with open(self.path("cut.mxq"), "wb") as f:
                    f.write(data[:cut])
                self.refused("cut.mxq", CORRUPT)
        # A flipped byte inside the stored weights: the CRC catches it.
        with zipfile.ZipFile(self.path("good.mxq")) as z:
            info = z.getinfo("weights/cpu_ref.npz")
        at = info.header_offset + 30 + len(info.filename) + len(info.extra) + 100
        with open(self.path("flip.mxq"), "wb") as f:
            f.write(data[:at] + bytes([data[at] ^ 1]) + data[at + 1:])
        self.refused("flip.mxq", CORRUPT, where="weights/cpu_ref.npz")

    def test_not_a_zip(self):
        with open(self.path("text.mxq"), "w") as f:
            f.write("not a zip file at all\n")
        self.refused("text.mxq", CORRUPT)
        with open(self.path("empty.mxq"), "w"):
            pass
        self.refused("empty.mxq", CORRUPT)
        with open(self.path("text.bin"), "w") as f:
            f.write("not a zip file at all\n")
        self.refused("text.bin", "not an artifact")
