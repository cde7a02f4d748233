// Calibration methods on data whose answer is known: exact ranges for
// minmax and percentile, and the clipping behaviour that entropy and MSE
// exist for (a bulk of values with a far outlier).
#include "calibration.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace eulernpu::int8_quantizer {
namespace {

TensorObserver observe(const std::vector<float>& values, bool histogram = true) {
  TensorObserver obs;
  // Two samples, as calibration feeds them: the split must not matter.
  const size_t half = values.size() / 2;
  obs.observe_range({values.data(), half});
  obs.observe_range({values.data() + half, values.size() - half});
  if (histogram) {
    obs.observe_histogram({values.data(), half});
    obs.observe_histogram({values.data() + half, values.size() - half});
  }
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
  const Range r = choose_range(observe({-1.0f, 3.0f, NAN, 2.0f}, false), Method::kMinMax);
  EXPECT_EQ(r.lo, -1.0);
  EXPECT_EQ(r.hi, 3.0);
  const Range pos = choose_range(observe({1.0f, 2.0f}, false), Method::kMinMax);
  EXPECT_EQ(pos.lo, 0.0);  // zero must be representable
  EXPECT_EQ(pos.hi, 2.0);
  EXPECT_THROW(choose_range(observe({1.0f, INFINITY}, false), Method::kMinMax), std::domain_error);
}

TEST(CalibrationTest, PercentileCountsTheHistogram) {
  // 0, 1, ..., 2048: bin width 1, one value per bin, two in the last.
  std::vector<float> v;
  for (int k = 0; k <= 2048; ++k) v.push_back(static_cast<float>(k));
  const TensorObserver obs = observe(v);
  EXPECT_EQ(obs.bin_width(), 1.0);
  EXPECT_EQ(obs.histogram()[0], 1.0);
  EXPECT_EQ(obs.histogram()[2047], 2.0);
  // Half of 2049 values is 1024.5: the first 1025 bins hold it.
  MethodOptions half;
  half.percentile = 50;
  EXPECT_EQ(choose_range(obs, Method::kPercentile, half).hi, 1025.0);
  MethodOptions all;
  all.percentile = 100;
  EXPECT_EQ(choose_range(obs, Method::kPercentile, all).hi, 2048.0);
  MethodOptions bad;
  bad.percentile = 0;
  EXPECT_THROW(choose_range(obs, Method::kPercentile, bad), std::invalid_argument);
  // The default 99.99 % drops the outlier of the bulk: 1 in 100 001 > 0.01 %.
  const Range r = choose_range(observe(bulk_with_outlier()), Method::kPercentile);
  EXPECT_LE(r.hi, 1.01);
  EXPECT_GE(r.hi, 0.99);
  EXPECT_EQ(r.lo, -1.0);
}

TEST(CalibrationTest, HistogramBinsAreTheQuotientsFloors) {
  // Every value's bin is min(floor(|v| / width), 2047) with the quotient
  // rounded in float64, however the observer computes it: checked on the
  // floats nearest every bin edge, at widths that are not powers of two.
  for (const float abs_max : {3.7f, 0.1f, 1000.3f, 6.0e-3f, 1.0e30f, 2.0e-38f}) {
    const double width = static_cast<double>(abs_max) / 2048;
    std::vector<float> v{abs_max, -abs_max, 0.0f, -0.0f, NAN};
    for (int k = 1; k < 2048; ++k) {
      const float edge = static_cast<float>(k * width);
      for (float x : {std::nextafter(edge, 0.0f), edge, std::nextafter(edge, abs_max)}) {
        v.push_back(x);
        v.push_back(-x);
      }
    }
    auto expected = [&](const std::vector<float>& values) {
      std::vector<double> h(2048, 0.0);
      for (const float x : values) {
        if (std::isnan(x)) continue;
        const double q = std::floor(std::fabs(static_cast<double>(x)) / width);
        h[static_cast<size_t>(std::min(q, 2047.0))] += 1;
      }
      return h;
    };
    EXPECT_EQ(observe(v).histogram(), expected(v)) << "abs_max " << abs_max;
    // Halves of 4096 values or fewer take the small tensors' path.
    const std::vector<float> small(v.begin(), v.begin() + 8000);
    EXPECT_EQ(observe(small).histogram(), expected(small)) << "abs_max " << abs_max << ", small";
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
  EXPECT_EQ(method_passes(Method::kBest), 3u);
  EXPECT_EQ(method_passes(Method::kMse), 2u);
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
