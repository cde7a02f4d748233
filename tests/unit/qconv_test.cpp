// QConv's direct AVX-512 VNNI kernels (sdk/kernels/src/qconv_vnni.cpp) and
// QGemm's (qgemm_vnni.cpp) give the bytes of the portable paths on random
// problems. For QConv: geometries
// of every kind the kernels take (1-3 spatial dims, groups, depthwise,
// strides, dilations, pads, 1×1), codes from uniform to all-extreme, zero
// points and clamps at both ends, biases up to the accumulator bound,
// multipliers from tiny to saturating.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "eulernpu/kernels/conv.hpp"
#include "eulernpu/kernels/matmul.hpp"

namespace eulernpu::kernels {
namespace {

namespace qmath = sdk::qmath;

struct Problem {
  ConvParams p;
  std::vector<int8_t> x, w;
  std::vector<int32_t> bias;
  std::vector<qmath::FixedMultiplier> m;
  std::string name;
};

Problem random_problem(std::mt19937& rng) {
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Problem pr;
  ConvGeometry& g = pr.p.g;
  const int64_t dims = uniform(0, 9) == 0 ? 1 : uniform(0, 9) == 0 ? 3 : 2;
  const int kind = static_cast<int>(uniform(0, 3));  // 0 dense, 1 grouped, 2 depthwise, 3 1×1
  g.batch = uniform(1, 2);
  g.group = kind == 1 ? uniform(2, 3) : 1;
  const int64_t cg = uniform(1, 20), mg = uniform(1, 20);
  g.in_channels = kind == 2 ? uniform(1, 40) : cg * g.group;
  g.out_channels = kind == 2 ? g.in_channels : mg * g.group;
  if (kind == 2) g.group = g.in_channels;
  for (int64_t d = 3 - dims; d < 3; ++d) {
    g.kernel[d] = kind == 3 ? 1 : uniform(1, 5);
    g.stride[d] = kind == 3 ? 1 : uniform(1, 3);
    g.dilation[d] = kind == 3 ? 1 : uniform(1, 2);
    g.pad[d] = kind == 3 ? 0 : uniform(0, 2);
    const int64_t span = g.dilation[d] * (g.kernel[d] - 1) + 1;
    const int64_t lo = std::max<int64_t>(1, span - 2 * g.pad[d]);
    g.in[d] = uniform(lo, std::max<int64_t>(lo, dims == 3 ? 7 : 25));
    g.out[d] = (g.in[d] + 2 * g.pad[d] - span) / g.stride[d] + 1;
  }
  const int x_mode = static_cast<int>(uniform(0, 2)), w_mode = static_cast<int>(uniform(0, 2));
  auto code = [&](int mode) {
    if (mode == 1) return static_cast<int8_t>(uniform(0, 1) ? -128 : 127);
    if (mode == 2) return static_cast<int8_t>(uniform(-3, 3));
    return static_cast<int8_t>(uniform(-128, 127));
  };
  for (int64_t i = 0; i < g.batch * g.in_channels * g.in_size(); ++i) pr.x.push_back(code(x_mode));
  const int64_t depth = g.in_channels / g.group * g.kernel_size();
  // Weights within [-127, 127], as the quantizer writes them.
  for (int64_t i = 0; i < g.out_channels * depth; ++i) {
    pr.w.push_back(std::max<int8_t>(-127, code(w_mode)));
  }
  const int32_t zero_points[] = {-128, 127, 0, static_cast<int32_t>(uniform(-128, 127))};
  pr.p.x_zero_point = zero_points[uniform(0, 3)];
  pr.p.y_zero_point = zero_points[uniform(0, 3)];
  if (uniform(0, 2) == 0) {
    pr.p.qmin = static_cast<int32_t>(uniform(-128, 127));
    pr.p.qmax = static_cast<int32_t>(uniform(pr.p.qmin, 127));
  }
  for (int64_t o = 0; o < g.out_channels; ++o) {
    int64_t max_w = 0;
    for (int64_t k = 0; k < depth; ++k) {
      max_w = std::max<int64_t>(max_w, std::abs(int{pr.w[static_cast<size_t>(o * depth + k)]}));
    }
    const int64_t room =
        std::min<int64_t>(int64_t{1} << 30, int64_t{INT32_MAX} - depth * 255 * max_w);
    // Mostly a bias and a ratio that spread the outputs over the int8 range
    // (the sums of random codes are about sqrt(depth) · 9000), now and then
    // a bias up to the bound and a ratio from tiny to saturating.
    const double scale = std::sqrt(static_cast<double>(depth)) * 9000.0;
    const auto modest = static_cast<int64_t>(scale);
    pr.bias.push_back(
        static_cast<int32_t>(uniform(0, 4) == 0 ? uniform(-room, room) : uniform(-modest, modest)));
    const double spread = 100.0 / scale;
    const double ratio =
        uniform(0, 4) == 0
            ? std::pow(2.0, std::uniform_real_distribution<double>(-30.0, 4.0)(rng))
            : spread * std::pow(2.0, std::uniform_real_distribution<double>(-3.0, 3.0)(rng));
    pr.m.push_back(qmath::encode_multiplier(ratio));
  }
  pr.name = "kind " + std::to_string(kind) + ", " + std::to_string(dims) + "-D, C " +
            std::to_string(g.in_channels) + " -> " + std::to_string(g.out_channels) + ", group " +
            std::to_string(g.group) + ", out " + std::to_string(g.out[0]) + "x" +
            std::to_string(g.out[1]) + "x" + std::to_string(g.out[2]);
  return pr;
}

std::vector<int8_t> run(const Problem& pr, Int8GemmIsa isa, const QConvPrepared* prepared) {
  ConvParams p = pr.p;
  p.isa = isa;
  std::vector<int8_t> y(static_cast<size_t>(p.g.batch * p.g.out_channels * p.g.out_size()), 99);
  qconv(p, pr.x.data(), pr.w.data(), pr.bias.data(), pr.m.data(), y.data(), kSerial, prepared);
  return y;
}

TEST(QConvTest, DirectVnniKernelsGiveTheIm2colBytes) {
  if (!int8_gemm_isa_supported(Int8GemmIsa::kAvx512Vnni)) {
    GTEST_SKIP() << "this CPU has no AVX-512 VNNI";
  }
  std::mt19937 rng(2026);
  int direct = 0;
  for (int i = 0; i < 600; ++i) {
    const Problem pr = random_problem(rng);
    const std::vector<int8_t> want = run(pr, Int8GemmIsa::kScalar, nullptr);
    EXPECT_EQ(run(pr, Int8GemmIsa::kAvx512Vnni, nullptr), want) << pr.name;
    ConvParams p = pr.p;
    p.isa = Int8GemmIsa::kAvx512Vnni;
    if (const auto prepared = qconv_prepare(p, pr.w.data(), pr.bias.data())) {
      ++direct;
      // Prepared once, run twice: the second run reuses nothing stale.
      EXPECT_EQ(run(pr, Int8GemmIsa::kAvx512Vnni, prepared.get()), want) << pr.name;
      EXPECT_EQ(run(pr, Int8GemmIsa::kAvx512Vnni, prepared.get()), want) << pr.name;
    }
  }
  // The draw reaches the direct dense kernel often (the depthwise one
  // needs no preparation and is counted by the byte checks above).
  EXPECT_GT(direct, 120);
}

// QGemm: batch-1 rows to blocks of 8 and tails, channels around 16, depths
// around multiples of 4; the same value draws as above.
TEST(QGemmTest, VnniKernelGivesThePortableBytes) {
  if (!int8_gemm_isa_supported(Int8GemmIsa::kAvx512Vnni)) {
    GTEST_SKIP() << "this CPU has no AVX-512 VNNI";
  }
  std::mt19937 rng(7);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int i = 0; i < 300; ++i) {
    QGemmParams p;
    const int64_t rows[] = {1, 2, 7, 8, 9, 17, 40};
    p.rows = rows[uniform(0, 6)];
    p.n = uniform(1, 50);
    p.k = uniform(1, 70);
    p.a_zero_point = static_cast<int32_t>(uniform(0, 2) == 0 ? -128 : uniform(-128, 127));
    p.y_zero_point = static_cast<int32_t>(uniform(-128, 127));
    if (uniform(0, 2) == 0) {
      p.qmin = static_cast<int32_t>(uniform(-128, 127));
      p.qmax = static_cast<int32_t>(uniform(p.qmin, 127));
    }
    const bool extremes = uniform(0, 2) == 0;
    auto code = [&](int lo) {
      return static_cast<int8_t>(extremes ? (uniform(0, 1) ? lo : 127) : uniform(lo, 127));
    };
    std::vector<int8_t> a, w;
    for (int64_t j = 0; j < p.rows * p.k; ++j) a.push_back(code(-128));
    for (int64_t j = 0; j < p.n * p.k; ++j) w.push_back(code(-127));
    std::vector<int32_t> bias;
    std::vector<qmath::FixedMultiplier> m;
    const double scale = std::sqrt(static_cast<double>(p.k)) * 9000.0;
    for (int64_t o = 0; o < p.n; ++o) {
      const int64_t room =
          std::min<int64_t>(int64_t{1} << 30, int64_t{INT32_MAX} - p.k * 255 * 128);
      bias.push_back(static_cast<int32_t>(
          uniform(0, 4) == 0 ? uniform(-room, room) : uniform(-int64_t(scale), int64_t(scale))));
      m.push_back(qmath::encode_multiplier(
          uniform(0, 4) == 0
              ? std::pow(2.0, std::uniform_real_distribution<double>(-30.0, 4.0)(rng))
              : 100.0 / scale *
                    std::pow(2.0, std::uniform_real_distribution<double>(-3.0, 3.0)(rng))));
    }
    auto run = [&](Int8GemmIsa isa) {
      QGemmParams q = p;
      q.isa = isa;
      std::vector<int8_t> y(static_cast<size_t>(p.rows * p.n), 99);
      qgemm(q, a.data(), w.data(), bias.data(), m.data(), y.data());
      return y;
    };
    const std::string name = std::to_string(p.rows) + "x" + std::to_string(p.k) + " times " +
                             std::to_string(p.n) + " channels";
    EXPECT_EQ(run(Int8GemmIsa::kAvx512Vnni), run(Int8GemmIsa::kScalar)) << name;
  }
}

}  // namespace
}  // namespace eulernpu::kernels
