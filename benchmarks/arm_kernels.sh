#!/usr/bin/env bash
# The NEON int8 kernels (and the float GEMM of bundles) against the portable scalar code, on aarch64 and
# armv7-a (NEON, hard float): builds arm_kernels.cpp twice per target with
# the ARM cross compilers (once as is, once with EULERNPU_KERNELS_NO_NEON),
# runs each under qemu-user and counts the guest instructions one kernel
# call retires. It counts instructions rather than timing, because emulated
# time says little about a Cortex-A53 or A9 and varies from run to run by
# half the ratio; Debian's qemu has no plugins, but `-singlestep -d
# nochain,exec` logs one line per executed instruction. A call's count is
# the count of a run with 2 calls minus that of a run with 1 (the setup and
# the process start cancel). Fails if a NEON build computes other bytes
# than the scalar build.
#   benchmarks/arm_kernels.sh [--write-docs FILE | --check-docs FILE] [CASE...]
# A CASE_packed case is CASE over the weights zynq_ps packs; its bytes must
# be CASE's. The cases default to all ten; --write-docs replaces the table between
# the markers in FILE, --check-docs fails if the table there differs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="" docs=""
case "${1:-}" in
  --write-docs | --check-docs) mode="$1" docs="$2"; shift 2 ;;
esac
cases=("$@")
[ "${#cases[@]}" -gt 0 ] || cases=(conv3x3 conv3x3_packed depthwise3x3 fc fc_packed gemm_batch8
  gemm_batch8_packed matmul add sgemm)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for tool in aarch64-linux-gnu-g++ arm-linux-gnueabihf-g++ qemu-aarch64 qemu-arm; do
  if ! command -v "$tool" >/dev/null; then
    echo "arm_kernels: $tool is missing (scripts/setup.sh installs it)" >&2
    exit 1
  fi
done

k="$root/sdk/kernels/src"
sources=("$k/conv.cpp" "$k/elementwise.cpp" "$k/int8_gemm.cpp" "$k/int8_gemm_avx512_vnni.cpp"
         "$k/int8_gemm_avx2.cpp" "$k/int8_gemm_neon.cpp" "$k/requantize_row.cpp"
         "$k/requantize_row_avx512.cpp" "$k/lookup_bytes_vbmi.cpp"
         "$k/int8_gemm_packed.cpp" "$k/int8_gemm_packed_neon.cpp" "$k/matmul.cpp"
         "$root/sdk/kit/src/blas_portable.cpp")
# -O3, as a bundle's Release build (plugins/zynq_ps/bundle/CMakeLists.txt);
# static, as the bundles link by default, which also keeps the dynamic
# loader out of the trace (a third of the time). -Wno-psabi: GCC's notes on
# armv7-a that an ABI changed in GCC 7.1.
flags=(-std=c++20 -O3 -ffp-contract=off -static -Wall -Wextra -Werror -Wno-psabi -pthread
       -I"$root/sdk/include" -I"$k" -I"$root/sdk/kit/src")

# count EMULATOR TRIPLE EXE CASE REPEAT: instructions retired by the run;
# prints the digest line to $work/digest.
count() {
  local fifo="$work/trace"
  rm -f "$fifo"
  mkfifo "$fifo"
  wc -l <"$fifo" >"$work/lines" &
  "$1" -L "/usr/$2" -singlestep -d nochain,exec -D "$fifo" "$3" "$4" "$5" >"$work/digest"
  wait $!
  cat "$work/lines"
}

