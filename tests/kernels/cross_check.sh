#!/usr/bin/env bash
# Builds the reference kernels and their self-test with the ARM cross
# compilers (C++17, no exceptions, warnings as errors), runs each under
# qemu-user, and checks that every case prints the same bytes as the native
# build: the kernels are portable and their results do not depend on the
# CPU. Usage: cross_check.sh NATIVE_SELFTEST SDK_INCLUDE_DIR KERNEL_SRC_DIR
#             SELFTEST_SOURCE KERNEL_SOURCE...
set -euo pipefail
native="$1" include="$2" private="$3" selftest="$4"
shift 4
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The ISA variants differ between CPUs; the portable one is everywhere.
portable() { grep -v '^qgemm_int8/' "$1" || true; grep '^qgemm_int8/scalar/' "$1" || true; }

"$native" >"$work/native.txt"
portable "$work/native.txt" >"$work/native.cmp"

flags=(-std=c++17 -O2 -fno-exceptions -Wall -Wextra -Wpedantic -Wshadow -Wconversion
       -Wno-sign-conversion -Werror -pthread -I"$include" -I"$private")
status=0
for target in "aarch64-linux-gnu qemu-aarch64 -march=armv8-a" \
              "arm-linux-gnueabihf qemu-arm -march=armv7-a -mfpu=neon -mfloat-abi=hard"; do
  read -r triple emulator arch <<<"$target"
  if ! command -v "$triple-g++" >/dev/null || ! command -v "$emulator" >/dev/null; then
    echo "cross_check: $triple-g++ or $emulator is missing (scripts/setup.sh installs them)" >&2
    exit 1
  fi
  exe="$work/selftest-$triple"
  # shellcheck disable=SC2206  # arch holds several flags on purpose
  "$triple-g++" "${flags[@]}" ${arch} "$selftest" "$@" -o "$exe"
  if ! "$emulator" -L "/usr/$triple" "$exe" >"$work/$triple.txt"; then
    echo "cross_check: the self-test failed on $triple:" >&2
    cat "$work/$triple.txt" >&2
    status=1
    continue
  fi
  # The NEON variant must have run (and matched the definition: a mismatch
  # fails the self-test above) on both ARM targets.
  if ! grep -q '^qgemm_int8/neon/' "$work/$triple.txt"; then
    echo "cross_check: $triple did not run the NEON int8 GEMM" >&2
    status=1
  fi
  portable "$work/$triple.txt" >"$work/$triple.cmp"
  if diff -u "$work/native.cmp" "$work/$triple.cmp"; then
    echo "cross_check: $triple: $(wc -l <"$work/$triple.cmp") cases, the same bytes as $(uname -m)"
  else
    echo "cross_check: $triple prints other bytes than $(uname -m)" >&2
    status=1
  fi
done
exit "$status"
