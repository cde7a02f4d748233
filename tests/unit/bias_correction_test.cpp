// Bias correction on numbers worked by hand: the tap means of a padded
// conv input and the bias shift ε·E[x] they give.
#include "bias_correction.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace eulernpu::int8_quantizer {
namespace {

TEST(BiasCorrectionTest, TapMeansCountPaddingAsZero) {
  // One channel, 1×3 input [1, 2, 3], kernel 1×3, pads 1 each side, stride 1:
  // outputs at 0, 1, 2 read (pad, 1, 2), (1, 2, 3), (2, 3, pad).
  TapMeans m({1, 3}, {1, 1}, {1, 1}, {0, 1, 0, 1});
  const std::vector<float> x = {1, 2, 3};
  const std::vector<int64_t> dims = {1, 1, 1, 3};
  m.observe(x, dims);
  const auto means = m.means();
  ASSERT_EQ(means.size(), 3u);
  EXPECT_DOUBLE_EQ(means[0], (0 + 1 + 2) / 3.0);  // the left tap
  EXPECT_DOUBLE_EQ(means[1], (1 + 2 + 3) / 3.0);
  EXPECT_DOUBLE_EQ(means[2], (2 + 3 + 0) / 3.0);
  // A second sample averages in.
  const std::vector<float> y = {3, 3, 3};
  m.observe(y, dims);
  EXPECT_DOUBLE_EQ(m.means()[0], (1.0 + 2.0) / 2);
}

TEST(BiasCorrectionTest, ChannelMeansAlongAnAxis) {
  ChannelMeans m;
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};  // (2, 3), the last axis
  const std::vector<int64_t> dims = {2, 3};
  m.observe(a, dims, 1);
  EXPECT_EQ(m.means(), (std::vector<double>{2.5, 3.5, 4.5}));
  ChannelMeans rows;
  rows.observe(a, dims, 0);
  EXPECT_EQ(rows.means(), (std::vector<double>{2, 5}));
}

TEST(BiasCorrectionTest, SubtractsTheWeightErrorTimesTheMean) {
  // W (2, 2): quantized with scales 0.1 and 0.2, codes {3, 2} and {1, -1},
  // i.e. {0.3, 0.2} and {0.2, -0.2}; ε = {0.3-0.28, 0.2-0.21} = {0.02, -0.01}
  // and {0.2-0.25, -0.2+0.19} = {-0.05, -0.01}.
  const std::vector<float> w = {0.28f, 0.21f, 0.25f, -0.19f};
  QuantizedWeights q;
  q.scales = {0.1, 0.2};
  q.values = {3, 2, 1, -1};
  const std::vector<float> bias = {1.0f, -1.0f};
  const std::vector<double> means = {10.0, 20.0};  // per input channel
  const auto got = corrected_bias(bias, w, {2, 2}, q, 1, means);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NEAR(got[0], 1.0 - ((0.3 - 0.28) * 10 + (0.2 - 0.21) * 20), 1e-6);
  EXPECT_NEAR(got[1], -1.0 - ((0.2 - 0.25) * 10 + (-0.2 + 0.19) * 20), 1e-6);
  // No means, or means of another layout: the bias as it was.
  EXPECT_EQ(corrected_bias(bias, w, {2, 2}, q, 1, {}), bias);
  EXPECT_EQ(corrected_bias(bias, w, {2, 2}, q, 1, {1.0, 2.0, 3.0}), bias);
}

}  // namespace
}  // namespace eulernpu::int8_quantizer
