// cpu_ref's float32 HardSigmoid (the elementwise chains' vector loop): the
// bytes of max(0, min(1, alpha x + beta)), NaN propagating.
// cpu_ref's float32 Sigmoid (exp_vectors.hpp): every output within one
// float32 ulp of the float64 definition 1 / (1 + exp(-x)) with glibc's
// exp, the extremes (past ±708, the infinities) and NaN giving its
// results exactly, lengths around the 8 and 32 elements it takes at a
// time, and the same bytes at 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "eulernpu/kit/op_table.hpp"

namespace eulernpu::kit {
namespace sigmoid_test {
namespace {

std::vector<float> run(std::vector<float> x, int threads) {
  std::vector<float> y(x.size(), -1.0f);
  const auto n = static_cast<int64_t>(x.size());
  std::vector<Buffer> ins{Buffer{ENP_DTYPE_FLOAT32, {n}, x.data()}};
  std::vector<Buffer> outs{Buffer{ENP_DTYPE_FLOAT32, {n}, y.data()}};
  KernelContext ctx{nlohmann::json::object(), ins, outs, 13};
  ctx.threads = threads;
  const OpEntry* op = find_op("", "Sigmoid", 13);
  EXPECT_NE(op, nullptr);
  if (op) op->kernel(ctx);
  return y;
}

TEST(SigmoidTest, WithinAnUlpOfTheFloat64Definition) {
  std::mt19937 rng(8);
  std::normal_distribution<float> dist(0.0f, 8.0f);
  for (size_t len : {1u, 7u, 8u, 9u, 33u, 70000u}) {
    std::vector<float> x(len);
    for (float& v : x) v = dist(rng);
    const float extremes[] = {-800.0f,
                              800.0f,
                              -708.5f,
                              708.5f,
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(),
                              std::numeric_limits<float>::quiet_NaN(),
                              -0.0f};
    for (size_t i = 0; i < std::size(extremes) && i < len; ++i) x[i * 3 % len] = extremes[i];
    const std::vector<float> got = run(x, 1);
    double worst = 0;
    for (size_t i = 0; i < len; ++i) {
      const auto want = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x[i]))));
      if (std::isnan(want) || std::isinf(x[i]) || std::fabs(x[i]) > 708.0f) {
        // glibc's exp in both: the same bytes.
        EXPECT_EQ(std::isnan(got[i]), std::isnan(want)) << x[i];
        if (!std::isnan(want)) {
          EXPECT_EQ(got[i], want) << x[i];
        }
        continue;
      }
      const double step =
          std::nextafter(std::fabs(want), std::numeric_limits<float>::infinity()) - std::fabs(want);
      worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want) / step);
    }
    EXPECT_LE(worst, 1.0) << "length " << len;
    const std::vector<float> two = run(x, 2);
    EXPECT_EQ(std::memcmp(got.data(), two.data(), len * sizeof(float)), 0) << "length " << len;
  }
}

TEST(SigmoidTest, HardSigmoidGivesTheDefinitionsBytes) {
  std::mt19937 rng(2);
  std::normal_distribution<float> dist(0.0f, 4.0f);
  std::vector<float> x(1000);
  for (float& v : x) v = dist(rng);
  x[0] = std::numeric_limits<float>::quiet_NaN();
  x[1] = std::numeric_limits<float>::infinity();
  x[2] = -std::numeric_limits<float>::infinity();
  x[3] = -0.0f;
  const float alpha = 1.0f / 6.0f, beta = 0.5f;
  for (int threads : {1, 2}) {
    std::vector<float> in = x, y(x.size(), -1.0f);
    const auto n = static_cast<int64_t>(x.size());
    std::vector<Buffer> ins{Buffer{ENP_DTYPE_FLOAT32, {n}, in.data()}};
    std::vector<Buffer> outs{Buffer{ENP_DTYPE_FLOAT32, {n}, y.data()}};
    KernelContext ctx{nlohmann::json{{"alpha", alpha}, {"beta", beta}}, ins, outs, 13};
    ctx.threads = threads;
    const OpEntry* op = find_op("", "HardSigmoid", 13);
    ASSERT_NE(op, nullptr);
    op->kernel(ctx);
    for (size_t i = 0; i < x.size(); ++i) {
      volatile float affine = alpha * x[i];
      const float v = affine + beta;
      // min(1, v) then max(0, .), a NaN passing through both.
      const float lo = std::isnan(v) ? v : (v < 1.0f ? v : 1.0f);
      const float want = std::isnan(lo) ? lo : (lo > 0.0f ? lo : 0.0f);
      EXPECT_EQ(std::isnan(y[i]), std::isnan(want)) << x[i];
      if (!std::isnan(want)) {
        EXPECT_EQ(std::memcmp(&y[i], &want, sizeof want), 0) << x[i] << ": " << y[i];
      }
    }
  }
}

}  // namespace
}  // namespace sigmoid_test
}  // namespace eulernpu::kit
