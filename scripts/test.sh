#!/usr/bin/env bash
# Quick start, command 2: install what is needed, build, and run the whole
# test suite: the release tree's (unit tests, CLI tests, numpy/onnx
# interoperability, conformance, real models, docs), then the sanitizer
# tree's (scripts/sanitize.sh: unit and CLI tests under AddressSanitizer and
# UndefinedBehaviorSanitizer, every fuzz harness for a bounded time). Both
# run even when the first fails; the exit status is non-zero if either did.
# EULERNPU_SKIP_SANITIZE=1 runs the release tree's suite only.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EULERNPU_BUILD_DIR:-$root/build}"
jobs="${EULERNPU_JOBS:-2}"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
status=0
(cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 900) || status=$?
if [ "${EULERNPU_SKIP_SANITIZE:-0}" != 1 ]; then
  "$root/scripts/sanitize.sh" || status=$?
fi
exit "$status"
