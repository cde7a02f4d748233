// Adaptive rounding: the input moments of a Conv's patches and a Gemm's
// rows on cases worked by hand, the coordinate descent on a case whose
// optimum is known, and, on random data, that the error it reports is the
// layer's measured output error and never above nearest rounding's.
#include "adaptive_rounding.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace eulernpu::int8_quantizer {
namespace {

TEST(AdaptiveRoundingTest, ConvMomentsReadPaddingAsZero) {
  // One channel, 1×3 input [1, 2, 3], kernel 1×3, pads 1 each side: the
  // patches are (0, 1, 2), (1, 2, 3), (2, 3, 0).
  InputMoments m({1, 3}, {1, 1}, {1, 1}, {0, 1, 0, 1}, 1, 1);
  const std::vector<float> x = {1, 2, 3};
  m.observe(x, std::vector<int64_t>{1, 1, 1, 3});
  ASSERT_EQ(m.features(), 3);
  const auto h = m.moments(0);
  ASSERT_EQ(h.size(), 9u);
  EXPECT_DOUBLE_EQ(h[0], (0 + 1 + 4) / 3.0);
  EXPECT_DOUBLE_EQ(h[1], (0 * 1 + 1 * 2 + 2 * 3) / 3.0);
  EXPECT_DOUBLE_EQ(h[2], (0 * 2 + 1 * 3 + 2 * 0) / 3.0);
  EXPECT_DOUBLE_EQ(h[3], h[1]);  // symmetric
  EXPECT_DOUBLE_EQ(h[4], (1 + 4 + 9) / 3.0);
  EXPECT_DOUBLE_EQ(h[8], (4 + 9 + 0) / 3.0);
}

TEST(AdaptiveRoundingTest, ConvMomentsPerGroupWithStride) {
  // Two channels in two groups, 1×1 kernel, stride 2 over 1×5: positions
  // 0, 2 and 4 of each channel.
  InputMoments m({1, 1}, {1, 2}, {1, 1}, {0, 0, 0, 0}, 2, 2);
  const std::vector<float> x = {1, 9, 2, 9, 3, /* channel 1 */ -1, 9, -2, 9, 4};
  m.observe(x, std::vector<int64_t>{1, 2, 1, 5});
  ASSERT_EQ(m.groups(), 2);
  ASSERT_EQ(m.features(), 1);
  EXPECT_DOUBLE_EQ(m.moments(0)[0], (1 + 4 + 9) / 3.0);
  EXPECT_DOUBLE_EQ(m.moments(1)[0], (1 + 4 + 16) / 3.0);
  EXPECT_THROW(m.observe(x, std::vector<int64_t>{1, 1, 2, 5}), std::invalid_argument);
}

TEST(AdaptiveRoundingTest, GemmMomentsAlongTheLastAxis) {
  InputMoments m(2);
  const std::vector<float> x = {1, 2, 3, NAN};  // NaN counts as 0
  m.observe(x, std::vector<int64_t>{2, 2});
  const auto h = m.moments(0);
  EXPECT_EQ(h, (std::vector<double>{(1 + 9) / 2.0, 2 / 2.0, 2 / 2.0, 4 / 2.0}));
  EXPECT_TRUE(InputMoments(2).moments(0).empty());  // nothing observed
  EXPECT_FALSE(InputMoments(InputMoments::kMaxFeatures + 1).usable());
  // Moments that saw nothing leave nearest rounding as it was.
  QuantizedWeights q{{0.1}, {3, -3}};
  const std::vector<float> w = {0.26f, -0.34f};
  EXPECT_FALSE(adaptive_round(q, w, InputMoments(2)).has_value());
  EXPECT_EQ(q.values, (std::vector<int8_t>{3, -3}));
}

TEST(AdaptiveRoundingTest, UncorrelatedInputsKeepNearest) {
  // Equal, independent inputs: E[x xᵀ] = I, so each weight alone decides
  // and nearest is the optimum.
  InputMoments m(3);
  const std::vector<float> x = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  m.observe(x, std::vector<int64_t>{3, 3});
  const std::vector<float> w = {0.26f, -0.34f, 0.61f};
  QuantizedWeights q{{0.1}, {3, -3, 6}};
  const RoundingResult r = adaptive_round(q, w, m).value();
  EXPECT_EQ(q.values, (std::vector<int8_t>{3, -3, 6}));
  EXPECT_EQ(r.flipped, 0);
  EXPECT_DOUBLE_EQ(r.adaptive_error, r.nearest_error);
}

TEST(AdaptiveRoundingTest, EqualInputsLetOneRoundingCancelTheOther) {
  // x1 = x2 always: the output sees only w1 + w2 = 1.2 (in codes). Nearest
  // gives 1 + 1 = 2 (error 0.8² = 0.64); rounding one down gives 1 (0.04).
  InputMoments m(2);
  const std::vector<float> x = {1, 1, -2, -2};
  m.observe(x, std::vector<int64_t>{2, 2});
  const std::vector<float> w = {0.6f, 0.6f};
  QuantizedWeights q{{1.0}, {1, 1}};
  const RoundingResult r = adaptive_round(q, w, m).value();
  EXPECT_EQ(q.values, (std::vector<int8_t>{0, 1}));
  EXPECT_EQ(r.flipped, 1);
  const double e2 = (1 + 4) / 2.0;  // E[x1²]
  EXPECT_NEAR(r.nearest_error, 0.8 * 0.8 * e2, 1e-6);
  EXPECT_NEAR(r.adaptive_error, 0.2 * 0.2 * e2, 1e-6);
}

TEST(AdaptiveRoundingTest, ReportedErrorIsTheMeasuredConvOutputError) {
  // A grouped, strided, padded, dilated 2-D conv on smooth random maps:
  // the error adaptive_round reports is Σ_o mean_p (Δw_o · patch_p)²
  // measured by convolving Δw directly, and it is below nearest's.
  const int64_t c = 4, group = 2, o_count = 6, kh = 3, kw = 3, h = 7, w = 9;
  const int64_t stride = 2, dil = 1, pad = 1;
  const int64_t cg = c / group, k = cg * kh * kw;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<size_t>(2 * c * h * w));
  for (size_t i = 0; i < x.size(); ++i) x[i] = normal(rng) + (i > 0 ? 0.8f * x[i - 1] : 0.0f);
  std::vector<float> wf(static_cast<size_t>(o_count * k));
  for (float& v : wf) v = normal(rng);
  QuantizedWeights q;
  for (int64_t o = 0; o < o_count; ++o) {
    float mx = 0;
    for (int64_t i = 0; i < k; ++i) mx = std::max(mx, std::fabs(wf[size_t(o * k + i)]));
    q.scales.push_back(mx / 127.0);
    for (int64_t i = 0; i < k; ++i) {
      q.values.push_back(static_cast<int8_t>(std::nearbyint(wf[size_t(o * k + i)] / q.scales[o])));
    }
  }
  const QuantizedWeights nearest = q;
  InputMoments m({kh, kw}, {stride, stride}, {dil, dil}, {pad, pad, pad, pad}, group, c);
  m.observe(x, std::vector<int64_t>{2, c, h, w});
  const RoundingResult r = adaptive_round(q, wf, m).value();

