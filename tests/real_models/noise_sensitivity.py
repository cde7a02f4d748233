#!/usr/bin/python3
"""How much a model amplifies noise, in float32: is an int8 goal reachable at all?

For each model and each SNR, the held-out samples' float32 inputs get white
Gaussian noise at that SNR (per input tensor: noise power = signal power /
10^(SNR/10), seeded), and the fp32 artifact runs both the clean and the noisy
sample. The figure is the outputs' SQNR of the noisy runs against the clean ones,
per output, over the samples (float64, as test_int8 computes it).

int8 rounding of one value is noise at about 40-50 dB. A model whose outputs
fall far below 25 dB when only its input carries 40 dB of noise cannot meet a
25 dB goal in int8 with most of its MACs there: docs/real_models.md, "Why goals
are missed". Usage:

    /usr/bin/python3 tests/real_models/noise_sensitivity.py det_ppocrv4 mlsd_tiny320 [--snr 30,40,50] [--samples 4]
"""
import argparse
import math
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import inputs  # noqa: E402
import suite  # noqa: E402
import test_fp32 as fp32  # noqa: E402


def noisy(sample, snr_db, rng):
    out = {}
    for k, v in sample.items():
        if v.dtype == np.float32 and v.size:
            p = float(np.mean(v.astype(np.float64) ** 2))
            sigma = math.sqrt(p / 10 ** (snr_db / 10)) if p > 0 else 0.0
            out[k] = (v + rng.normal(0.0, sigma, v.shape)).astype(np.float32)
        else:
            out[k] = v
    return out


def measure(mid, snrs, samples):
    spec = inputs.model_spec(mid, fp32.DOC)
    tmp = tempfile.mkdtemp(prefix=f"eulernpu-noise-{mid}-")
    try:
        art = os.path.join(tmp, "f32.art")
        fp32._eulernpu("compile", "compile", "--model", suite.model_path(spec), *suite.compile_args(spec),
                       "--out", art)
        files = [p for p, _ in inputs.write_samples(mid, "heldout", samples, os.path.join(tmp, "held"), fp32.DOC)]
        rng = np.random.default_rng(2026)
        sums = {s: {} for s in snrs}
        for f in files:
            clean_out = os.path.join(tmp, "clean.npz")
            fp32._eulernpu("run", "run", "--artifact", art, "--input", f, "--out", clean_out)
            with np.load(f) as z:
                sample = {k: z[k] for k in z.files}
            with np.load(clean_out) as z:
                clean = {k: z[k].astype(np.float64) for k in z.files}
            for s in snrs:
                nf, no = os.path.join(tmp, "noisy.npz"), os.path.join(tmp, "noisy.out.npz")
                np.savez(nf, **noisy(sample, s, rng))
                fp32._eulernpu("run", "run", "--artifact", art, "--input", nf, "--out", no)
                with np.load(no) as z:
                    for k in z.files:
                        a, b = clean[k], z[k].astype(np.float64)
                        ok = np.isfinite(a) & np.isfinite(b)
                        f2, n2 = sums[s].get(k, (0.0, 0.0))
                        sums[s][k] = (f2 + float(np.sum(a[ok] ** 2)), n2 + float(np.sum((a[ok] - b[ok]) ** 2)))
        return {s: {k: (math.inf if n2 == 0 else 10 * math.log10(f2 / n2)) for k, (f2, n2) in v.items()}
                for s, v in sums.items()}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", metavar="ID")
    ap.add_argument("--snr", default="30,40,50", help="input SNRs in dB, comma-separated")
    ap.add_argument("--samples", type=int, default=4, help="held-out samples per model")
    a = ap.parse_args()
    snrs = [float(x) for x in a.snr.split(",")]
    print(f"{'model':22s} {'input SNR':>9s}  outputs' SQNR dB")
    for mid in a.models:
        for s, outs in measure(mid, snrs, a.samples).items():
            print(f"{mid:22s} {s:9.1f}  " + "  ".join(f"{k} {v:.1f}" for k, v in outs.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
