#!/usr/bin/env bash
# Configures and builds eulernpu into build/ (or $EULERNPU_BUILD_DIR).
# Idempotent: a second run only rebuilds what changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EULERNPU_BUILD_DIR:-$root/build}"
jobs="${EULERNPU_JOBS:-2}"
# A unity build compiles each target's files in batches: about half the
# build time, most of it spent parsing the same headers again.
source "$root/scripts/cmake_generator.sh"
cmake -S "$root" -B "$build" $(cmake_generator "$build") -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON >/dev/null
cmake --build "$build" -j "$jobs"
