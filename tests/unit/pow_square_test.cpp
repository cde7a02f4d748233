// cpu_ref's Pow with a float32 exponent of 2 multiplies x by itself: the
// bytes must be those of the general path (float64 pow, then rounded), on
// ordinary values, squares past float32's range, subnormals, -0, the
// infinities and NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "eulernpu/kit/op_table.hpp"

namespace eulernpu::kit {
namespace pow_square_test {
namespace {

TEST(PowSquareTest, SquareGivesFloat64PowsBytes) {
  std::mt19937 rng(4);
  std::normal_distribution<float> dist(0.0f, 100.0f);
  std::vector<float> x(300);
  for (float& v : x) v = dist(rng);
  const float specials[] = {0.0f,
                            -0.0f,
                            1e20f,
                            -3e19f,
                            1e-30f,
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  for (size_t i = 0; i < std::size(specials); ++i) x[i] = specials[i];
  float two = 2.0f;
  std::vector<float> y(x.size(), -1.0f);
  std::vector<Buffer> ins{Buffer{ENP_DTYPE_FLOAT32, {static_cast<int64_t>(x.size())}, x.data()},
                          Buffer{ENP_DTYPE_FLOAT32, {}, &two}};
  std::vector<Buffer> outs{Buffer{ENP_DTYPE_FLOAT32, {static_cast<int64_t>(y.size())}, y.data()}};
  KernelContext ctx{nlohmann::json::object(), ins, outs, 15};
  const OpEntry* pow = find_op("", "Pow", 15);
  ASSERT_NE(pow, nullptr);
  pow->kernel(ctx);
  for (size_t i = 0; i < x.size(); ++i) {
    const auto want = static_cast<float>(std::pow(static_cast<double>(x[i]), 2.0));
    EXPECT_EQ(std::memcmp(&y[i], &want, sizeof want), 0)
        << "x = " << x[i] << ": " << y[i] << " against " << want;
  }
}

}  // namespace
}  // namespace pow_square_test
}  // namespace eulernpu::kit
