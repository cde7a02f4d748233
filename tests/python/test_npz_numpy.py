"""numpy <-> eulernpu npz interoperability.

Usage: /usr/bin/python3 test_npz_numpy.py /path/to/npz_roundtrip

numpy writes npz files, npz_roundtrip reads them with read_npz and writes
them back with write_npz, and numpy must load exactly the arrays it wrote.
"""

import io
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile

import numpy as np

TOOL = None  # set from argv in __main__

DTYPES = ["<f2", "<f4", "<f8", "|i1", "|u1", "<i2", "<i4", "<i8", "|b1"]


def sample_arrays():
    """Arrays of every supported dtype: scalar, zero-size, 1-D and 4-D."""
    arrays = {}
    for descr in DTYPES:
        dt = np.dtype(descr)
        name = dt.name
        if dt.kind == "f":
            special = np.array(
                [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.25,
                 np.finfo(dt).tiny, np.finfo(dt).max, np.finfo(dt).min],
                dtype=dt)
            # A NaN with a payload, to check that bits, not values, survive.
            bits = special.view(f"<u{dt.itemsize}").copy()
            bits[0] |= bits.dtype.type(1)
            special = bits.view(dt)
        elif dt.kind == "b":
            special = np.array([True, False, True], dtype=dt)
        else:
            info = np.iinfo(dt)
            special = np.array([info.min, info.max, 0, 1, info.max // 3],
                               dtype=dt)
        arrays[f"{name}_vector"] = special
        arrays[f"{name}_scalar"] = special[1:2].reshape(())
        arrays[f"{name}_empty"] = np.zeros((0, 3), dtype=dt)
        arrays[f"{name}_4d"] = (
            np.arange(2 * 3 * 1 * 4).reshape(2, 3, 1, 4) * 7 - 20).astype(dt)
    # numpy has no bfloat16: eulernpu stores its bits as a one-field
    # structured array (docs/artifacts.md); 1.0, NaN with payload, -inf, -0.
    bf16 = np.dtype([("bfloat16", "<u2")])
    bits = np.array([0x3F80, 0x7FC1, 0xFF80, 0x8000], dtype="<u2")
    arrays["bfloat16_vector"] = bits.view(bf16)
    arrays["bfloat16_scalar"] = bits[:1].view(bf16).reshape(())
    arrays["bfloat16_4d"] = np.arange(24, dtype="<u2").reshape(2, 3, 1, 4).view(bf16)
    arrays["nested/key.with.dots"] = np.arange(5, dtype="<f4")
    return arrays


def run_tool(src, dst, compress):
    args = [TOOL, src, dst] + (["--compress"] if compress else [])
    return subprocess.run(args, capture_output=True, text=True, check=False)


def npy_bytes(array):
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


class NpzNumpyTest(unittest.TestCase):

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)

    def assert_same_arrays(self, expected, path):
        with np.load(path) as got:
            self.assertEqual(list(got.keys()), list(expected.keys()))
            for key, want in expected.items():
                with self.subTest(key=key):
                    have = got[key]
                    self.assertEqual(have.dtype, want.dtype)
                    self.assertEqual(have.shape, want.shape)
                    self.assertEqual(have.tobytes(), want.tobytes())

    def test_numpy_files_round_trip_bit_identical(self):
        arrays = sample_arrays()
        for writer in (np.savez, np.savez_compressed):
            src = self.path(f"{writer.__name__}.npz")
            writer(src, **arrays)
            for compress in (False, True):
                with self.subTest(writer=writer.__name__, compress=compress):
                    dst = self.path(f"out_{writer.__name__}_{compress}.npz")
                    result = run_tool(src, dst, compress)
                    self.assertEqual(result.returncode, 0, result.stderr)
                    self.assert_same_arrays(arrays, dst)

    def test_members_are_what_np_save_writes(self):
        arrays = sample_arrays()
        src = self.path("in.npz")
        np.savez(src, **arrays)
        for compress in (False, True):
            with self.subTest(compress=compress):
                dst = self.path(f"out_{compress}.npz")
                result = run_tool(src, dst, compress)
                self.assertEqual(result.returncode, 0, result.stderr)
                method = (zipfile.ZIP_DEFLATED if compress
                          else zipfile.ZIP_STORED)
                with zipfile.ZipFile(dst) as archive:
                    self.assertIsNone(archive.testzip())
                    for info in archive.infolist():
                        key = info.filename[:-len(".npy")]
                        self.assertEqual(info.compress_type, method)
                        self.assertEqual(info.date_time, (1980, 1, 1, 0, 0, 0))
                        self.assertEqual(info.extra, b"")
                        self.assertEqual(archive.read(info),
                                         npy_bytes(arrays[key]), key)

    def test_output_is_deterministic(self):
        src = self.path("in.npz")
        np.savez_compressed(src, **sample_arrays())
        for compress in (False, True):
            outputs = []
            for run in range(2):
                dst = self.path(f"out_{compress}_{run}.npz")
                self.assertEqual(run_tool(src, dst, compress).returncode, 0)
                with open(dst, "rb") as f:
                    outputs.append(f.read())
            self.assertEqual(outputs[0], outputs[1])

    def test_empty_archive(self):
        src = self.path("empty.npz")
        np.savez(src)
        dst = self.path("out.npz")
        result = run_tool(src, dst, False)
        self.assertEqual(result.returncode, 0, result.stderr)
        with np.load(dst) as got:
            self.assertEqual(list(got.keys()), [])

    def assert_rejected(self, src, title):
        dst = self.path("out.npz")
        result = run_tool(src, dst, False)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn(f"error: {title}\n", result.stderr)
        self.assertFalse(os.path.exists(dst))
        # Not even a temporary file is left behind.
        self.assertEqual(sorted(os.listdir(self.tmp)),
                         sorted([os.path.basename(src)]))

    def test_rejects_big_endian(self):
        src = self.path("big.npz")
        np.savez(src, w=np.arange(4, dtype=">f4"))
        self.assert_rejected(src, "unsupported npy dtype")

    def test_rejects_truncated_file(self):
        src = self.path("cut.npz")
        np.savez(src, w=np.arange(100, dtype="<f4"))
        with open(src, "rb") as f:
            data = f.read()
        with open(src, "wb") as f:
            f.write(data[: len(data) // 2])
        self.assert_rejected(src, "npz file is corrupt")

    def test_rejects_missing_file(self):
        dst = self.path("out.npz")
        result = run_tool(self.path("missing.npz"), dst, False)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("error: file not found\n", result.stderr)
        self.assertFalse(os.path.exists(dst))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_npz_numpy.py /path/to/npz_roundtrip "
                 "[unittest args]")
    TOOL = os.path.abspath(sys.argv.pop(1))
    unittest.main()
