// cpu_ref's Softmax and LogSoftmax on float32 lines (sdk/kit/src/
// kernels_softmax.cpp, the exponentials of exp_vectors.hpp): every output
// within one float32 ulp of the float64 definition (glibc's exp, summed in
// order), elements far below the maximum and -inf giving 0, a NaN spreading
// to its line, and the same bytes at 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eulernpu/kit/op_table.hpp"

namespace eulernpu::kit {
namespace softmax_test {
namespace {

std::vector<float> run(const char* op, std::vector<float> x, int64_t rows, int64_t len,
                       int threads) {
  std::vector<float> y(x.size(), -1.0f);
  std::vector<Buffer> ins{Buffer{ENP_DTYPE_FLOAT32, {rows, len}, x.data()}};
  std::vector<Buffer> outs{Buffer{ENP_DTYPE_FLOAT32, {rows, len}, y.data()}};
  KernelContext ctx{nlohmann::json::object(), ins, outs, 13};
  ctx.threads = threads;
  const OpEntry* entry = find_op("", op, 13);
  EXPECT_NE(entry, nullptr);
  if (entry) entry->kernel(ctx);
  return y;
}

// The definition in float64 with glibc's exp.
std::vector<float> reference(bool log, const std::vector<float>& x, int64_t rows, int64_t len) {
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* line = x.data() + r * len;
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < len; ++j) mx = std::max(mx, static_cast<double>(line[j]));
    double sum = 0;
    for (int64_t j = 0; j < len; ++j) sum += std::exp(static_cast<double>(line[j]) - mx);
    for (int64_t j = 0; j < len; ++j) {
      const double s = static_cast<double>(line[j]) - mx;
      y[static_cast<size_t>(r * len + j)] =
          static_cast<float>(log ? s - std::log(sum) : std::exp(s) / sum);
    }
  }
  return y;
}

// |a - b| in float32 ulps (both finite).
double ulps(float a, float b) {
  const double step =
      std::nextafter(std::fabs(b), std::numeric_limits<float>::infinity()) - std::fabs(b);
  return std::fabs(static_cast<double>(a) - static_cast<double>(b)) / std::max(step, 1e-45);
}

TEST(SoftmaxTest, LinesAreWithinAnUlpOfTheFloat64Definition) {
  std::mt19937 rng(9);
  std::normal_distribution<float> dist(0.0f, 6.0f);
  // Lengths around the 8 and 32 the exponentials take at a time, and a
  // character-score line.
  for (int64_t len : {1, 7, 8, 9, 31, 33, 100, 6625}) {
    const int64_t rows = 3;
    std::vector<float> x(static_cast<size_t>(rows * len));
    for (float& v : x) v = dist(rng);
    // Elements far below the maximum (exp underflows past -708) and -inf.
    if (len > 8) {
      x[3] = -800.0f;
      x[static_cast<size_t>(len + 5)] = -std::numeric_limits<float>::infinity();
    }
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      const bool log = std::string(op) == "LogSoftmax";
      const std::vector<float> want = reference(log, x, rows, len);
      const std::vector<float> got = run(op, x, rows, len, 1);
      double worst = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        if (std::isinf(want[i])) {
          EXPECT_EQ(got[i], want[i]) << op << " len " << len << " at " << i;
          continue;
        }
        worst = std::max(worst, ulps(got[i], want[i]));
      }
      EXPECT_LE(worst, 1.0) << op << " len " << len;
      const std::vector<float> two = run(op, x, rows, len, 2);
      EXPECT_EQ(std::memcmp(got.data(), two.data(), got.size() * sizeof(float)), 0)
          << op << " len " << len << ": 1 and 2 threads differ";
    }
  }
}

TEST(SoftmaxTest, ANanOrInfinityKeepsTheDefinitionsResults) {
  const int64_t len = 40;
  std::vector<float> x(static_cast<size_t>(2 * len), 0.5f);
  x[7] = std::numeric_limits<float>::quiet_NaN();
  x[static_cast<size_t>(len + 3)] = std::numeric_limits<float>::infinity();
  const std::vector<float> got = run("Softmax", x, 2, len, 1);
  for (int64_t j = 0; j < len; ++j) EXPECT_TRUE(std::isnan(got[static_cast<size_t>(j)])) << j;
  // An infinite maximum: inf - inf is NaN in the definition, its line NaN
  // there and 0 elsewhere (exp(-inf) / NaN is NaN too).
  const std::vector<float> want = reference(false, x, 2, len);
  for (int64_t j = len; j < 2 * len; ++j) {
    const auto i = static_cast<size_t>(j);
    EXPECT_EQ(std::isnan(got[i]), std::isnan(want[i])) << j;
    if (!std::isnan(want[i])) {
      EXPECT_EQ(got[i], want[i]) << j;
    }
  }
}

}  // namespace
}  // namespace softmax_test
}  // namespace eulernpu::kit
