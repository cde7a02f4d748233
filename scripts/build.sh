#!/usr/bin/env bash
# Configures and builds eulernpu into build/ (or $EULERNPU_BUILD_DIR).
# Idempotent: a second run only rebuilds what changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EULERNPU_BUILD_DIR:-$root/build}"
jobs="${EULERNPU_JOBS:-2}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$jobs"