table="$work/table.md"
{
  echo "| kernel call | aarch64: neon | aarch64: scalar | ratio | armv7-a: neon | armv7-a: scalar | ratio |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
} >"$table"
status=0
declare -A per_call digest
for target in "aarch64-linux-gnu qemu-aarch64 -march=armv8-a" \
              "arm-linux-gnueabihf qemu-arm -march=armv7-a -mfpu=neon -mfloat-abi=hard"; do
  read -r triple emulator arch <<<"$target"
  for build in neon scalar; do
    extra=()
    [ "$build" = scalar ] && extra=(-DEULERNPU_KERNELS_NO_NEON)
    # shellcheck disable=SC2206  # arch holds several flags on purpose
    "$triple-g++" "${flags[@]}" ${arch} "${extra[@]}" "$root/benchmarks/arm_kernels.cpp" \
      "${sources[@]}" -o "$work/$triple-$build"
    for c in "${cases[@]}"; do
      one="$(count "$emulator" "$triple" "$work/$triple-$build" "$c" 1)"
      two="$(count "$emulator" "$triple" "$work/$triple-$build" "$c" 2)"
      per_call["$triple/$build/$c"]=$((two - one))
      digest["$triple/$build/$c"]="$(cat "$work/digest")"
    done
  done
  for c in "${cases[@]}"; do
    if [ "${digest[$triple/neon/$c]}" != "${digest[$triple/scalar/$c]}" ]; then
      echo "arm_kernels: $c on $triple: the NEON build computed other bytes than the scalar" \
           "build (${digest[$triple/neon/$c]} vs ${digest[$triple/scalar/$c]})" >&2
      status=1
    fi
    base="${c%_packed}"
    if [ "$base" != "$c" ] && [ -n "${digest[$triple/neon/$base]:-}" ] &&
       [ "${digest[$triple/neon/$c]#* }" != "${digest[$triple/neon/$base]#* }" ]; then
      echo "arm_kernels: $c on $triple: the packed weights gave other bytes than $base" >&2
      status=1
    fi
  done
done

label() {
  case "$1" in
    conv3x3) echo "3×3 conv, 16 → 16 channels, 14×14" ;;
    conv3x3_packed) echo "the same, packed weights" ;;
    depthwise3x3) echo "3×3 depthwise, 32 channels, 28×28" ;;
    fc) echo "fully connected 512 → 256, batch 1" ;;
    fc_packed | gemm_batch8_packed) echo "the same, packed weights" ;;
    gemm_batch8) echo "fully connected 512 → 64, batch 8" ;;
    matmul) echo "attention scores, (64 × 32) · (32 × 64)" ;;
    add) echo "residual add, 32 channels, 28×28" ;;
    sgemm) echo "float32 GEMM 16 × 144 · 144 × 196 (a 3×3 conv's)" ;;
    *) echo "$1" ;;
  esac
}
grouped() { echo "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }
for c in "${cases[@]}"; do
  row="| $(label "$c") ($c)"
  for triple in aarch64-linux-gnu arm-linux-gnueabihf; do
    n="${per_call[$triple/neon/$c]}" s="${per_call[$triple/scalar/$c]}"
    row+=" | $(grouped "$n") | $(grouped "$s") | $(awk -v a="$s" -v b="$n" 'BEGIN{printf "%.2f×", a/b}')"
  done
  echo "$row |" >>"$table"
done
cat "$table"
[ "$status" -eq 0 ] || exit "$status"

begin="<!-- arm_kernels.sh: begin -->" end="<!-- arm_kernels.sh: end -->"
if [ -n "$mode" ]; then
  if ! grep -qF "$begin" "$docs" || ! grep -qF "$end" "$docs"; then
    echo "arm_kernels: $docs has no '$begin' ... '$end' markers" >&2
    exit 1
  fi
  awk -v b="$begin" -v e="$end" -v t="$table" '
    $0 == b { print; while ((getline line < t) > 0) print line; skip = 1; next }
    $0 == e { skip = 0 }
    !skip { print }' "$docs" >"$work/docs.md"
  if [ "$mode" = --write-docs ]; then
    cp "$work/docs.md" "$docs"
  elif ! diff -u "$docs" "$work/docs.md"; then
    echo "arm_kernels: the table in $docs is not what the kernels retire now;" \
         "run benchmarks/arm_kernels.sh --write-docs $docs" >&2
    exit 1
  fi
fi
