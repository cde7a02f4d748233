// Exact float64 sums: the same values give the same bits in any order and
// any split, the value is the exact sum correctly rounded, and infinities
// and NaN come out as IEEE addition gives them.
#include "exact_sum.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace eulernpu::int8_quantizer {
namespace exact_sum_test {
namespace {

// Doubles over the whole range: subnormals, tiny, ordinary and huge, of
// both signs, with exact cancellations among them.
std::vector<double> wide_values() {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> exponent(-1074, 1000);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::vector<double> v;
  for (int i = 0; i < 5000; ++i) {
    const double x = std::ldexp(mantissa(rng), exponent(rng));
    v.push_back(i % 3 == 0 ? -x : x);
  }
  for (int i = 0; i < 200; ++i) v.push_back(-v[static_cast<size_t>(i) * 7]);
  v.push_back(std::numeric_limits<double>::denorm_min());
  v.push_back(-0.0);
  return v;
}

ExactSum sum_of(const std::vector<double>& v) {
  ExactSum s;
  for (double x : v) s.add(x);
  return s;
}

TEST(ExactSumTest, OrderAndSplitDoNotChangeABit) {
  std::vector<double> v = wide_values();
  const ExactSum forward = sum_of(v);
  std::reverse(v.begin(), v.end());
  EXPECT_EQ(sum_of(v), forward);
  std::shuffle(v.begin(), v.end(), std::mt19937_64(3));
  EXPECT_EQ(sum_of(v), forward);
  // Three parts, interleaved, merged in another order.
  ExactSum parts[3];
  for (size_t i = 0; i < v.size(); ++i) parts[i % 3].add(v[i]);
  ExactSum merged = parts[2];
  merged.merge(parts[0]);
  merged.merge(parts[1]);
  EXPECT_EQ(merged, forward);
  EXPECT_EQ(merged.encode(), forward.encode());
}

TEST(ExactSumTest, ValueIsTheExactSumRounded) {
  ExactSum s;
  s.add(1e308);
  s.add(1.0);
  s.add(-1e308);
  EXPECT_EQ(s.value(), 1.0);  // float64 addition in this order gives 0
  ExactSum tiny;
  tiny.add(std::ldexp(1.0, 1023));
  tiny.add(std::numeric_limits<double>::denorm_min());
  tiny.add(-std::ldexp(1.0, 1023));
  EXPECT_EQ(tiny.value(), std::numeric_limits<double>::denorm_min());
  // A tie rounds to even; anything beyond it rounds up.
  ExactSum tie;
  tie.add(1.0);
  tie.add(std::ldexp(1.0, -53));
  EXPECT_EQ(tie.value(), 1.0);
  tie.add(std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(tie.value(), 1.0 + std::ldexp(1.0, -52));
  ExactSum negative;
  negative.add(-2.5);
  negative.add(0.25);
  EXPECT_EQ(negative.value(), -2.25);
  // What a double holds comes back as it is.
  for (double x : wide_values()) {
    ExactSum one;
    one.add(x);
    ASSERT_EQ(one.value(), x == 0 ? 0.0 : x);
  }
}

TEST(ExactSumTest, CancellingToZeroIsZero) {
  std::vector<double> v = wide_values();
  ExactSum s = sum_of(v);
  for (double x : v) s.add(-x);
  EXPECT_EQ(s, ExactSum{});
  EXPECT_EQ(s.value(), 0.0);
}

TEST(ExactSumTest, InfinitiesAndNaNAsIeeeAdditionGivesThem) {
  const double inf = std::numeric_limits<double>::infinity();
  ExactSum a;
  a.add(1.0);
  a.add(inf);
  EXPECT_EQ(a.value(), inf);
  a.add(-inf);
  EXPECT_TRUE(std::isnan(a.value()));
  ExactSum b;
  b.add(std::nan(""));
  EXPECT_TRUE(std::isnan(b.value()));
  // Beyond the largest double: infinity.
  ExactSum big;
  big.add(std::numeric_limits<double>::max());
  big.add(std::numeric_limits<double>::max());
  EXPECT_EQ(big.value(), inf);
}

TEST(ExactSumTest, BytesRoundTripAndBadBytesAreRefused) {
  const ExactSum s = sum_of(wide_values());
  const std::string bytes = s.encode();
  EXPECT_EQ(bytes.size(), ExactSum::kEncodedSize);
  EXPECT_EQ(ExactSum::decode(bytes), s);
  EXPECT_THROW(ExactSum::decode(bytes.substr(1)), std::invalid_argument);
  std::string flags = bytes;
  flags.back() = 8;
  EXPECT_THROW(ExactSum::decode(flags), std::invalid_argument);
}

}  // namespace
}  // namespace exact_sum_test
}  // namespace eulernpu::int8_quantizer
