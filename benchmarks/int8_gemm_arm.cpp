// The int8 GEMM variants side by side on one CPU: every variant this build
// has, on GEMM shapes of the digits and ResNet-style convolutions, each
// timed in this process against the scalar variant. Built with the ARM
// cross compilers and run under qemu-user by int8_gemm_arm.sh; C++17 and
// the kernel library only, like the kernels' self-test. Prints one line per
// shape and variant: milliseconds per GEMM and the speed-up over scalar.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "eulernpu/kernels/int8_gemm.hpp"

namespace k = eulernpu::kernels;
namespace qmath = eulernpu::sdk::qmath;

int main(int argc, char** argv) {
  const int repeat = argc > 1 ? std::atoi(argv[1]) : 3;
  // rows (output channels) × depth (kernel terms) × columns (positions).
  const k::QGemmShape shapes[] = {
      {16, 9, 64},      // digits conv1: 3x3, 1 → 16 channels on 8x8
      {32, 144, 16},    // digits conv2
      {64, 576, 196},   // a ResNet 3x3 conv, 64 channels at 14x14
      {256, 1152, 49},  // a ResNet 3x3 conv, 128 → 256 channels at 7x7
      {64, 1024, 8},    // a fully connected layer at batch 8
  };
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> code(-128, 127);
  int status = 0;
  for (const k::QGemmShape& s : shapes) {
    std::vector<int8_t> w(static_cast<size_t>(s.rows * s.depth));
    std::vector<int8_t> x(static_cast<size_t>(s.depth * s.columns));
    for (auto& v : w) v = static_cast<int8_t>(code(rng) / 4);  // keeps the bound of int8_gemm.hpp
    for (auto& v : x) v = static_cast<int8_t>(code(rng));
    std::vector<int32_t> bias(static_cast<size_t>(s.rows), 1000);
    std::vector<qmath::FixedMultiplier> m(static_cast<size_t>(s.rows),
                                          qmath::FixedMultiplier{1 << 30, 12});
    const k::QGemmOutput out{-3, 2, -128, 127};
    double scalar_ms = 0;
    std::vector<int8_t> scalar_y;
    for (const k::Int8GemmVariant& v : k::int8_gemm_variants()) {
      if (!v.supported()) continue;
      std::vector<int8_t> y(static_cast<size_t>(s.rows * s.columns));
      k::qgemm_int8(s, w.data(), x.data(), bias.data(), m.data(), out, y.data(), v.isa);  // warm
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < repeat; ++r) {
        k::qgemm_int8(s, w.data(), x.data(), bias.data(), m.data(), out, y.data(), v.isa);
      }
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
          repeat;
      if (v.isa == k::Int8GemmIsa::kScalar) {
        scalar_ms = ms;
        scalar_y = y;
      } else if (y != scalar_y) {
        std::printf("MISMATCH: %s differs from scalar\n", v.name);
        status = 1;
      }
      std::printf("%4" PRId64 "x%4" PRId64 "x%4" PRId64 "  %-12s %9.3f ms  %5.2fx scalar\n", s.rows,
                  s.depth, s.columns, v.name, ms, scalar_ms / ms);
    }
  }
  return status;
}
