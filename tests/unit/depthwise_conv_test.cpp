// cpu_ref's depthwise Conv (sdk/kit/src/kernels_conv.cpp): a zero-padded
// copy of each plane, its rows stored by stride phase, every output row of
// a plane summed as one run of vectors. Each output must be the bias plus
// every tap's product (w · 0 in the padding) added in (kd, kh, kw) order,
// bit for bit, whichever clone the CPU ran.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eulernpu/kit/op_table.hpp"

namespace eulernpu::kit {
namespace depthwise_conv_test {
namespace {

struct Case {
  int64_t channels, h, w, k, stride, dilation, pad;
};

std::string describe(const Case& c) {
  return "C" + std::to_string(c.channels) + " " + std::to_string(c.h) + "x" + std::to_string(c.w) +
         " k" + std::to_string(c.k) + " s" + std::to_string(c.stride) + " d" +
         std::to_string(c.dilation) + " p" + std::to_string(c.pad);
}

int64_t out_dim(int64_t in, const Case& c) {
  return (in + 2 * c.pad - c.dilation * (c.k - 1) - 1) / c.stride + 1;
}

// The definition, one element at a time.
std::vector<float> reference(const Case& c, const std::vector<float>& x,
                             const std::vector<float>& w, const std::vector<float>& b) {
  const int64_t oh = out_dim(c.h, c), ow = out_dim(c.w, c);
  std::vector<float> y(static_cast<size_t>(c.channels * oh * ow));
  for (int64_t m = 0; m < c.channels; ++m) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        float acc = b[static_cast<size_t>(m)];
        for (int64_t kh = 0; kh < c.k; ++kh) {
          for (int64_t kw = 0; kw < c.k; ++kw) {
            const int64_t ih = i * c.stride - c.pad + kh * c.dilation;
            const int64_t iw = j * c.stride - c.pad + kw * c.dilation;
            // Zero padding: a tap outside X adds w · 0, as ONNX defines it
            // and the im2col path computes it.
            const bool inside = ih >= 0 && ih < c.h && iw >= 0 && iw < c.w;
            const float xv = inside ? x[static_cast<size_t>((m * c.h + ih) * c.w + iw)] : 0.0f;
            // Two roundings, as the kernel's build has them.
            volatile float product = w[static_cast<size_t>((m * c.k + kh) * c.k + kw)] * xv;
            acc += product;
          }
        }
        y[static_cast<size_t>((m * oh + i) * ow + j)] = acc;
      }
    }
  }
  return y;
}

std::vector<float> run_kernel(const Case& c, std::vector<float>& x, std::vector<float>& w,
                              std::vector<float>& b, int threads) {
  const int64_t oh = out_dim(c.h, c), ow = out_dim(c.w, c);
  std::vector<float> y(static_cast<size_t>(c.channels * oh * ow), -1.0f);
  const nlohmann::json attrs = {{"group", c.channels},
                                {"kernel_shape", {c.k, c.k}},
                                {"strides", {c.stride, c.stride}},
                                {"dilations", {c.dilation, c.dilation}},
                                {"pads", {c.pad, c.pad, c.pad, c.pad}}};
  std::vector<Buffer> ins{Buffer{ENP_DTYPE_FLOAT32, {1, c.channels, c.h, c.w}, x.data()},
                          Buffer{ENP_DTYPE_FLOAT32, {c.channels, 1, c.k, c.k}, w.data()},
                          Buffer{ENP_DTYPE_FLOAT32, {c.channels}, b.data()}};
  std::vector<Buffer> outs{Buffer{ENP_DTYPE_FLOAT32, {1, c.channels, oh, ow}, y.data()}};
  KernelContext ctx{attrs, ins, outs, 13};
  ctx.threads = threads;
  const OpEntry* conv = find_op("", "Conv", 13);
  EXPECT_NE(conv, nullptr);
  if (conv) conv->kernel(ctx);
  return y;
}

TEST(DepthwiseConvTest, EveryPathGivesTheDefinitionsBits) {
  // Widths around the vector length (16) and its multiples, strides 1 to 3,
  // dilations, kernels 1 to 5, pads from none to more than the kernel.
  const std::vector<Case> cases = {
      {3, 5, 1, 3, 1, 1, 1},    {2, 7, 15, 3, 1, 1, 1},  {2, 7, 16, 3, 1, 1, 0},
      {2, 7, 17, 3, 1, 1, 1},   {3, 9, 18, 3, 1, 1, 1},  {2, 6, 33, 3, 1, 1, 1},
      {4, 12, 160, 3, 1, 1, 1}, {2, 8, 31, 3, 2, 1, 1},  {2, 8, 34, 3, 2, 1, 1},
      {3, 9, 66, 3, 2, 1, 1},   {2, 11, 80, 3, 2, 1, 0}, {2, 6, 47, 5, 1, 1, 2},
      {2, 6, 53, 5, 2, 1, 2},   {2, 9, 40, 3, 1, 2, 2},  {2, 9, 70, 3, 2, 3, 3},
      {2, 5, 50, 3, 3, 1, 1},   {2, 5, 40, 1, 1, 1, 0},  {2, 5, 40, 1, 2, 1, 0},
      {2, 5, 24, 3, 1, 1, 4},   {2, 6, 20, 5, 1, 1, 0},
  };
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (const Case& c : cases) {
    std::vector<float> x(static_cast<size_t>(c.channels * c.h * c.w));
    std::vector<float> w(static_cast<size_t>(c.channels * c.k * c.k));
    std::vector<float> b(static_cast<size_t>(c.channels));
    for (float& v : x) v = dist(rng);
    for (float& v : w) v = dist(rng);
    for (float& v : b) v = dist(rng);
    const std::vector<float> want = reference(c, x, w, b);
    for (int threads : {1, 2}) {
      const std::vector<float> got = run_kernel(c, x, w, b, threads);
      ASSERT_EQ(got.size(), want.size()) << describe(c);
      size_t differ = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) ++differ;
      }
      EXPECT_EQ(differ, 0u) << describe(c) << ", " << threads << " thread(s): " << differ << " of "
                            << got.size() << " outputs differ";
    }
  }
}

}  // namespace
}  // namespace depthwise_conv_test
}  // namespace eulernpu::kit
