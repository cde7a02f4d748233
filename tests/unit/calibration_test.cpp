// Calibration methods on data whose answer is known: exact ranges for
// minmax and percentile, and the clipping behaviour that entropy and MSE
// exist for (a bulk of values with a far outlier).
#include "calibration.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

namespace eulernpu::int8_quantizer {
namespace {

// The grids as the quantizer chooses them: percentile's, or the finer one
// of the linear histogram's methods.
constexpr int kCoarse = FixedGridHistogram::kPercentileBits;
constexpr int kFine = FixedGridHistogram::kLinearBits;

TensorObserver observe(const std::vector<float>& values, std::optional<int> bits = kFine) {
  TensorObserver obs(bits);
  // Two samples, as calibration feeds them: the split must not matter.
  const size_t half = values.size() / 2;
  obs.observe({values.data(), half});
  obs.observe({values.data() + half, values.size() - half});
  return obs;
}

// 100 000 values evenly over [-1, 1] and one at 10.
std::vector<float> bulk_with_outlier() {
  std::vector<float> v;
  for (int i = 0; i < 100000; ++i) v.push_back(-1.0f + 2.0f * static_cast<float>(i) / 99999.0f);
  v.push_back(10.0f);
  return v;
}

TEST(CalibrationTest, MethodNames) {
  EXPECT_EQ(parse_method("entropy"), Method::kEntropy);
  EXPECT_STREQ(method_name(parse_method("mse")), "mse");
  EXPECT_FALSE(needs_histogram(Method::kMinMax));
  EXPECT_TRUE(needs_histogram(Method::kPercentile));
  EXPECT_THROW(parse_method("kl"), std::invalid_argument);
}

TEST(CalibrationTest, MinMaxIsTheExactRangeAndHoldsZero) {
  const Range r = choose_range(observe({-1.0f, 3.0f, NAN, 2.0f}, std::nullopt), Method::kMinMax);
  EXPECT_EQ(r.lo, -1.0);
  EXPECT_EQ(r.hi, 3.0);
  const Range pos = choose_range(observe({1.0f, 2.0f}, std::nullopt), Method::kMinMax);
  EXPECT_EQ(pos.lo, 0.0);  // zero must be representable
  EXPECT_EQ(pos.hi, 2.0);
  EXPECT_THROW(choose_range(observe({1.0f, INFINITY}, std::nullopt), Method::kMinMax),
               std::domain_error);
}

TEST(CalibrationTest, PercentileCountsTheFixedGrid) {
  EXPECT_EQ(histogram_bits(Method::kPercentile), kCoarse);
  EXPECT_EQ(histogram_bits(Method::kEntropy), kFine);
  EXPECT_EQ(histogram_bits(Method::kMse), kFine);
  // 0, 1, ..., 2048: half of 2049 values is 1024.5, reached with 1024 in
  // the bin [1024, 1024 + 1024 / 256); its upper edge is the threshold.
  std::vector<float> v;
  for (int k = 0; k <= 2048; ++k) v.push_back(static_cast<float>(k));
  const TensorObserver obs = observe(v, kCoarse);
  const FixedGridHistogram& grid = obs.fixed_grid();
  MethodOptions half;
  half.percentile = 50;
  EXPECT_EQ(choose_range(obs, Method::kPercentile, half).hi,
            grid.lower_edge(grid.key_of(1024.0f) + 1));
  EXPECT_EQ(choose_range(obs, Method::kPercentile, half).hi, 1024.0 + 1024.0 / 256);
  MethodOptions all;
  all.percentile = 100;
  EXPECT_EQ(choose_range(obs, Method::kPercentile, all).hi, 2048.0);  // never past the max
  MethodOptions bad;
  bad.percentile = 0;
  EXPECT_THROW(choose_range(obs, Method::kPercentile, bad), std::invalid_argument);
  // Whole counts: 9 999 ones and a 100 hold 99.99 % exactly at the ones.
  std::vector<float> ones(9999, 1.0f);
  ones.push_back(100.0f);
  MethodOptions p9999;
  p9999.percentile = 99.99;
  EXPECT_EQ(choose_range(observe(ones, kCoarse), Method::kPercentile, p9999).hi,
            grid.lower_edge(grid.key_of(1.0f) + 1));
  // The default 99.99 % drops the outlier of the bulk: 1 in 100 001 > 0.01 %.
  const Range r = choose_range(observe(bulk_with_outlier(), kCoarse), Method::kPercentile);
  EXPECT_LE(r.hi, 1.01);
  EXPECT_GE(r.hi, 0.99);
  EXPECT_EQ(r.lo, -1.0);
}

// Values over many binades, with zeros, subnormals, both signs and NaN.
std::vector<float> spread_values() {
  std::vector<float> v{0.0f, -0.0f, 1e-40f, -3e-39f, NAN, 1.0f, -1.0f, 2.0f, 6.0f, 6.0f};
  uint32_t state = 12345;
  for (int i = 0; i < 50000; ++i) {
    state = state * 1664525u + 1013904223u;
    const float mantissa = static_cast<float>(state >> 8) / 16777216.0f;
    const int exponent = static_cast<int>(state % 40) - 30;
    v.push_back((state & 1 ? -1.0f : 1.0f) * std::ldexp(mantissa, exponent));
    if (i % 3 == 0) v.push_back(0.0f);  // a ReLU's zeros
  }
  return v;
}

TEST(CalibrationTest, FixedGridBinsAreTheTopBitsOfTheValue) {
  const std::vector<float> v = spread_values();
  for (const int bits : {kCoarse, kFine}) {
    std::map<uint32_t, uint64_t> want;
    for (const float x : v) {
      uint32_t u;
      std::memcpy(&u, &x, sizeof u);
      if (!std::isnan(x)) ++want[(u & 0x7fffffffu) >> (23 - bits)];
    }
    FixedGridHistogram h(bits);
    h.observe(v);
    std::map<uint32_t, uint64_t> got;
    h.for_each([&](uint32_t key, uint64_t c) { got[key] = c; });
    EXPECT_EQ(got, want);
    EXPECT_EQ(h.total(), v.size() - 1);  // all but the NaN
    // A bin's edges hold its values: [lower_edge(key), lower_edge(key + 1)).
    for (const float x : v) {
      if (std::isnan(x)) continue;
      const double a = std::fabs(static_cast<double>(x));
      EXPECT_LE(h.lower_edge(h.key_of(x)), a);
      EXPECT_LT(a, h.lower_edge(h.key_of(x) + 1));
    }
  }
  // Infinities are not counted (the range reports them).
  FixedGridHistogram inf;
  inf.observe(std::vector<float>{INFINITY, -INFINITY, NAN});
  EXPECT_EQ(inf.total(), 0u);
  EXPECT_THROW(FixedGridHistogram(24), std::invalid_argument);
  EXPECT_THROW(FixedGridHistogram(kFine).merge(FixedGridHistogram(kCoarse)), std::invalid_argument);
}

TEST(CalibrationTest, AnySplitOfTheSamplesGivesTheSameBits) {
  // Sharded calibration merges observers: one observer over every value,
  // one per sample merged, and samples in another order must give the same
  // histogram and ranges, bit for bit.
  const std::vector<float> v = spread_values();
  TensorObserver whole(kFine);
  whole.observe(v);
  const size_t a = v.size() / 3, b = 2 * v.size() / 3;
  TensorObserver first(kFine), second(kFine), third(kFine);
  first.observe({v.data(), a});
  second.observe({v.data() + a, b - a});
  third.observe({v.data() + b, v.size() - b});
  TensorObserver merged(kFine);
  merged.merge(third);
  merged.merge(first);
  merged.merge(second);
  EXPECT_EQ(merged.min(), whole.min());
  EXPECT_EQ(merged.max(), whole.max());
  EXPECT_EQ(merged.count(), whole.count());
  EXPECT_EQ(merged.histogram(), whole.histogram());
  for (Method m : {Method::kMinMax, Method::kPercentile, Method::kEntropy, Method::kMse}) {
    EXPECT_EQ(choose_range(merged, m).lo, choose_range(whole, m).lo) << method_name(m);
    EXPECT_EQ(choose_range(merged, m).hi, choose_range(whole, m).hi) << method_name(m);
  }
  // An observer that saw nothing changes nothing.
  TensorObserver same = whole;
  same.merge(TensorObserver(kFine));
  EXPECT_EQ(same.histogram(), whole.histogram());
  EXPECT_THROW(same.merge(TensorObserver(kCoarse)), std::invalid_argument);
  EXPECT_THROW(same.merge(TensorObserver()), std::invalid_argument);
}

TEST(CalibrationTest, LinearBinsLieBetweenTheFixedBinsTheyCover) {
  // Each linear bin's derived count lies between the counts of the fixed
  // bins wholly inside it and of those overlapping it, as does the exact
  // count of its values (floor(|x| / width)); the mass is kept.
  for (const float abs_max : {3.7f, 0.1f, 1000.3f, 6.0e-3f, 1.0e30f}) {
    std::vector<float> v{abs_max, -abs_max};
    for (int k = 0; k < 200000; ++k) {
      v.push_back(abs_max * static_cast<float>(std::sin(k * 0.37)));
    }
    const TensorObserver obs = observe(v);
    const double width = obs.bin_width();
    std::vector<double> inside(2048, 0.0), overlapping(2048, 0.0), exact(2048, 0.0);
    const FixedGridHistogram& grid = obs.fixed_grid();
    grid.for_each([&](uint32_t key, uint64_t c) {
      const double lo = grid.lower_edge(key);
      const double hi = std::min(grid.lower_edge(key + 1), obs.abs_max());
      const auto i0 = static_cast<size_t>(std::min(std::floor(lo / width), 2047.0));
      const auto i1 = static_cast<size_t>(std::min(std::floor(hi / width), 2047.0));
      for (size_t i = i0; i <= i1; ++i) overlapping[i] += static_cast<double>(c);
      if (i0 == i1) inside[i0] += static_cast<double>(c);
    });
    for (const float x : v) {
      exact[static_cast<size_t>(
          std::min(std::floor(std::fabs(static_cast<double>(x)) / width), 2047.0))] += 1;
    }
    const auto& h = obs.histogram();
    double total = 0;
    for (size_t i = 0; i < 2048; ++i) {
      EXPECT_GE(h[i], inside[i] - 1e-6) << abs_max << " bin " << i;
      EXPECT_LE(h[i], overlapping[i] + 1e-6) << abs_max << " bin " << i;
      EXPECT_GE(exact[i], inside[i]) << abs_max << " bin " << i;
      EXPECT_LE(exact[i], overlapping[i]) << abs_max << " bin " << i;
      total += h[i];
    }
    EXPECT_NEAR(total, static_cast<double>(v.size()), 1e-6 * static_cast<double>(v.size()));
  }
}

TEST(CalibrationTest, EntropyClipsAFarOutlier) {
  const Range r = choose_range(observe(bulk_with_outlier()), Method::kEntropy);
  EXPECT_GE(r.hi, 0.99);  // keeps the bulk
  EXPECT_LT(r.hi, 3.0);   // drops the outlier at 10
  EXPECT_EQ(r.lo, -1.0);
}

TEST(CalibrationTest, MseBalancesClippingAgainstStepSize) {
  // The range is [-1, T] (the minimum is -1), so the int8 step is
  // (T + 1)/255 and the error 100 001 ((T + 1)/255)^2 / 12 + (10 - T)^2;
  // its derivative vanishes at T = 8.75: the outlier is clipped a little,
  // not to the bulk as entropy does.
  const Range r = choose_range(observe(bulk_with_outlier()), Method::kMse);
  EXPECT_NEAR(r.hi, 8.75, 0.01);
  EXPECT_EQ(r.lo, -1.0);
}

TEST(CalibrationTest, AllZeroTensors) {
  const TensorObserver obs = observe({0.0f, 0.0f, -0.0f});
  for (Method m : {Method::kMinMax, Method::kPercentile, Method::kEntropy, Method::kMse}) {
    const Range r = choose_range(obs, m);
    EXPECT_EQ(r.lo, 0.0);
    EXPECT_EQ(r.hi, 0.0);
    const QuantParams p = activation_params(r);
    EXPECT_EQ(p.scale, 1.0);
    EXPECT_EQ(p.zero_point, 0);
  }
}

TEST(CalibrationTest, AsymmetricParameters) {
  // [-1, 3]: scale 4/255; zero point -128 + 1 / (4/255) = -64.25 -> -64.
  const QuantParams a = activation_params({-1.0, 3.0});
  EXPECT_DOUBLE_EQ(a.scale, 4.0 / 255.0);
  EXPECT_EQ(a.zero_point, -64);
  // [0, 2.55]: -128; [-2.55, 0]: 127 (0 maps to the top code).
  EXPECT_EQ(activation_params({0.0, 2.55}).zero_point, -128);
  EXPECT_EQ(activation_params({-2.55, 0.0}).zero_point, 127);
  // A tie: [-0.5, 0.5] has scale 1/255 and zero point -128 + 127.5 =
  // -0.5, which rounds half to even: 0.
  EXPECT_EQ(activation_params({-127.5 / 255.0, 127.5 / 255.0}).zero_point, 0);
}

}  // namespace
}  // namespace eulernpu::int8_quantizer

