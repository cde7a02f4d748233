// cpu_ref's linear Resize (sdk/kit/src/kernels_resize.cpp) on float32: one
// pass per resized axis (shrinking axes first), each output w0 · x[i0] +
// w1 · x[i1] with the weights of ONNX's reference rounded to float32. The
// last axis's pass reads a window of 16 inputs per 16 outputs where the
// taps fit in one (upsampling) and gathers elsewhere; both must give these
// bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eulernpu/kit/op_table.hpp"

namespace eulernpu::kit {
namespace resize_linear_test {
namespace {

double source(const std::string& mode, int64_t x, int64_t in, int64_t out) {
  const double scale = static_cast<double>(out) / static_cast<double>(in);
  const double xd = static_cast<double>(x);
  if (mode == "asymmetric") return xd / scale;
  if (mode == "align_corners") {
    return out == 1 ? 0.0
                    : xd * static_cast<double>(in - 1) / (scale * static_cast<double>(in) - 1);
  }
  return (xd + 0.5) / scale - 0.5;  // half_pixel
}

// One pass along `axis` of a row-major tensor of `shape`.
std::vector<float> pass(const std::vector<float>& x, std::vector<int64_t>& shape, size_t axis,
                        int64_t out_len, const std::string& mode) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t in_len = shape[axis];
  std::vector<float> y(static_cast<size_t>(outer * out_len * inner));
  for (int64_t j = 0; j < out_len; ++j) {
    const double c = source(mode, j, in_len, out_len);
    const auto base = static_cast<int64_t>(std::ceil(c)) - 1;
    const double ratio = c - static_cast<double>(base);
    const auto w0 = static_cast<float>(std::max(0.0, 1 - std::fabs(0 - ratio)));
    const auto w1 = static_cast<float>(std::max(0.0, 1 - std::fabs(1 - ratio)));
    const int64_t i0 = std::clamp<int64_t>(base, 0, in_len - 1);
    const int64_t i1 = std::clamp<int64_t>(base + 1, 0, in_len - 1);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        volatile float a = w0 * x[static_cast<size_t>((o * in_len + i0) * inner + i)];
        volatile float b = w1 * x[static_cast<size_t>((o * in_len + i1) * inner + i)];
        y[static_cast<size_t>((o * out_len + j) * inner + i)] = a + b;
      }
    }
  }
  shape[axis] = out_len;
  return y;
}

TEST(ResizeLinearTest, EveryPassGivesTheDefinitionsBytes) {
  struct Case {
    int64_t h, w, oh, ow;
  };
  // 2x (windows), 1.5x, a shrinking last axis (gathers), a shrinking first
  // axis, a wide factor, rows just at the window's 16.
  const std::vector<Case> cases = {{5, 20, 10, 40}, {6, 24, 9, 36}, {4, 40, 4, 30},
                                   {8, 16, 5, 48},  {3, 17, 3, 50}, {2, 16, 4, 16}};
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (const std::string mode : {"half_pixel", "asymmetric", "align_corners"}) {
    for (const Case& c : cases) {
      const int64_t channels = 3;
      std::vector<float> x(static_cast<size_t>(channels * c.h * c.w));
      for (float& v : x) v = dist(rng);
      // The kernel's order: shrinking axes first, then by index.
      std::vector<int64_t> shape{1, channels, c.h, c.w};
      std::vector<float> want = x;
      std::vector<size_t> order;
      if (c.oh != c.h) order.push_back(2);
      if (c.ow != c.w) order.push_back(3);
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const bool sa = (a == 2 ? c.oh < c.h : c.ow < c.w), sb = (b == 2 ? c.oh < c.h : c.ow < c.w);
        return sa > sb;
      });
      for (size_t a : order) want = pass(want, shape, a, a == 2 ? c.oh : c.ow, mode);
      for (int threads : {1, 2}) {
        std::vector<float> in = x;
        std::vector<float> got(want.size(), -1.0f);
        std::vector<Buffer> ins{Buffer{ENP_DTYPE_FLOAT32, {1, channels, c.h, c.w}, in.data()}};
        std::vector<Buffer> outs{Buffer{ENP_DTYPE_FLOAT32, {1, channels, c.oh, c.ow}, got.data()}};
        const nlohmann::json attrs = {{"mode", "linear"}, {"coordinate_transformation_mode", mode}};
        KernelContext ctx{attrs, ins, outs, 13};
        ctx.threads = threads;
        const OpEntry* op = find_op("", "Resize", 13);
        ASSERT_NE(op, nullptr);
        op->kernel(ctx);
        size_t differ = 0;
        for (size_t i = 0; i < got.size(); ++i) {
          if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) ++differ;
        }
        EXPECT_EQ(differ, 0u) << mode << " " << c.h << "x" << c.w << " -> " << c.oh << "x" << c.ow
                              << ", " << threads << " thread(s)";
      }
    }
  }
}

}  // namespace
}  // namespace resize_linear_test
}  // namespace eulernpu::kit
