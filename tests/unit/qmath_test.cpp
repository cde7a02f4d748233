// The integer arithmetic every backend shares, against values computed by
// hand (the comment beside each case shows the arithmetic).
#include "eulernpu/sdk/qmath.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace eulernpu::sdk::qmath {
namespace {

constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
constexpr int32_t kMin = std::numeric_limits<int32_t>::min();

TEST(QmathTest, RoundHalfEvenBreaksTiesToEven) {
  EXPECT_EQ(round_half_even(0.5), 0.0);
  EXPECT_EQ(round_half_even(1.5), 2.0);
  EXPECT_EQ(round_half_even(2.5), 2.0);
  EXPECT_EQ(round_half_even(-0.5), 0.0);
  EXPECT_EQ(round_half_even(-1.5), -2.0);
  EXPECT_EQ(round_half_even(-2.5), -2.0);
  EXPECT_EQ(round_half_even(2.4999999), 2.0);
  EXPECT_EQ(round_half_even(-2.5000001), -3.0);
}

TEST(QmathTest, RoundingDivideRoundsHalfUp) {
  EXPECT_EQ(rounding_divide(7, 2), 4);    // 3.5 -> 4
  EXPECT_EQ(rounding_divide(5, 2), 3);    // 2.5 -> 3
  EXPECT_EQ(rounding_divide(-5, 2), -2);  // -2.5 -> -2 (toward +inf)
  EXPECT_EQ(rounding_divide(-7, 2), -3);  // -3.5 -> -3
  EXPECT_EQ(rounding_divide(-8, 3), -3);  // -2.67 -> -3
  EXPECT_EQ(rounding_divide(8, 3), 3);    // 2.67 -> 3
  EXPECT_EQ(rounding_divide(0, 9), 0);
  const int64_t big = (int64_t{1} << 61) + 1;                  // near the documented limit
  EXPECT_EQ(rounding_divide(big, 2), (int64_t{1} << 60) + 1);  // 2^60 + 0.5 -> up
}

TEST(QmathTest, EncodeMultiplierNormalizesToQ31) {
  // 0.5 = 2^30 · 2^-31
  EXPECT_EQ(encode_multiplier(0.5).multiplier, 1 << 30);
  EXPECT_EQ(encode_multiplier(0.5).shift, 31);
  // 1.0 = 2^30 · 2^-30
  EXPECT_EQ(encode_multiplier(1.0).multiplier, 1 << 30);
  EXPECT_EQ(encode_multiplier(1.0).shift, 30);
  // 0.75 = 1610612736 · 2^-31 (0.75 · 2^31)
  EXPECT_EQ(encode_multiplier(0.75).multiplier, 1610612736);
  EXPECT_EQ(encode_multiplier(0.75).shift, 31);
  // 1 - 2^-40: the mantissa rounds up to 2^31 and renormalizes to 2^30 · 2^-30.
  const FixedMultiplier almost_one = encode_multiplier(1.0 - std::ldexp(1.0, -40));
  EXPECT_EQ(almost_one.multiplier, 1 << 30);
  EXPECT_EQ(almost_one.shift, 30);
}

TEST(QmathTest, EncodeMultiplierAtTheShiftLimits) {
  // The largest representable ratio: just below 2^30, shift 1.
  const FixedMultiplier top = encode_multiplier(std::ldexp(1.0, 29));  // 2^30 · 2^-1
  EXPECT_EQ(top.multiplier, 1 << 30);
  EXPECT_EQ(top.shift, 1);
  EXPECT_THROW(encode_multiplier(std::ldexp(1.0, 30)), std::invalid_argument);
  EXPECT_THROW(encode_multiplier(-0.5), std::invalid_argument);
  EXPECT_THROW(encode_multiplier(std::nan("")), std::invalid_argument);
  EXPECT_THROW(encode_multiplier(INFINITY), std::invalid_argument);
  // The smallest: 2^-32 = 2^30 · 2^-62.
  const FixedMultiplier bottom = encode_multiplier(std::ldexp(1.0, -32));
  EXPECT_EQ(bottom.multiplier, 1 << 30);
  EXPECT_EQ(bottom.shift, 62);
  // Below it nothing in int32 scales to 0.5 or more: the zero multiplier.
  const FixedMultiplier zero = encode_multiplier(std::ldexp(1.0, -33));
  EXPECT_EQ(zero.multiplier, 0);
  EXPECT_EQ(rounding_multiply(kMax, zero), 0);
  EXPECT_EQ(rounding_multiply(kMin, zero), 0);
  EXPECT_EQ(encode_multiplier(0.0).multiplier, 0);
}

TEST(QmathTest, RoundingMultiplyTiesGoUp) {
  const FixedMultiplier half = encode_multiplier(0.5);
  EXPECT_EQ(rounding_multiply(3, half), 2);    // 1.5 -> 2
  EXPECT_EQ(rounding_multiply(5, half), 3);    // 2.5 -> 3
  EXPECT_EQ(rounding_multiply(-3, half), -1);  // -1.5 -> -1
  EXPECT_EQ(rounding_multiply(-5, half), -2);  // -2.5 -> -2
  EXPECT_EQ(rounding_multiply(-4, half), -2);  // exact
  const FixedMultiplier quarter = encode_multiplier(0.25);
  EXPECT_EQ(rounding_multiply(-7, quarter), -2);  // -1.75 -> -2
  EXPECT_EQ(rounding_multiply(-6, quarter), -1);  // -1.5 -> -1
  EXPECT_EQ(rounding_multiply(6, quarter), 2);    // 1.5 -> 2
}

TEST(QmathTest, RoundingMultiplyIsOneRounding) {
  // 0.75 · 1 = 0.75 -> 1; 0.75 · 2 = 1.5 -> 2; 0.75 · -2 = -1.5 -> -1.
  const FixedMultiplier m = encode_multiplier(0.75);
  EXPECT_EQ(rounding_multiply(1, m), 1);
  EXPECT_EQ(rounding_multiply(2, m), 2);
  EXPECT_EQ(rounding_multiply(-2, m), -1);
  // An odd multiplier: 3/7 ≈ 0.428571; 7 · 3/7 = 3 within 2^-31: exact 3.
  EXPECT_EQ(rounding_multiply(7, encode_multiplier(3.0 / 7.0)), 3);
  EXPECT_EQ(rounding_multiply(-7, encode_multiplier(3.0 / 7.0)), -3);
}

TEST(QmathTest, RoundingMultiplySaturatesAndNeverOverflows) {
  const FixedMultiplier one = encode_multiplier(1.0);
  EXPECT_EQ(rounding_multiply(kMax, one), kMax);
  EXPECT_EQ(rounding_multiply(kMin, one), kMin);
  const FixedMultiplier two = encode_multiplier(2.0);
  EXPECT_EQ(rounding_multiply(kMax, two), kMax);  // 2^32 - 2 saturates
  EXPECT_EQ(rounding_multiply(kMin, two), kMin);  // -2^32 saturates
  const FixedMultiplier huge = encode_multiplier(std::ldexp(1.0, 29));
  EXPECT_EQ(rounding_multiply(kMax, huge), kMax);
  EXPECT_EQ(rounding_multiply(kMin, huge), kMin);
  EXPECT_EQ(rounding_multiply(-1, huge), -(1 << 29));
  // Shift 62: (2^31 - 1) · 2^-32 = 0.49999... -> 0; -2^31 · 2^-32 = -0.5 -> 0.
  const FixedMultiplier tiny = encode_multiplier(std::ldexp(1.0, -32));
  EXPECT_EQ(rounding_multiply(kMax, tiny), 0);
  EXPECT_EQ(rounding_multiply(kMin, tiny), 0);
  // 2^-31 at shift 61: -2^31 · 2^-31 = -1 exactly; (2^31-1) · 2^-31 -> 1.
  const FixedMultiplier small = encode_multiplier(std::ldexp(1.0, -31));
  EXPECT_EQ(small.shift, 61);
  EXPECT_EQ(rounding_multiply(kMin, small), -1);
  EXPECT_EQ(rounding_multiply(kMax, small), 1);
}

TEST(QmathTest, RequantizeAddsZeroPointThenClamps) {
  const FixedMultiplier half = encode_multiplier(0.5);
  EXPECT_EQ(requantize(100, half, 3, -128, 127), 53);      // 50 + 3
  EXPECT_EQ(requantize(1000, half, 0, -128, 127), 127);    // 500 saturates high
  EXPECT_EQ(requantize(-1000, half, 0, -128, 127), -128);  // -500 saturates low
  EXPECT_EQ(requantize(-1000, half, 10, 10, 127), 10);     // fused Relu: qmin = zp
  EXPECT_EQ(requantize(kMax, half, 127, -128, 127), 127);  // no int32 wrap at the zero point
  EXPECT_EQ(requantize(kMin, half, -128, -128, 127), -128);
  EXPECT_EQ(requantize(-3, half, -1, -128, 127), -2);  // -1.5 -> -1, then -1
}

TEST(QmathTest, ConstantsQuantizeHalfEvenAndSymmetric) {
  EXPECT_EQ(quantize_weight(0.25, 0.5), 0);    // 0.5 -> 0
  EXPECT_EQ(quantize_weight(0.75, 0.5), 2);    // 1.5 -> 2
  EXPECT_EQ(quantize_weight(-0.75, 0.5), -2);  // -1.5 -> -2
  EXPECT_EQ(quantize_weight(100.0, 0.5), 127);
  EXPECT_EQ(quantize_weight(-100.0, 0.5), -127);     // never -128
  EXPECT_EQ(quantize_bias(1.0, 0.5, 0.25), 8);       // 1 / 0.125
  EXPECT_EQ(quantize_bias(-0.1875, 0.5, 0.25), -2);  // -1.5 -> -2
  EXPECT_EQ(quantize_bias(1e12, 0.5, 0.25), kMax);
  EXPECT_EQ(quantize_bias(-1e12, 0.5, 0.25), kMin);
}

TEST(QmathTest, AccumulatorBoundGuardsInt32) {
  // 3x3x256 conv, worst-case int8 input (|q - zp| <= 255) and weights (127).
  EXPECT_TRUE(accumulator_fits_int32(3 * 3 * 256, 255, 127, 1 << 20));
  // 2^31 / (255 · 127) = 66311.3: 66311 terms fit, 66312 do not.
  EXPECT_TRUE(accumulator_fits_int32(66311, 255, 127, 0));
  EXPECT_FALSE(accumulator_fits_int32(66312, 255, 127, 0));
  EXPECT_FALSE(accumulator_fits_int32(66311, 255, 127, 1 << 20));  // the bias tips it
}

TEST(QmathTest, AddRescalesBothInputsOnce) {
  // s_a = 0.5, s_b = 0.25, s_out = 0.5, zero points 0: 1.5 + 0.5 = 2.0 -> 4.
  // twice_max = 1; a: 3·2^20·0.5 = 1572864; b: 2·2^20·0.25 = 524288;
  // sum 2^21 · 2^-19 = 4.
  const AddParams p = encode_add(0.5, 0, 0.25, 0, 0.5, 0);
  EXPECT_EQ(add(3, 2, p), 4);
  EXPECT_EQ(add(3, 2, p, /*subtract=*/true), 2);  // 1.5 - 0.5 = 1.0 -> 2
  // Zero points: a = 13 at zp 10 is 1.5; b = -2 at zp -4 is 0.5; out zp 5.
  const AddParams z = encode_add(0.5, 10, 0.25, -4, 0.5, 5);
  EXPECT_EQ(add(13, -2, z), 9);
  // Saturation at both ends, and a fused Relu clamp.
  EXPECT_EQ(add(127, 127, p), 127);
  EXPECT_EQ(add(-128, -128, p), -128);
  const AddParams relu = encode_add(0.5, 0, 0.25, 0, 0.5, 0, /*qmin=*/0, /*qmax=*/127);
  EXPECT_EQ(add(-10, 2, relu), 0);
  // A result that falls on a half: 0.5·1 + 0.25·1 = 0.75 at s_out 0.5 = 1.5 -> 2.
  EXPECT_EQ(add(1, 1, p), 2);
  EXPECT_EQ(add(-1, -1, p), -1);  // -1.5 -> -1 (ties up)
}

TEST(QmathTest, TablesQuantizeTheFloatFunction) {
  // Identity at equal scales reproduces every code.
  const auto id = build_table([](double x) { return x; }, 0.1, 3, 0.1, 3);
  for (int q = -128; q <= 127; ++q) EXPECT_EQ(lookup(id, static_cast<int8_t>(q)), q);
  // Relu with out zp -128: negative inputs map to -128, 0.5 at s 0.25 -> 2 - 128.
  const auto relu = build_table([](double x) { return x > 0 ? x : 0.0; }, 0.25, 0, 0.25, -128);
  EXPECT_EQ(lookup(relu, -5), -128);
  EXPECT_EQ(lookup(relu, 2), -126);
  EXPECT_EQ(lookup(relu, 127), -1);  // 31.75 / 0.25 = 127, - 128
  // Sigmoid(0) = 0.5 at s 1/256, zp -128 -> 0.
  const auto sig =
      build_table([](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 0.1, 0, 1.0 / 256.0, -128);
  EXPECT_EQ(lookup(sig, 0), 0);
  EXPECT_EQ(lookup(sig, -128), -128 + 0);  // sigmoid(-12.8) · 256 = 0.0007 -> 0
  EXPECT_EQ(lookup(sig, 127), 127);        // 255.99 -> 256 - 128 saturates to 127
}

TEST(QmathTest, SoftmaxSumsToTheFullRange) {
  // Two equal logits: each 0.5 -> 128 - 128 = 0.
  const auto table = build_softmax_exp_table(0.1);
  EXPECT_EQ(table[0], 1 << 20);
  std::vector<int8_t> row{5, 5}, out(2);
  softmax_row(row.data(), out.data(), 2, table);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 0);
  // One logit: probability 1 -> 256 - 128 saturates to 127.
  softmax_row(row.data(), out.data(), 1, table);
  EXPECT_EQ(out[0], 127);
  // Logits 0 and -10 at s = ln(2)/10 · 10 = ln 2 per 10 codes: e = 2^20 and
  // 2^19; probabilities 2/3 and 1/3 -> 170.67 -> 171 - 128 = 43, 85.33 -> 85 - 128.
  const auto ln2 = build_softmax_exp_table(std::log(2.0) / 10.0);
  EXPECT_EQ(ln2[10], 1 << 19);
  std::vector<int8_t> two{0, -10}, res(2);
  softmax_row(two.data(), res.data(), 2, ln2);
  EXPECT_EQ(res[0], 43);
  EXPECT_EQ(res[1], -43);
  // In place, and a long row far from overflow.
  std::vector<int8_t> wide(100000, -7);
  softmax_row(wide.data(), wide.data(), static_cast<int64_t>(wide.size()), table);
  EXPECT_EQ(wide[0], -128);  // 256/100000 = 0.00256 -> 0 - 128
}

}  // namespace
}  // namespace eulernpu::sdk::qmath
