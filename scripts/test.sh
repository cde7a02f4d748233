#!/usr/bin/env bash
# Quick start, command 2: install what is needed, build, and run the whole
# test suite (unit tests, CLI tests, numpy/onnx interoperability, docs).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EULERNPU_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "$build"
exec ctest --output-on-failure -j "${EULERNPU_JOBS:-2}" --timeout 900