namespace eulernpu::int8_quantizer {
namespace {

TEST(CalibrationTest, BestMeasuresEachCandidateOnTheValues) {
  EXPECT_EQ(parse_method("best"), Method::kBest);
  EXPECT_EQ(method_passes(Method::kBest), 2u);
  EXPECT_EQ(method_passes(Method::kMse), 1u);
  EXPECT_EQ(method_passes(Method::kMinMax), 1u);
  const std::vector<float> v = bulk_with_outlier();
  const TensorObserver obs = observe(v);
  const auto candidates = candidate_ranges(obs);
  ASSERT_EQ(candidates.size(), 6u);
  EXPECT_EQ(candidates[0].name, "minmax");
  EXPECT_EQ(candidates[2].name, "percentile 99.99");
  EXPECT_EQ(candidates[5].name, "mse");
  ErrorMeter meter(candidates);
  meter.observe({v.data(), v.size() / 2});  // in two samples, as the passes feed it
  meter.observe({v.data() + v.size() / 2, v.size() - v.size() / 2});
  // Each error is the exact sum over the values at the candidate's stored
  // int8 parameters.
  for (size_t c = 0; c < candidates.size(); ++c) {
    QuantParams p = activation_params(candidates[c].range);
    p.scale = static_cast<float>(p.scale);
    double want = 0;
    for (float x : v) {
      const double q = std::clamp(std::nearbyint(x / p.scale) + p.zero_point, -128.0, 127.0);
      want += std::pow(x - (q - p.zero_point) * p.scale, 2);
    }
    EXPECT_NEAR(meter.errors()[c], want, 1e-9 * want) << candidates[c].name;
  }
  // Clipping the outlier at 10 costs (10 - 1)^2 = 81 at once; the full
  // range's coarser step costs about 100 000 · (11/255)^2 / 12 = 15.5.
  EXPECT_NEAR(meter.errors()[0], 15.5, 0.5);
  EXPECT_GT(meter.errors()[2], 81.0);
  const auto& e = meter.errors();
  const size_t least = static_cast<size_t>(std::min_element(e.begin(), e.end()) - e.begin());
  EXPECT_EQ(meter.best().name, candidates[least].name);
  EXPECT_LT(e[least], 81.0);  // the winner keeps the outlier
}

}  // namespace
}  // namespace eulernpu::int8_quantizer
