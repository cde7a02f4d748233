#!/usr/bin/env bash
# The int8 GEMM variants on aarch64 and armv7-a (NEON, hard float): builds
# int8_gemm_arm.cpp with the ARM cross compilers and runs it under
# qemu-user (x86-64 has no NEON; benchmarks/int8_benchmarks.cpp measures
# the native variants). Under qemu the times are of emulated code: a
# guest NEON instruction and a guest scalar one cost the emulator different
# amounts, so the ratios say which variant does less work, not what a
# Cortex-A53 or A9 would measure (docs/backends/zynq_ps.md, "Kernels").
#   benchmarks/int8_gemm_arm.sh [REPEAT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repeat="${1:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sources=("$root"/sdk/kernels/src/int8_gemm*.cpp)
flags=(-std=c++17 -O2 -fno-exceptions -Wall -Wextra -Werror -pthread
       -I"$root/sdk/include" -I"$root/sdk/kernels/src")
for tool in aarch64-linux-gnu-g++ arm-linux-gnueabihf-g++ qemu-aarch64 qemu-arm; do
  if ! command -v "$tool" >/dev/null; then
    echo "int8_gemm_arm: $tool is missing (scripts/setup.sh installs it)" >&2
    exit 1
  fi
done
for target in "aarch64-linux-gnu qemu-aarch64 -march=armv8-a" \
              "arm-linux-gnueabihf qemu-arm -march=armv7-a -mfpu=neon -mfloat-abi=hard"; do
  read -r triple emulator arch <<<"$target"
  echo "== $triple"
  # shellcheck disable=SC2206  # arch holds several flags on purpose
  "$triple-g++" "${flags[@]}" ${arch} "$root/benchmarks/int8_gemm_arm.cpp" "${sources[@]}" \
    -o "$work/$triple"
  "$emulator" -L "/usr/$triple" "$work/$triple" "$repeat"
done
