// cpu_ref's int8 GEMM against the definition computed term by term in
// int64, and against the float computation it approximates.
#include "int8_gemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace eulernpu::cpu_ref {
namespace {

namespace qmath = sdk::qmath;

TEST(Int8GemmTest, HandComputedCase) {
  // One output channel, two terms: w = [2, -3], x = [[5], [-4]], x_zp = 1:
  // 2·(5−1) + (−3)·(−4−1) = 8 + 15 = 23; + bias 4 = 27; · 0.5 = 13.5 -> 14;
  // + y_zp −3 = 11.
  const int8_t w[] = {2, -3};
  const int8_t x[] = {5, -4};
  const int32_t bias[] = {4};
  const qmath::FixedMultiplier m[] = {qmath::encode_multiplier(0.5)};
  int8_t y[1] = {0};
  qgemm_int8({1, 2, 1}, w, x, bias, m, {1, -3, -128, 127}, y);
  EXPECT_EQ(y[0], 11);
  // A fused Relu (qmin = y_zp) clamps a negative result to the zero point.
  const int8_t neg[] = {-2, 3};
  qgemm_int8({1, 2, 1}, neg, x, nullptr, m, {1, -3, -3, 127}, y);
  EXPECT_EQ(y[0], -3);  // −23 · 0.5 = −11.5 -> −11, −14 clamps to −3
}

TEST(Int8GemmTest, MatchesTheDefinitionOnRandomData) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> code(-128, 127), wcode(-127, 127);
  const QGemmShape s{5, 37, 23};
  std::vector<int8_t> w(static_cast<size_t>(s.rows * s.depth)),
      x(static_cast<size_t>(s.depth * s.columns));
  for (auto& v : w) v = static_cast<int8_t>(wcode(rng));
  for (auto& v : x) v = static_cast<int8_t>(code(rng));
  std::vector<int32_t> bias;
  std::vector<qmath::FixedMultiplier> m;
  for (int64_t o = 0; o < s.rows; ++o) {
    bias.push_back(static_cast<int32_t>(o * 1000 - 2000));
    m.push_back(qmath::encode_multiplier(0.0007 * static_cast<double>(o + 1)));
  }
  const QGemmOutput out{-17, 9, -128, 127};
  std::vector<int8_t> y(static_cast<size_t>(s.rows * s.columns));
  qgemm_int8(s, w.data(), x.data(), bias.data(), m.data(), out, y.data());
  for (int64_t o = 0; o < s.rows; ++o) {
    for (int64_t p = 0; p < s.columns; ++p) {
      int64_t acc = bias[static_cast<size_t>(o)];
      for (int64_t k = 0; k < s.depth; ++k) {
        acc += int64_t{w[static_cast<size_t>(o * s.depth + k)]} *
               (x[static_cast<size_t>(k * s.columns + p)] - out.x_zero_point);
      }
      const int32_t want = qmath::requantize(static_cast<int32_t>(acc), m[static_cast<size_t>(o)],
                                             out.y_zero_point, out.qmin, out.qmax);
      ASSERT_EQ(y[static_cast<size_t>(o * s.columns + p)], want) << o << "," << p;
      // And within one code of the real-valued result (before saturation).
      const double real =
          static_cast<double>(acc) * 0.0007 * static_cast<double>(o + 1) + out.y_zero_point;
      if (real > -128 && real < 127) {
        EXPECT_LE(std::fabs(want - real), 0.5 + 1e-4);  // + the Q31 encoding error
      }
    }
  }
}

}  // namespace
}  // namespace eulernpu::cpu_ref