  const int64_t oh = (h + 2 * pad - kh) / stride + 1, ow = (w + 2 * pad - kw) / stride + 1;
  auto measured = [&](const QuantizedWeights& qw) {
    double total = 0;
    for (int64_t o = 0; o < o_count; ++o) {
      const int64_t g = o / (o_count / group);
      double sum = 0;
      for (int64_t n = 0; n < 2; ++n) {
        for (int64_t y = 0; y < oh; ++y) {
          for (int64_t z = 0; z < ow; ++z) {
            double acc = 0;
            for (int64_t ci = 0; ci < cg; ++ci) {
              for (int64_t a = 0; a < kh; ++a) {
                for (int64_t b = 0; b < kw; ++b) {
                  const int64_t iy = y * stride - pad + a, iz = z * stride - pad + b;
                  if (iy < 0 || iy >= h || iz < 0 || iz >= w) continue;
                  const size_t wi = size_t(o * k + (ci * kh + a) * kw + b);
                  const double dw = qw.values[wi] * qw.scales[size_t(o)] - wf[wi];
                  acc += dw * x[size_t(((n * c + g * cg + ci) * h + iy) * w + iz)];
                }
              }
            }
            sum += acc * acc;
          }
        }
      }
      total += sum / static_cast<double>(2 * oh * ow);
    }
    return total;
  };
  EXPECT_NEAR(r.nearest_error, measured(nearest), 1e-9 * measured(nearest));
  EXPECT_NEAR(r.adaptive_error, measured(q), 1e-9 * measured(nearest));
  EXPECT_LT(r.adaptive_error, 0.9 * r.nearest_error);
  EXPECT_GT(r.flipped, 0);
  for (size_t i = 0; i < q.values.size(); ++i) {
    const double t = wf[i] / q.scales[i / size_t(k)];
    EXPECT_TRUE(q.values[i] == std::floor(t) || q.values[i] == std::floor(t) + 1) << i;
  }
  // The same moments give the same codes.
  QuantizedWeights again = nearest;
  adaptive_round(again, wf, m);
  EXPECT_EQ(again.values, q.values);
}

}  // namespace
}  // namespace eulernpu::int8_quantizer
