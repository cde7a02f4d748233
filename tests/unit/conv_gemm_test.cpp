// cpu_ref's float32 Conv on a CPU with AVX-512 (sdk/kit/src/conv_gemm.hpp):
// W packed once, a 1x1 conv reading X in place, any other reading its
// padded planes in place. Each output must be the bias, then one fused
// multiply-add per (channel, kd, kh, kw) in that order (w · 0 in the
// padding), bit for bit, at every thread count. Where the CPU lacks
// AVX-512, cpu_ref runs OpenBLAS instead and the test says so.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eulernpu/kit/op_table.hpp"

namespace eulernpu::kit {
namespace conv_gemm_test {
namespace {

// A 2-D conv (1-D and 3-D through unit dims: h or d of 1).
struct Case {
  int64_t batch, in_c, out_c, group, d, h, w;
  std::array<int64_t, 3> k, stride, dilation, pad;
  bool bias;
};

std::string describe(const Case& c) {
  auto dims = [](const std::array<int64_t, 3>& v) {
    return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
  };
  return "N" + std::to_string(c.batch) + " C" + std::to_string(c.in_c) + "->" +
         std::to_string(c.out_c) + " g" + std::to_string(c.group) + " " + std::to_string(c.d) +
         "x" + std::to_string(c.h) + "x" + std::to_string(c.w) + " k" + dims(c.k) + " s" +
         dims(c.stride) + " dil" + dims(c.dilation) + " p" + dims(c.pad) + (c.bias ? " bias" : "");
}

std::array<int64_t, 3> out_dims(const Case& c) {
  const std::array<int64_t, 3> in{c.d, c.h, c.w};
  std::array<int64_t, 3> out{};
  for (size_t i = 0; i < 3; ++i) {
    out[i] = (in[i] + 2 * c.pad[i] - c.dilation[i] * (c.k[i] - 1) - 1) / c.stride[i] + 1;
  }
  return out;
}

// The definition, one element at a time, with std::fma's single rounding.
std::vector<float> reference(const Case& c, const std::vector<float>& x,
                             const std::vector<float>& w, const std::vector<float>& b) {
  const auto o = out_dims(c);
  const int64_t cg = c.in_c / c.group, mg = c.out_c / c.group;
  std::vector<float> y(static_cast<size_t>(c.batch * c.out_c * o[0] * o[1] * o[2]));
  size_t at = 0;
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t m = 0; m < c.out_c; ++m) {
      for (int64_t i0 = 0; i0 < o[0]; ++i0) {
        for (int64_t i1 = 0; i1 < o[1]; ++i1) {
          for (int64_t i2 = 0; i2 < o[2]; ++i2) {
            float acc = c.bias ? b[static_cast<size_t>(m)] : 0.0f;
            for (int64_t ci = 0; ci < cg; ++ci) {
              const int64_t ch = m / mg * cg + ci;
              for (int64_t a = 0; a < c.k[0]; ++a) {
                for (int64_t p = 0; p < c.k[1]; ++p) {
                  for (int64_t q = 0; q < c.k[2]; ++q) {
                    const int64_t id = i0 * c.stride[0] - c.pad[0] + a * c.dilation[0];
                    const int64_t ih = i1 * c.stride[1] - c.pad[1] + p * c.dilation[1];
                    const int64_t iw = i2 * c.stride[2] - c.pad[2] + q * c.dilation[2];
                    const bool inside =
                        id >= 0 && id < c.d && ih >= 0 && ih < c.h && iw >= 0 && iw < c.w;
                    const float xv =
                        inside ? x[static_cast<size_t>(
                                     (((n * c.in_c + ch) * c.d + id) * c.h + ih) * c.w + iw)]
                               : 0.0f;
                    const float wv = w[static_cast<size_t>(
                        (((m * cg + ci) * c.k[0] + a) * c.k[1] + p) * c.k[2] + q)];
                    acc = std::fma(wv, xv, acc);
                  }
                }
              }
            }
            y[at++] = acc;
          }
        }
      }
    }
  }
  return y;
}

std::vector<float> run_kernel(const Case& c, std::vector<float>& x, std::vector<float>& w,
                              std::vector<float>& b, int threads,
                              const KernelContext::StoreClamp* clamp = nullptr) {
  const auto o = out_dims(c);
  std::vector<float> y(static_cast<size_t>(c.batch * c.out_c * o[0] * o[1] * o[2]), -1.0f);
  const nlohmann::json attrs = {
      {"group", c.group},
      {"kernel_shape", {c.k[0], c.k[1], c.k[2]}},
      {"strides", {c.stride[0], c.stride[1], c.stride[2]}},
      {"dilations", {c.dilation[0], c.dilation[1], c.dilation[2]}},
      {"pads", {c.pad[0], c.pad[1], c.pad[2], c.pad[0], c.pad[1], c.pad[2]}}};
  std::vector<Buffer> ins{
      Buffer{ENP_DTYPE_FLOAT32, {c.batch, c.in_c, c.d, c.h, c.w}, x.data()},
      Buffer{ENP_DTYPE_FLOAT32, {c.out_c, c.in_c / c.group, c.k[0], c.k[1], c.k[2]}, w.data()}};
  if (c.bias) ins.push_back(Buffer{ENP_DTYPE_FLOAT32, {c.out_c}, b.data()});
  std::vector<Buffer> outs{
      Buffer{ENP_DTYPE_FLOAT32, {c.batch, c.out_c, o[0], o[1], o[2]}, y.data()}};
  KernelContext ctx{attrs, ins, outs, 13};
  ctx.threads = threads;
  // With a clamp: the fused epilogue's store path, into a buffer of its
  // own (KernelContext::Epilogue::clamped); y is then left unwritten.
  std::vector<float> clamped(y.size(), -2.0f);
  KernelContext::Epilogue epilogue;
  if (clamp) {
    epilogue.clamped = clamped.data();
    epilogue.clamp = *clamp;
    ctx.epilogue = &epilogue;
  }
  const OpEntry* conv = find_op("", "Conv", 13);
  EXPECT_NE(conv, nullptr);
  if (conv) conv->kernel(ctx);
  return clamp ? clamped : y;
}

// The elementwise chain's Relu and Clip (KernelContext::StoreClamp).
float clamp_of(float v, const KernelContext::StoreClamp& c) {
  if (c.relu) return std::isnan(v) || v > 0 ? v : 0.0f;
  if (std::isnan(v)) return v;
  const float r = v < c.lo ? c.lo : v;
  return c.hi < r ? c.hi : r;
}

size_t differing(const std::vector<float>& got, const std::vector<float>& want) {
  size_t n = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) ++n;
  }
  return n;
}

