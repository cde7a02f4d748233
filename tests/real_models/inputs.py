#!/usr/bin/python3
"""Deterministic, realistic-looking inputs for the real-model suite.

Every sample is a pure function of (model id, kind, index): the generator is
np.random.default_rng(SeedSequence([model seed, kind code, index])), and only
rng.random() is drawn from it (its stream is fixed by the PCG64 definition,
unlike the distribution methods, whose streams numpy may change). Values are
built in float64 and then quantized the way real data is (8-bit pixels,
16-bit audio, embeddings on a 1/256 grid) before the model's own
normalization, which is plain IEEE arithmetic, so a transcendental function
that differs by an ulp between machines cannot change a byte.

Generators (models.json "generator" of each input):
  scene_det        a procedural scene with a few lines of text, NCHW, ImageNet mean/std on [0,1]
  text_rec         a line of text on a light background, NCHW, (x/255-0.5)/0.5, right-padded with 0
  text_cls         the same, rotated by 180 degrees in every other sample
  face_scene       a scene with a face-like figure, NHWC, x/127.5-1 in [-1,1]
  scene_rgba255    a scene of lines and boxes, NHWC, RGB in [0,255] plus a 4th channel of ones
  faces_scene      a scene with 1-4 head-and-shoulder figures (faces 16-180 px high), NCHW RGB, (x-127)/128
  symbol_strokes   a handwritten-looking math symbol (circle, arc, bars, arrow, zigzag, wave, S, loop,
                   sometimes a bar or dot added) drawn as detypify's canvas does: 1 px anti-aliased strokes,
                   then binary, 1 = pure white background, 0 = ink
  oww_embeddings   openWakeWord speech embeddings: a per-sample mean profile (per dimension
                   about -37..48, as measured on openWakeWord's embedding model) plus a smooth
                   AR(1) process (std 5-9) and a word-like bump
  speech16k        speech-like audio at 16 kHz in [-1,1], the whole chunk one utterance (harmonics of a gliding pitch shaped by
                   formants, an amplitude envelope, light noise; some samples unvoiced or silent)
  zeros            all zeros (recurrent state at the start of a stream)
  const            the constant "value" of the input spec (e.g. sr = 16000)

usage: /usr/bin/python3 inputs.py --model ID --kind calib|heldout|reference --out DIR [--count N] [--all-inputs]
  (without --all-inputs, inputs that eulernpu compiles as constants, "freeze_input_arg", are left out)
"""
import argparse
import hashlib
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS_JSON = os.path.join(HERE, "models.json")
KIND_CODES = {"calib": 1, "heldout": 2, "reference": 3}

