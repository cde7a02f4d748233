#!/usr/bin/env bash
# Installs every Debian 12 package that building, running and testing eulernpu
# needs. Idempotent: packages already present are left alone, and the package
# lists are refreshed at most once per run (only when something is missing).
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  # Ninja schedules both cores across targets (scripts/cmake_generator.sh).
  ninja-build
  libboost-dev libboost-filesystem-dev
  libprotobuf-dev protobuf-compiler libonnx-dev
  libopenblas-dev
  libspdlog-dev libfmt-dev libcxxopts-dev
  nlohmann-json3-dev libyaml-cpp-dev
  libzip-dev zipcmp zipmerge ziptool
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-numpy python3-onnx python3-sklearn
  # The Python module (python/, docs/python.md) and its tests.
  pybind11-dev python3-dev python3-pytest
  g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user
  # Exported bundles are cross-built once per model in the tests: ccache
  # compiles the kernel files they share once (tests/cli/test_zynq_bundle.py).
  ccache
  # The sanitizer tree and the fuzz harnesses (scripts/sanitize.sh):
  # libFuzzer and the sanitizer runtimes, llvm-symbolizer for their reports.
  clang-14 libclang-rt-14-dev llvm-14
  # lld links the sanitized binaries (some 80 MB each) four times faster than ld.
  lld-14
  # fpga_board's PL engine in RTL: Verilator co-simulates it against the C++
  # model, Yosys synthesizes it for the resource model (tests/cli/test_fpga_rtl.py,
  # plugins/fpga_board/rtl/synth_sizes.py).
  verilator yosys
  # Sharded calibration as Slurm job arrays: the test starts a one-node
  # cluster (tests/cli/test_slurm.py, docs/scale-out.md).
  slurm-wlm munge
  # ... and as MPI ranks: libeulernpu_mpi.so links Open MPI (calibrate --mpi,
  # tests/cli/test_mpi.py).
  openmpi-bin libopenmpi-dev
)

# The real-model suite fetches its models with npm (tests/real_models). A
# machine with Node.js from elsewhere (it brings npm) keeps it.
if ! command -v npm >/dev/null 2>&1; then packages+=(npm); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