TEST(ConvGemmTest, EveryOutputIsTheBiasThenFusedStepsInOrder) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512F: cpu_ref runs OpenBLAS";
#else
  GTEST_SKIP() << "not x86-64: cpu_ref runs OpenBLAS";
#endif
  using D = std::array<int64_t, 3>;
  const D one{1, 1, 1}, none{0, 0, 0};
  // Row counts around the 14-row tile, widths around the 32-column one,
  // depths past the 256-step block, 1x1 (in place, with and without the
  // 32-column panels), strided, dilated, padded, grouped, batched, 1-D
  // and 3-D, and maps small enough that the rows split between threads.
  const std::vector<Case> cases = {
      {1, 3, 16, 1, 1, 24, 33, {1, 3, 3}, {1, 2, 2}, one, {0, 1, 1}, true},
      {1, 16, 13, 1, 1, 9, 31, {1, 1, 1}, one, one, none, true},
      {2, 64, 29, 1, 1, 5, 7, {1, 1, 1}, one, one, none, false},
      {1, 40, 30, 1, 1, 12, 17, {1, 3, 3}, one, one, {0, 1, 1}, true},
      {1, 33, 15, 1, 1, 7, 40, {1, 3, 3}, one, {1, 2, 2}, {0, 2, 2}, true},
      {1, 12, 27, 3, 1, 11, 9, {1, 3, 3}, {1, 2, 1}, one, {0, 1, 0}, true},
      {1, 256, 12, 1, 1, 4, 5, {1, 3, 3}, one, one, {0, 1, 1}, true},
      {1, 8, 20, 1, 1, 1, 50, {1, 1, 5}, {1, 1, 3}, one, {0, 0, 2}, false},
      {1, 4, 14, 1, 5, 6, 7, {3, 3, 3}, {2, 1, 1}, one, {1, 1, 1}, true},
      {2, 20, 42, 2, 1, 16, 16, {1, 3, 3}, {1, 3, 3}, one, none, true},
      // More than two row tiles over a B that stays in L2: a tile of rows
      // at a time across the columns.
      {1, 32, 64, 1, 1, 20, 20, {1, 1, 1}, one, one, none, true},
      {1, 8, 40, 1, 1, 12, 12, {1, 3, 3}, one, one, {0, 1, 1}, true},
  };
  const std::vector<KernelContext::StoreClamp> clamps = {{true, 0.0f, 0.0f}, {false, -0.5f, 0.75f}};
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (const Case& c : cases) {
    std::vector<float> x(static_cast<size_t>(c.batch * c.in_c * c.d * c.h * c.w));
    std::vector<float> w(
        static_cast<size_t>(c.out_c * c.in_c / c.group * c.k[0] * c.k[1] * c.k[2]));
    std::vector<float> b(static_cast<size_t>(c.out_c));
    for (float& v : x) v = dist(rng);
    for (float& v : w) v = dist(rng);
    for (float& v : b) v = dist(rng);
    const std::vector<float> want = reference(c, x, w, b);
    for (int threads : {1, 2, 3}) {
      const std::vector<float> got = run_kernel(c, x, w, b, threads);
      ASSERT_EQ(got.size(), want.size()) << describe(c);
      const size_t differ = differing(got, want);
      EXPECT_EQ(differ, 0u) << describe(c) << ", " << threads << " thread(s): " << differ << " of "
                            << got.size() << " outputs differ";
    }
    // Each value stored through a Relu or a Clip, on every path (the last
    // of several passes over a deep W, several row tiles, the row-tile
    // order): the clamp of the definition's value.
    for (const KernelContext::StoreClamp& cl : clamps) {
      std::vector<float> want_clamped = want;
      for (float& v : want_clamped) v = clamp_of(v, cl);
      const std::vector<float> got = run_kernel(c, x, w, b, 2, &cl);
      const size_t differ = differing(got, want_clamped);
      EXPECT_EQ(differ, 0u) << describe(c) << (cl.relu ? ", Relu: " : ", Clip: ") << differ
                            << " of " << got.size() << " outputs differ";
    }
  }
}

TEST(ConvGemmTest, NegativeBeginPadsCropTheInput) {
  // A begin pad of -1 drops the input's first row and column (the im2col
  // path clips it; the padded planes cannot hold it): a plain and a
  // depthwise conv against the definition, to float32 rounding.
  for (const int64_t group : {int64_t{1}, int64_t{6}}) {
    const Case c{1, 6, 6, group, 1, 9, 11, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, -1, -1}, true};
    std::mt19937 rng(13);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(c.in_c * c.h * c.w)), b(6);
    std::vector<float> w(static_cast<size_t>(6 * 6 / group * 9));
    for (float& v : x) v = dist(rng);
    for (float& v : w) v = dist(rng);
    for (float& v : b) v = dist(rng);
    const std::vector<float> want = reference(c, x, w, b);
    const std::vector<float> got = run_kernel(c, x, w, b, 1);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::fabs(want[i])))
          << "group " << group << " at " << i;
    }
  }
}

}  // namespace
}  // namespace conv_gemm_test
}  // namespace eulernpu::kit