# ---------------------------------------------------------------------------
# a 5x7 bitmap font: digits, capitals and a few marks
_GLYPHS = {
    "0": (".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."),
    "1": ("..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "2": (".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"),
    "3": ("#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."),
    "4": ("...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."),
    "5": ("#####", "#....", "####.", "....#", "....#", "#...#", ".###."),
    "6": ("..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."),
    "7": ("#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."),
    "8": (".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."),
    "9": (".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."),
    "A": (".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"),
    "B": ("####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."),
    "C": (".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."),
    "D": ("###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."),
    "E": ("#####", "#....", "#....", "####.", "#....", "#....", "#####"),
    "F": ("#####", "#....", "#....", "####.", "#....", "#....", "#...."),
    "G": (".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"),
    "H": ("#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"),
    "I": (".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "J": ("..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."),
    "K": ("#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"),
    "L": ("#....", "#....", "#....", "#....", "#....", "#....", "#####"),
    "M": ("#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"),
    "N": ("#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"),
    "O": (".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."),
    "P": ("####.", "#...#", "#...#", "####.", "#....", "#....", "#...."),
    "Q": (".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"),
    "R": ("####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"),
    "S": (".####", "#....", "#....", ".###.", "....#", "....#", "####."),
    "T": ("#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."),
    "U": ("#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."),
    "V": ("#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."),
    "W": ("#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."),
    "X": ("#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"),
    "Y": ("#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."),
    "Z": ("#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"),
    "-": (".....", ".....", ".....", "#####", ".....", ".....", "....."),
    ".": (".....", ".....", ".....", ".....", ".....", ".##..", ".##.."),
    " ": (".....",) * 7,
}
FONT = {c: np.array([[ch == "#" for ch in row] for row in rows], dtype=np.float64)
        for c, rows in _GLYPHS.items()}
TEXT_CHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


# ---------------------------------------------------------------------------
# drawing from rng.random() only
def _u(rng, lo=0.0, hi=1.0, size=None):
    return lo + (hi - lo) * rng.random(size)


def _int(rng, lo, hi):
    """An integer in [lo, hi)."""
    return lo + min(int(rng.random() * (hi - lo)), hi - lo - 1)


def _normal(rng, size):
    """Standard normal by Box-Muller on rng.random()."""
    n = int(np.prod(size))
    u1 = 1.0 - rng.random(n)  # (0, 1]
    u2 = rng.random(n)
    return (np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)).reshape(size)


def _box_blur(a, k=3):
    """k x k mean filter over the first two axes, edges replicated."""
    r = k // 2
    p = np.pad(a, [(r, r), (r, r)] + [(0, 0)] * (a.ndim - 2), mode="edge")
    out = np.zeros_like(a, dtype=np.float64)
    for dy in range(k):
        for dx in range(k):
            out += p[dy:dy + a.shape[0], dx:dx + a.shape[1]]
    return out / (k * k)


def _paint(img, mask, colour):
    """Blends `colour` into img (H,W,3 float) with coverage mask (H,W) in [0,1]."""
    m = mask[..., None]
    img *= 1.0 - m
    img += m * np.asarray(colour, dtype=np.float64)


def _background(rng, h, w, light=False):
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    lo, hi = (170.0, 250.0) if light else (20.0, 235.0)
    c0 = _u(rng, lo, hi, 3)
    c1 = _u(rng, lo, hi, 3)
    theta = _u(rng, 0.0, 2.0 * np.pi)
    t = (xx * np.cos(theta) + yy * np.sin(theta))
    t = (t - t.min()) / max(t.max() - t.min(), 1e-9)
    img = c0 + (c1 - c0) * t[..., None]
    # a low-frequency shading wave
    fx, fy = _u(rng, 0.2, 1.5) / w, _u(rng, 0.2, 1.5) / h
    phase = _u(rng, 0.0, 2.0 * np.pi)
    img += (_u(rng, 4.0, 14.0) * np.sin(2.0 * np.pi * (fx * xx + fy * yy) + phase))[..., None]
    return img


def _rect_mask(h, w, y0, x0, y1, x1):
    m = np.zeros((h, w))
    m[max(int(y0), 0):max(int(y1), 0), max(int(x0), 0):max(int(x1), 0)] = 1.0
    return m


def _ellipse_mask(h, w, cy, cx, ry, rx, angle=0.0):
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    y, x = yy - cy, xx - cx
    ca, sa = np.cos(angle), np.sin(angle)
    u, v = x * ca + y * sa, -x * sa + y * ca
    d = (u / max(rx, 0.5)) ** 2 + (v / max(ry, 0.5)) ** 2
    return np.clip((1.0 - d) * max(rx, ry) * 0.5 + 0.5, 0.0, 1.0)  # soft edge ~1 px


def _segment_mask(h, w, y0, x0, y1, x1, width):
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    dy, dx = y1 - y0, x1 - x0
    ll = max(dy * dy + dx * dx, 1e-9)
    t = np.clip(((yy - y0) * dy + (xx - x0) * dx) / ll, 0.0, 1.0)
    dist = np.hypot(yy - (y0 + t * dy), xx - (x0 + t * dx))
    return np.clip(width / 2.0 - dist + 0.5, 0.0, 1.0)


def _text_mask(text, scale):
    """The strokes of `text` at `scale` pixels per font pixel, anti-aliased."""
    cols = []
    for ch in text:
        cols.append(FONT.get(ch, FONT[" "]))
        cols.append(np.zeros((7, 1)))
    bitmap = np.concatenate(cols[:-1], axis=1) if cols else np.zeros((7, 1))
    big = np.kron(bitmap, np.ones((scale, scale)))
    big = np.pad(big, 1)
    return np.clip(_box_blur(big, 3) * 1.15, 0.0, 1.0)


def _random_text(rng, n):
    return "".join(TEXT_CHARS[_int(rng, 0, len(TEXT_CHARS))] for _ in range(n))


def _stamp(img, mask, y, x, colour):
    h, w = img.shape[:2]
    mh, mw = mask.shape
    y0, x0 = max(y, 0), max(x, 0)
    y1, x1 = min(y + mh, h), min(x + mw, w)
    if y1 <= y0 or x1 <= x0:
        return
    full = np.zeros((h, w))
    full[y0:y1, x0:x1] = mask[y0 - y:y1 - y, x0 - x:x1 - x]
    _paint(img, full, colour)


def _shapes(rng, img, n_rect, n_ell, n_line):
    h, w = img.shape[:2]
    for _ in range(n_rect):
        rh, rw = _u(rng, 0.1, 0.45) * h, _u(rng, 0.1, 0.45) * w
        y0, x0 = _u(rng, -0.1, 0.9) * h, _u(rng, -0.1, 0.9) * w
        _paint(img, _rect_mask(h, w, y0, x0, y0 + rh, x0 + rw), _u(rng, 0.0, 255.0, 3))
    for _ in range(n_ell):
        _paint(img, _ellipse_mask(h, w, _u(rng, 0.1, 0.9) * h, _u(rng, 0.1, 0.9) * w,
                                  _u(rng, 0.05, 0.25) * h, _u(rng, 0.05, 0.25) * w,
                                  _u(rng, 0.0, np.pi)), _u(rng, 0.0, 255.0, 3))
    for _ in range(n_line):
        y0, x0, y1, x1 = _u(rng, 0.0, 1.0, 4) * np.array([h, w, h, w])
        _paint(img, _segment_mask(h, w, y0, x0, y1, x1, _u(rng, 1.5, 4.0)), _u(rng, 0.0, 255.0, 3))


def _to_uint8(rng, img, noise=3.0):
    img = img + noise * _normal(rng, img.shape)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


# ---------------------------------------------------------------------------
# images
def scene_image(rng, h, w, text_lines=0, face=False):
    """An RGB uint8 (h, w, 3) scene: gradient, boxes, ellipses, lines, optional text or face."""
    img = _background(rng, h, w)
    _shapes(rng, img, _int(rng, 2, 5), _int(rng, 1, 4), _int(rng, 2, 6))
    for _ in range(text_lines):
        scale = _int(rng, 2, 5)
        text = _random_text(rng, _int(rng, 3, 12))
        mask = _text_mask(text, scale)
        y, x = _int(rng, 0, max(h - mask.shape[0], 1)), _int(rng, -4, max(w - mask.shape[1] // 2, 1))
        # a light plate behind dark text, or light text on the scene
        if rng.random() < 0.6:
            plate = _rect_mask(h, w, y - scale, x - scale, y + mask.shape[0] + scale, x + mask.shape[1] + scale)
            _paint(img, plate, _u(rng, 190.0, 250.0, 3))
            _stamp(img, mask, y, x, _u(rng, 0.0, 70.0, 3))
        else:
            _stamp(img, mask, y, x, _u(rng, 200.0, 255.0, 3))
    if face:
        s = min(h, w)
        cy, cx = _u(rng, 0.35, 0.65) * h, _u(rng, 0.35, 0.65) * w
        ry = _u(rng, 0.22, 0.38) * s
        _face(rng, img, cy, cx, ry)
    return _to_uint8(rng, img)


def _face(rng, img, cy, cx, ry, tilt_range=0.25):
    """Paints a face-like figure (hair, skin oval, eyes, brows, nose, mouth) of
    half-height ry centred at (cy, cx)."""
    h, w = img.shape[:2]
    rx = ry * _u(rng, 0.72, 0.85)
    tilt = _u(rng, -tilt_range, tilt_range)
    skin = np.array([_u(rng, 120, 235), 0.0, 0.0])
    skin[1] = skin[0] * _u(rng, 0.68, 0.80)
    skin[2] = skin[0] * _u(rng, 0.55, 0.68)
    hair = _u(rng, 10.0, 90.0, 3)
    _paint(img, _ellipse_mask(h, w, cy - 0.12 * ry, cx, ry * 1.08, rx * 1.1, tilt), hair)
    _paint(img, _ellipse_mask(h, w, cy, cx, ry, rx, tilt), skin)
    ca, sa = np.cos(tilt), np.sin(tilt)

    def at(du, dv):  # face coordinates (right, down) -> image (y, x)
        return cy + du * sa + dv * ca, cx + du * ca - dv * sa
    for side in (-1.0, 1.0):
        ey, ex = at(side * 0.40 * rx, -0.18 * ry)
        _paint(img, _ellipse_mask(h, w, ey, ex, 0.09 * ry, 0.17 * rx, tilt), (245.0, 245.0, 240.0))
        _paint(img, _ellipse_mask(h, w, ey, ex, 0.07 * ry, 0.07 * ry, tilt), _u(rng, 10.0, 70.0, 3))
        by, bx = at(side * 0.40 * rx, -0.36 * ry)
        _paint(img, _ellipse_mask(h, w, by, bx, 0.035 * ry, 0.2 * rx, tilt), hair)
    ny, nx = at(0.0, 0.12 * ry)
    _paint(img, _ellipse_mask(h, w, ny, nx, 0.12 * ry, 0.07 * rx, tilt), skin * 0.85)
    my, mx = at(0.0, 0.45 * ry)
    _paint(img, _ellipse_mask(h, w, my, mx, 0.06 * ry, 0.3 * rx, tilt), (skin[0] * 0.7, skin[1] * 0.4, skin[2] * 0.45))


def text_line_image(rng, h, w):
    """A text crop as PaddleOCR feeds its recognizer: a light (h, tw, 3) uint8 line of
    text resized to height h; returns (image (h, w, 3) uint8, used width tw)."""
    scale = _int(rng, 4, 6)  # glyph height 28 or 35 px of 48
    n = _int(rng, 3, max(4, (w - 8) // (6 * scale) + 1))
    text = _random_text(rng, n)
    if n >= 6 and rng.random() < 0.5:
        k = _int(rng, 2, n - 2)
        text = text[:k] + (" " if rng.random() < 0.6 else "-") + text[k + 1:]
    mask = _text_mask(text, scale)
    margin = _int(rng, 2, 10)
    tw = min(w, mask.shape[1] + 2 * margin)
    img = _background(rng, h, w, light=True)
    y = (h - mask.shape[0]) // 2 + _int(rng, -3, 4)
    _stamp(img, mask, y, margin, _u(rng, 0.0, 80.0, 3))
    if rng.random() < 0.3:  # an underline or a table rule
        ly = min(h - 2, y + mask.shape[0] + _int(rng, 1, 4))
        _paint(img, _rect_mask(h, w, ly, 0, ly + 1, tw), _u(rng, 60.0, 140.0, 3))
    return _to_uint8(rng, img, noise=4.0), tw


def _chw(img_u8):
    return np.ascontiguousarray(img_u8.transpose(2, 0, 1)[None].astype(np.float64))


def gen_scene_det(rng, shape):
    n, c, h, w = shape
    x = _chw(scene_image(rng, h, w, text_lines=_int(rng, 2, 5))) / 255.0
    mean = np.array([0.485, 0.456, 0.406]).reshape(1, 3, 1, 1)
    std = np.array([0.229, 0.224, 0.225]).reshape(1, 3, 1, 1)
    return ((x - mean) / std).astype(np.float32)


def _text_tensor(rng, shape, flip):
    n, c, h, w = shape
    img, tw = text_line_image(rng, h, w)
    if flip:  # the crop upside down, as the classifier must detect
        img[:, :tw] = img[::-1, :tw][:, ::-1].copy()
    x = (_chw(img) / 255.0 - 0.5) / 0.5
    x[..., tw:] = 0.0  # PaddleOCR pads the resized crop with zeros after normalizing
    return x.astype(np.float32)


def gen_text_rec(rng, shape, index):
    return _text_tensor(rng, shape, flip=False)


def gen_text_cls(rng, shape, index):
    return _text_tensor(rng, shape, flip=(index % 2 == 1))


def gen_face_scene(rng, shape):
    n, h, w, c = shape
    img = scene_image(rng, h, w, face=True)
    return (img[None].astype(np.float64) / 127.5 - 1.0).astype(np.float32)


def gen_scene_rgba255(rng, shape):
    n, h, w, c = shape
    img = scene_image(rng, h, w, text_lines=_int(rng, 0, 2)).astype(np.float32)
    return np.concatenate([img, np.ones((h, w, 1), np.float32)], axis=2)[None]


def gen_faces_scene(rng, shape):
    """A scene with 1-4 face-like figures (head and shoulders) of 16-180 px height,
    for a face detector that takes (x-127)/128 RGB NCHW (Ultra-Light-Fast)."""
    n, c, h, w = shape
    img = _background(rng, h, w)
    _shapes(rng, img, _int(rng, 1, 4), _int(rng, 0, 3), _int(rng, 1, 4))
    placed = []
    for _ in range(_int(rng, 1, 5)):
        ry = 8.0 * np.exp(_u(rng, 0.0, np.log(90.0 / 8.0)))  # log-uniform 8..90 px
        for _attempt in range(6):  # avoid covering an earlier face
            cy, cx = _u(rng, 0.6 * ry, h - 0.3 * ry), _u(rng, 0.5 * ry, w - 0.5 * ry)
            if all(np.hypot(cy - py, cx - px) > 1.1 * (ry + pr) for py, px, pr in placed):
                break
        placed.append((cy, cx, ry))
        # shoulders in a clothing colour, then the head over them
        _paint(img, _ellipse_mask(h, w, cy + 2.1 * ry, cx, 1.2 * ry, 1.9 * ry), _u(rng, 0.0, 255.0, 3))
        _face(rng, img, cy, cx, ry, tilt_range=0.3)
    img = _box_blur(img, 3) * 0.5 + img * 0.5  # a camera's softness
    x = _chw(_to_uint8(rng, img, noise=2.5))
    return ((x - 127.0) / 128.0).astype(np.float32)


# ---------------------------------------------------------------------------
# handwriting
def _smooth_noise(rng, n, amp):
    """n 2-D offsets of a slow random walk, about `amp` in size."""
    e = _normal(rng, (n, 2))
    k = max(3, n // 6)
    kern = np.hanning(k + 2)[1:-1]
    kern /= kern.sum()
    walk = np.stack([np.convolve(np.cumsum(e[:, j]), kern, mode="same") for j in range(2)], axis=1)
    walk -= walk.mean(axis=0)
    return walk * (amp / max(np.abs(walk).max(), 1e-9))


def _ellipse_pts(rng, a0, span, rx, ry, cx=0.0, cy=0.0, n=48):
    t = a0 + span * np.linspace(0.0, 1.0, n)
    return np.stack([cx + rx * np.cos(t), cy + ry * np.sin(t)], axis=1)


def _poly(points, n=40):
    """A polyline through `points`, resampled to about n points."""
    p = np.asarray(points, dtype=np.float64)
    seg = np.hypot(*(p[1:] - p[:-1]).T)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    t = np.linspace(0.0, s[-1], n)
    return np.stack([np.interp(t, s, p[:, 0]), np.interp(t, s, p[:, 1])], axis=1)


def _symbol_strokes(rng):
    """The strokes of one handwritten-looking math symbol in unit coordinates
    (x right, y down, about [-1, 1]): a list of (n, 2) arrays."""
    kind = _int(rng, 0, 10)
    if kind == 0:  # circle or oval (o, 0, degree), closed with a small overshoot
        strokes = [_ellipse_pts(rng, _u(rng, 0, 2 * np.pi), 2 * np.pi * _u(rng, 1.0, 1.12),
                                _u(rng, 0.5, 1.0), _u(rng, 0.6, 1.0), n=56)]
    elif kind == 1:  # an arc: ( ) c u n
        a0 = _int(rng, 0, 4) * np.pi / 2 + _u(rng, -0.3, 0.3)
        strokes = [_ellipse_pts(rng, a0 + np.pi / 2 - 0.5, np.pi + _u(rng, 0.2, 1.6),
                                _u(rng, 0.3, 0.9), _u(rng, 0.6, 1.0))]
    elif kind == 2:  # a single bar: - | / \
        a = _int(rng, 0, 4) * np.pi / 4 + _u(rng, -0.15, 0.15)
        strokes = [_poly([(-np.cos(a), -np.sin(a)), (_u(rng, -0.1, 0.1), _u(rng, -0.1, 0.1)),
                          (np.cos(a), np.sin(a))])]
    elif kind == 3:  # plus or times
        a = (np.pi / 4 if rng.random() < 0.5 else 0.0) + _u(rng, -0.15, 0.15)
        b = a + np.pi / 2 + _u(rng, -0.15, 0.15)
        strokes = [_poly([(-np.cos(a), -np.sin(a)), (np.cos(a), np.sin(a))]),
                   _poly([(-np.cos(b), -np.sin(b)), (np.cos(b), np.sin(b))])]
    elif kind == 4:  # an arrow (shaft, then the head in one stroke)
        a = _int(rng, 0, 4) * np.pi / 2 + _u(rng, -0.1, 0.1)
        d = np.array([np.cos(a), np.sin(a)])
        nrm = np.array([-d[1], d[0]])
        hl = _u(rng, 0.3, 0.5)
        tip = d
        strokes = [_poly([-d, tip]),
                   _poly([tip - hl * d + hl * nrm, tip, tip - hl * d - hl * nrm], n=24)]
    elif kind == 5:  # parallel bars: = or equiv or ||
        k = 2 + (rng.random() < 0.3)
        vert = rng.random() < 0.25
        gap = _u(rng, 0.35, 0.6)
        strokes = []
        for i in range(k):
            o = (i - (k - 1) / 2) * gap
            line = [(-1.0, o + _u(rng, -0.05, 0.05)), (1.0, o + _u(rng, -0.05, 0.05))]
            strokes.append(_poly([(y, x) for x, y in line] if vert else line))
    elif kind == 6:  # a zigzag through 3-5 corners: < > ^ v N M Z sigma
        m = _int(rng, 3, 6)
        xs = np.linspace(-1.0, 1.0, m) + _u(rng, -0.15, 0.15, m)
        ys = np.where(np.arange(m) % 2 == 0, -1.0, 1.0) * _u(rng, 0.5, 1.0, m)
        pts = np.stack([xs, ys], axis=1)
        if rng.random() < 0.5:
            pts = pts[:, ::-1]
        strokes = [_poly(pts, n=48)]
    elif kind == 7:  # tilde / approx (one or two waves)
        k = 1 + (rng.random() < 0.4)
        f, ph = _u(rng, 1.5, 2.5), _u(rng, -0.5, 0.5)
        strokes = []
        for i in range(k):
            x = np.linspace(-1.0, 1.0, 40)
            strokes.append(np.stack([x, 0.35 * np.sin(np.pi * f * x / 2 * 2 + ph) + (i - (k - 1) / 2) * 0.7], 1))
    elif kind == 8:  # integral / S
        t = np.linspace(-1.0, 1.0, 48)
        sgn = 1.0 if rng.random() < 0.6 else -1.0
        strokes = [np.stack([sgn * 0.45 * np.sin(np.pi * t) * _u(rng, 0.6, 1.0) + 0.25 * t * sgn, t], 1)]
    else:  # infinity / alpha loop
        t = np.linspace(0.0, 2 * np.pi * _u(rng, 0.8, 1.0), 64) + _u(rng, 0, 0.5)
        strokes = [np.stack([np.sin(t), np.sin(t) * np.cos(t) * _u(rng, 0.8, 1.4)], 1)]
    if rng.random() < 0.25:  # an extra mark: a bar over or a dot beside
        if rng.random() < 0.5:
            strokes.append(_poly([(-0.8, -1.35), (0.8, -1.35 + _u(rng, -0.1, 0.1))], n=16))
        else:
            strokes.append(_ellipse_pts(rng, 0.0, 2 * np.pi, 0.08, 0.08, cx=1.35, cy=_u(rng, -0.8, 0.8), n=8))
    return strokes


def symbol_canvas(rng, size=32):
    """A handwritten-looking symbol as detypify's index.js draws it: pointer
    coordinates in a ~100-300 px drawing area, the bounding box (side*1.2+20)
    fitted to the size x size canvas, integer points joined by 1 px wide black
    lines on white with anti-aliasing (4x4 supersampled: a pixel is inked when
    any sub-sample lies within 0.5 px of a segment). Returns ink coverage (bool)."""
    strokes = _symbol_strokes(rng)
    scale_px = _u(rng, 50.0, 150.0)
    rot = _u(rng, -0.2, 0.2)
    sx, sy = scale_px * _u(rng, 0.85, 1.15), scale_px * _u(rng, 0.85, 1.15)
    ox, oy = _u(rng, 150.0, 250.0), _u(rng, 150.0, 250.0)
    ca, sa = np.cos(rot), np.sin(rot)
    pointer = []
    for st in strokes:
        st = st + _smooth_noise(rng, len(st), _u(rng, 0.02, 0.06))
        x, y = st[:, 0] * sx, st[:, 1] * sy
        pts = np.stack([ox + x * ca - y * sa, oy + x * sa + y * ca], axis=1)
        pointer.append(np.rint(pts))  # pointer events give integer pixels
    allp = np.concatenate(pointer)
    (min_x, min_y), (max_x, max_y) = allp.min(axis=0), allp.max(axis=0)
    width = max(max_x - min_x, max_y - min_y) * 1.2 + 20.0
    zero_x, zero_y = (min_x + max_x - width) / 2.0, (min_y + max_y - width) / 2.0
    k = size / width
    sub = 4
    g = (np.arange(size * sub) + 0.5) / sub  # sub-sample centres in canvas pixels
    yy, xx = np.meshgrid(g, g, indexing="ij")
    ink = np.zeros((size * sub, size * sub), dtype=bool)
    for pts in pointer:
        # Math.round((x - zeroX) * scale), then translate(0.5, 0.5): the pixel centre
        c = np.floor((pts - [zero_x, zero_y]) * k + 0.5) + 0.5
        for (x0, y0), (x1, y1) in zip(c[:-1], c[1:]):
            dx, dy = x1 - x0, y1 - y0
            ll = dx * dx + dy * dy
            if ll == 0.0:
                continue
            t = np.clip(((xx - x0) * dx + (yy - y0) * dy) / ll, 0.0, 1.0)
            ink |= np.hypot(xx - (x0 + t * dx), yy - (y0 + t * dy)) < 0.5
    return ink.reshape(size, sub, size, sub).any(axis=(1, 3))


def gen_symbol_strokes(rng, shape):
    n, c, h, w = shape
    ink = symbol_canvas(rng, h)
    return np.where(ink, 0.0, 1.0).reshape(shape).astype(np.float32)  # R == 255 ? 1 : 0


# ---------------------------------------------------------------------------
# audio and features
def gen_speech16k(rng, shape, index):
    n, length = shape
    sr = 16000.0
    t = np.arange(length) / sr
    kind = index % 4 if index < 4 else _int(rng, 0, 8)  # 0..2 voiced (most), 3 unvoiced, 7 near-silence
    x = np.zeros(length)
    if kind not in (3, 7):
        f0_0 = _u(rng, 85.0, 260.0)
        glide = _u(rng, -0.25, 0.25)  # relative pitch change over one second
        vib = _u(rng, 0.0, 0.03)
        f0 = f0_0 * (1.0 + glide * t + vib * np.sin(2.0 * np.pi * _u(rng, 3.0, 6.0) * t))
        phase = 2.0 * np.pi * np.cumsum(f0) / sr + _u(rng, 0.0, 2.0 * np.pi)
        formants = [(_u(rng, 300.0, 900.0), _u(rng, 60.0, 150.0), 1.0),
                    (_u(rng, 900.0, 2400.0), _u(rng, 80.0, 200.0), _u(rng, 0.3, 0.8)),
                    (_u(rng, 2300.0, 3300.0), _u(rng, 100.0, 300.0), _u(rng, 0.1, 0.4))]
        for k in range(1, int(4000.0 / f0_0) + 1):
            fk = k * f0
            gain = sum(a / (1.0 + ((fk - fc) / bw) ** 2) for fc, bw, a in formants)
            x += gain * np.sin(k * phase + _u(rng, 0.0, 0.3)) / np.sqrt(k)
        x /= max(np.max(np.abs(x)), 1e-9)
        level = _u(rng, 0.05, 0.6)
    else:
        level = 0.0
    # a slowly varying envelope: onset, steady or decay within the 32 ms
    a, b = _u(rng, 0.2, 1.0), _u(rng, 0.2, 1.0)
    env = a + (b - a) * (0.5 - 0.5 * np.cos(np.pi * t / t[-1]))
    x = level * env * x
    noise = _normal(rng, (length,))
    if kind == 3:  # a fricative: high-passed noise
        noise = np.diff(noise, prepend=0.0) * _u(rng, 0.02, 0.12)
    else:
        noise *= _u(rng, 0.0005, 0.006)
    x = x + noise
    q = np.clip(np.rint(x * 32768.0), -32768, 32767)  # 16-bit PCM
    return (q / 32768.0).reshape(n, length).astype(np.float32)


def gen_oww_embeddings(rng, shape):
    """openWakeWord speech embeddings (96 per 80 ms frame). Measured on openWakeWord's
    embedding model over synthetic speech: per-dimension means spread like N(2, 14)
    (about -37..48), frame-to-frame std 5-9 per dimension, lag-1 correlation 0.6. Each
    sample draws its own mean profile (a different sound), so the head's score covers
    its whole range instead of saturating at one end."""
    n, frames, dims = shape
    profile = 2.0 + 14.0 * _normal(rng, (dims,))
    scales = _u(rng, 5.0, 9.0, dims)
    e = _normal(rng, (frames, dims))
    rho = 0.6
    x = np.zeros((frames, dims))
    x[0] = e[0]
    for i in range(1, frames):
        x[i] = rho * x[i - 1] + np.sqrt(1.0 - rho * rho) * e[i]
    # a word-like event: a smooth bump along a random direction
    centre, width = _u(rng, 0.0, frames), _u(rng, 2.0, 6.0)
    bump = np.exp(-0.5 * ((np.arange(frames) - centre) / width) ** 2)
    x = profile + scales * x + 6.0 * bump[:, None] * _normal(rng, (1, dims))
    x = np.clip(x, -60.0, 60.0)
    return (np.rint(x * 256.0) / 256.0).reshape(shape).astype(np.float32)


# ---------------------------------------------------------------------------
def load_models():
    with open(MODELS_JSON, encoding="utf-8") as f:
        return json.load(f)


def model_spec(model_id, models=None):
    models = models or load_models()
    for m in models["models"]:
        if m["id"] == model_id:
            return m
    raise KeyError(f"unknown model {model_id!r}; known: {[m['id'] for m in models['models']]}")


def sample_name(kind, index):
    return f"{kind}_{index:03d}"


def generate(spec, kind, index):
    """One sample: {input name: array} in graph-input order, exact dtypes and shapes."""
    if kind not in KIND_CODES:
        raise ValueError(f"kind must be one of {sorted(KIND_CODES)}")
    out = {}
    for j, inp in enumerate(spec["inputs"]):
        rng = np.random.default_rng(np.random.SeedSequence([spec["seed"], KIND_CODES[kind], index, j]))
        shape, g = tuple(inp["shape"]), inp["generator"]
        if g == "scene_det":
            a = gen_scene_det(rng, shape)
        elif g == "text_rec":
            a = gen_text_rec(rng, shape, index)
        elif g == "text_cls":
            a = gen_text_cls(rng, shape, index)
        elif g == "face_scene":
            a = gen_face_scene(rng, shape)
        elif g == "scene_rgba255":
            a = gen_scene_rgba255(rng, shape)
        elif g == "faces_scene":
            a = gen_faces_scene(rng, shape)
        elif g == "symbol_strokes":
            a = gen_symbol_strokes(rng, shape)
        elif g == "oww_embeddings":
            a = gen_oww_embeddings(rng, shape)
        elif g == "speech16k":
            a = gen_speech16k(rng, shape, index)
        elif g == "zeros":
            a = np.zeros(shape)
        elif g == "const":
            a = np.full(shape, inp["value"])
        else:
            raise ValueError(f"{spec['id']}: unknown generator {g!r}")
        # astype copies into a C-contiguous array (ascontiguousarray would make a 0-d one 1-d)
        a = np.asarray(a).astype(np.dtype(inp["dtype"]).newbyteorder("<"), order="C")
        assert a.shape == shape, (spec["id"], inp["name"], a.shape, shape)
        out[inp["name"]] = a
    return out


def sample_sha256(sample):
    """sha256 of a sample's bytes: for each input in order, its name, dtype, shape and
    little-endian data, so the digest does not depend on npz/zip metadata."""
    h = hashlib.sha256()
    for name, a in sample.items():
        a = a.astype(a.dtype.newbyteorder("<"), order="C")
        h.update(f"{name}\0{a.dtype.str}\0{','.join(map(str, a.shape))}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def default_count(spec, kind):
    return {"calib": spec["calibration_samples"], "heldout": spec["heldout_samples"],
            "reference": spec["reference"]["samples"]}[kind]


def write_samples(model_id, kind, count, out_dir, models=None, all_inputs=False):
    """Writes `count` samples as out_dir/<kind>_NNN.npz; returns [(path, sha256)].
    Inputs the model is compiled with as constants ("freeze_input_arg") are left
    out, as eulernpu run and calibration want them, unless all_inputs."""
    spec = model_spec(model_id, models)
    os.makedirs(out_dir, exist_ok=True)
    frozen = set() if all_inputs else {i["name"] for i in spec["inputs"] if i.get("freeze_input_arg")}
    written = []
    for i in range(count):
        s = {k: v for k, v in generate(spec, kind, i).items() if k not in frozen}
        path = os.path.join(out_dir, sample_name(kind, i) + ".npz")
        np.savez(path, **s)
        written.append((path, sample_sha256(s)))
    return written


def sample_hashes(model_id, kind, count=None, models=None):
    """{sample name: sha256} of the generated samples (nothing written)."""
    spec = model_spec(model_id, models)
    count = default_count(spec, kind) if count is None else count
    return {sample_name(kind, i): sample_sha256(generate(spec, kind, i)) for i in range(count)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="a model id of models.json, or 'all'")
    ap.add_argument("--kind", required=True, choices=sorted(KIND_CODES))
    ap.add_argument("--out", required=True, help="output directory (per model a subdirectory with 'all')")
    ap.add_argument("--count", type=int, help="default: the model's calibration/heldout/reference count")
    ap.add_argument("--all-inputs", action="store_true",
                    help="also the inputs compiled as constants (freeze_input_arg), as onnxruntime takes them")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    models = load_models()
    ids = [m["id"] for m in models["models"]] if args.model == "all" else [args.model]
    for mid in ids:
        spec = model_spec(mid, models)
        count = default_count(spec, args.kind) if args.count is None else args.count
        out = os.path.join(args.out, mid) if args.model == "all" else args.out
        for path, digest in write_samples(mid, args.kind, count, out, models, args.all_inputs):
            if not args.quiet:
                print(f"{digest}  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
