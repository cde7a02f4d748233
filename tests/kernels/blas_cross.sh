#!/usr/bin/env bash
# The portable float GEMM of exported bundles (blas_portable.cpp) on the
# boards' CPUs: builds its self-test with the ARM cross compilers as a
# bundle builds (-O3, -ffp-contract=off, warnings as errors), runs each
# under qemu-user, where it checks every element against its definition,
# and checks that aarch64's NEON build prints the same bytes as its scalar
# build (EULERNPU_KERNELS_NO_NEON). Usage:
#   blas_cross.sh SDK_INCLUDE_DIR KIT_SRC_DIR SELFTEST_SOURCE
set -euo pipefail
include="$1" kit="$2" selftest="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
flags=(-std=c++20 -O3 -ffp-contract=off -static -Wall -Wextra -Werror -Wno-psabi -pthread
       -I"$include" -I"$kit")
status=0
for target in "aarch64-linux-gnu qemu-aarch64 neon -march=armv8-a" \
              "aarch64-linux-gnu qemu-aarch64 scalar -march=armv8-a -DEULERNPU_KERNELS_NO_NEON" \
              "arm-linux-gnueabihf qemu-arm neon -march=armv7-a -mfpu=neon -mfloat-abi=hard"; do
  read -r triple emulator build arch <<<"$target"
  for tool in "$triple-g++" "$emulator"; do
    if ! command -v "$tool" >/dev/null; then
      echo "blas_cross: $tool is missing (scripts/setup.sh installs it)" >&2
      exit 1
    fi
  done
  exe="$work/$triple-$build"
  # shellcheck disable=SC2206  # arch holds several flags on purpose
  "$triple-g++" "${flags[@]}" ${arch} "$selftest" "$kit/blas_portable.cpp" -o "$exe"
  if ! "$emulator" "$exe" >"$work/$triple-$build.txt"; then
    echo "blas_cross: the self-test failed on $triple ($build):" >&2
    cat "$work/$triple-$build.txt" >&2
    status=1
  fi
  tail -n 1 "$work/$triple-$build.txt" | sed "s/^/$triple ($build): /"
done
if ! diff -u "$work/aarch64-linux-gnu-neon.txt" "$work/aarch64-linux-gnu-scalar.txt"; then
  echo "blas_cross: aarch64's NEON build prints other bytes than its scalar build" >&2
  status=1
fi
exit "$status"
