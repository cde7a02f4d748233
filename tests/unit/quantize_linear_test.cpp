// cpu_ref's per-tensor QuantizeLinear to int8 and uint8
// (sdk/kit/src/kernels_quant.cpp), whose loop runs as AVX-512, AVX2 or
// baseline code by CPU: every code must be the definition's, x / scale in
// float32, rounded half to even, plus the zero point, saturated, NaN as 0.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "eulernpu/kit/op_table.hpp"

namespace eulernpu::kit {
namespace {

template <typename Code>
int32_t definition(float x, float scale, int32_t zp) {
  const float v = x / scale;
  const double rounded = std::isnan(v) ? 0.0 : std::nearbyint(static_cast<double>(v));
  const double q = rounded + zp;
  const double lo = std::numeric_limits<Code>::min(), hi = std::numeric_limits<Code>::max();
  return static_cast<int32_t>(q < lo ? lo : q > hi ? hi : q);
}

template <typename Code>
void check(int32_t dtype, int32_t zp) {
  // Ties at every half step, values past both ends, NaN, infinities and
  // -0, then random values: 1037 in all, so the vector loops and their
  // tails both run.
  const float scale = 0.5f;
  std::vector<float> x;
  for (int i = -600; i <= 600; i += 3) x.push_back(static_cast<float>(i) * 0.25f);
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {std::nanf(""), inf, -inf, -0.0f, 1e30f, -1e30f}) x.push_back(v);
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 80.0f);
  while (x.size() < 1037) x.push_back(dist(rng));

  std::vector<Code> y(x.size());
  float s = scale;
  Code z = static_cast<Code>(zp);
  const std::vector<int64_t> shape{static_cast<int64_t>(x.size())};
  std::vector<Buffer> ins{Buffer{ENP_DTYPE_FLOAT32, shape, x.data()},
                          Buffer{ENP_DTYPE_FLOAT32, {}, &s}, Buffer{dtype, {}, &z}};
  std::vector<Buffer> outs{Buffer{dtype, shape, y.data()}};
  const nlohmann::json attrs = nlohmann::json::object();
  for (int threads : {1, 2}) {
    KernelContext ctx{attrs, ins, outs, 13};
    ctx.threads = threads;
    const OpEntry* op = find_op("", "QuantizeLinear", 13);
    ASSERT_NE(op, nullptr);
    op->kernel(ctx);
    size_t differ = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (static_cast<int32_t>(y[i]) != definition<Code>(x[i], scale, zp)) ++differ;
    }
    EXPECT_EQ(differ, 0u) << threads << " thread(s), zero point " << zp;
  }
}

TEST(QuantizeLinearTest, PerTensorInt8AndUint8GiveTheDefinitionsCodes) {
  check<int8_t>(ENP_DTYPE_INT8, 0);
  check<int8_t>(ENP_DTYPE_INT8, -7);
  check<uint8_t>(ENP_DTYPE_UINT8, 128);
  check<uint8_t>(ENP_DTYPE_UINT8, 3);
}

}  // namespace
}  // namespace eulernpu::kit
