// Per-channel weight quantization, biases, multipliers and the accumulator
// guard, on hand-computed values.
#include "weights.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace eulernpu::int8_quantizer {
namespace {

TEST(WeightsTest, ConvWeightsPerOutputChannel) {
  // Two output channels of 1x1x2, dyadic so every quotient is exact:
  // max|w| 127/64 (scale 1/64) and 127/128 (scale 1/128).
  const std::vector<float> w{1.984375f, -0.9921875f, 0.9921875f, 0.48828125f};
  const QuantizedWeights q = quantize_weights(w, {2, 1, 1, 2}, 0);
  ASSERT_EQ(q.scales.size(), 2u);
  EXPECT_EQ(q.scales[0], 1.0 / 64);
  EXPECT_EQ(q.scales[1], 1.0 / 128);
  // 127; -63.5 -> -64 (half even); 127; 62.5 -> 62 (half even).
  EXPECT_EQ(q.values, (std::vector<int8_t>{127, -64, 127, 62}));
}

TEST(WeightsTest, GemmWeightsAlongTheOutputAxis) {
  // B is [K=2, N=2] without transB: channel n is column n.
  const std::vector<float> b{1.984375f, 0.49609375f, -0.9921875f, -0.9921875f};
  const QuantizedWeights q = quantize_weights(b, {2, 2}, 1);
  EXPECT_EQ(q.scales[0], 1.0 / 64);
  EXPECT_EQ(q.scales[1], 1.0 / 128);
  // 127, 63.5 -> 64, -63.5 -> -64, -127.
  EXPECT_EQ(q.values, (std::vector<int8_t>{127, 64, -64, -127}));
}

TEST(WeightsTest, PerTensorAndZeroChannels) {
  const std::vector<float> w{1.27f, 0.0f, 0.0f, 0.0f};
  const QuantizedWeights t = quantize_weights(w, {2, 2}, 0, /*per_tensor=*/true);
  ASSERT_EQ(t.scales.size(), 1u);
  EXPECT_NEAR(t.scales[0], 0.01, 1e-9);
  const QuantizedWeights c = quantize_weights(w, {2, 2}, 0);
  EXPECT_EQ(c.scales[1], 1.0);  // all-zero channel
  EXPECT_EQ(c.values, (std::vector<int8_t>{127, 0, 0, 0}));
}

TEST(WeightsTest, BadWeightsAreRejected) {
  const std::vector<float> w{1.0f, 2.0f};
  EXPECT_THROW(quantize_weights(w, {2}, 1), std::invalid_argument);  // axis
  EXPECT_THROW(quantize_weights(w, {3}, 0), std::invalid_argument);  // size
  const std::vector<float> inf{1.0f, INFINITY};
  EXPECT_THROW(quantize_weights(inf, {2}, 0), std::invalid_argument);
}

TEST(WeightsTest, BiasesAndMultipliers) {
  // Input scale 0.5, weight scales 0.25 and 0.125: bias scales 0.125, 0.0625.
  const std::vector<float> bias{1.0f, -0.09375f};
  EXPECT_EQ(quantize_biases(bias, 0.5, {0.25, 0.125}),
            (std::vector<int32_t>{8, -2}));                                      // -1.5 -> -2
  EXPECT_EQ(quantize_biases(bias, 0.5, {0.25}), (std::vector<int32_t>{8, -1}));  // -0.75 -> -1
  EXPECT_THROW(quantize_biases(bias, 0.5, {0.25, 0.25, 0.25}), std::invalid_argument);
  // 0.5 · 0.25 / 0.25 = 0.5 -> (2^30, 31); 0.5 · 0.125 / 0.25 = 0.25 -> (2^30, 32).
  const auto m = requant_multipliers(0.5, {0.25, 0.125}, 0.25);
  EXPECT_EQ(m[0].multiplier, 1 << 30);
  EXPECT_EQ(m[0].shift, 31);
  EXPECT_EQ(m[1].shift, 32);
}

TEST(WeightsTest, AccumulatorGuardPerChannel) {
  // One channel of k terms at |w| = 127: fits up to 66 311 terms.
  std::vector<float> w(66312, 1.0f);
  QuantizedWeights q = quantize_weights(w, {1, 66312}, 0);
  EXPECT_FALSE(accumulators_fit(q, {1, 66312}, 0, {}));
  w.pop_back();
  q = quantize_weights(w, {1, 66311}, 0);
  EXPECT_TRUE(accumulators_fit(q, {1, 66311}, 0, {}));
  EXPECT_FALSE(accumulators_fit(q, {1, 66311}, 0, {1 << 20}));  // the bias tips it
}

}  // namespace
}  // namespace eulernpu::int8_quantizer
