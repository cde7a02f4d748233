#!/usr/bin/env bash
# The sanitizer tree (docs/reliability.md): builds eulernpu with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer and the libFuzzer
# harnesses into build-sanitize/ (or $EULERNPU_SANITIZE_DIR), then runs its
# suite: the unit tests, the CLI tests and every harness for
# $EULERNPU_FUZZ_SECONDS seconds (5 by default). The CLI tests labelled
# sanitize-slow (numeric suites the release tree runs too) are left out
# unless EULERNPU_SANITIZE_ALL=1. Extra arguments go to ctest (e.g. -L fuzz).
# Idempotent; setup.sh installs clang.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EULERNPU_SANITIZE_DIR:-$root/build-sanitize}"
jobs="${EULERNPU_JOBS:-2}"
source "$root/scripts/cmake_generator.sh"
# lld links the instrumented binaries four times faster than ld (a minute of
# the build). -O0 builds instrumented code in under half the time -O1 takes;
# the reference int8 kernels, where the tests spend their time, stay at -O1
# (the sanitizers' usual level).
linker=-fuse-ld=lld
cmake -S "$root" -B "$build" $(cmake_generator "$build") -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_EXE_LINKER_FLAGS=$linker -DCMAKE_SHARED_LINKER_FLAGS=$linker -DCMAKE_MODULE_LINKER_FLAGS=$linker \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_C_FLAGS_RELEASE=-O0 -DCMAKE_CXX_FLAGS_RELEASE=-O0 -DEULERNPU_HOT_CODE_FLAGS=-O1 \
  -DEULERNPU_FUZZ=ON -DEULERNPU_BUILD_BENCHMARKS=OFF -DCMAKE_UNITY_BUILD=ON \
  -DEULERNPU_FUZZ_SECONDS="${EULERNPU_FUZZ_SECONDS:-5}" >/dev/null
cmake --build "$build" -j "$jobs"
cd "$build"
skip=(-LE sanitize-slow)
if [ "${EULERNPU_SANITIZE_ALL:-0}" = 1 ]; then skip=(); fi
exec ctest --output-on-failure -j "$jobs" --timeout 900 "${skip[@]}" "$@"
