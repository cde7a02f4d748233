// The reference kernels' int8 GEMM against the definition computed term by
// term in int64, and against the float computation it approximates; each
// implementation of int8_gemm_variants() on its own, then every other one
// against the scalar one byte for byte, directly and through cpu_ref's
// QConv/QGemm kernels.
#include "eulernpu/kernels/int8_gemm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "eulernpu/kit/op_table.hpp"

namespace eulernpu::kit {
namespace {

namespace qmath = sdk::qmath;
using kernels::int8_gemm_isa_name;
using kernels::int8_gemm_isa_supported;
using kernels::int8_gemm_resolve;
using kernels::qgemm_int8;
using kernels::QGemmOutput;
using kernels::QGemmShape;

// Every ISA the library lists, and those of them other than the scalar one
// that this CPU runs.
std::vector<Int8GemmIsa> listed_isas() {
  std::vector<Int8GemmIsa> out;
  for (const auto& v : kernels::int8_gemm_variants()) out.push_back(v.isa);
  return out;
}
std::vector<Int8GemmIsa> fast_isas() {
  std::vector<Int8GemmIsa> out;
  for (Int8GemmIsa isa : listed_isas()) {
    if (isa != Int8GemmIsa::kScalar && int8_gemm_isa_supported(isa)) out.push_back(isa);
  }
  return out;
}

// The definition: int64 sums, then qmath::requantize.
std::vector<int8_t> reference(const QGemmShape& s, const std::vector<int8_t>& w,
                              const std::vector<int8_t>& x, const std::vector<int32_t>& bias,
                              const std::vector<qmath::FixedMultiplier>& m,
                              const QGemmOutput& out) {
  std::vector<int8_t> y(static_cast<size_t>(s.rows * s.columns));
  for (int64_t o = 0; o < s.rows; ++o) {
    for (int64_t p = 0; p < s.columns; ++p) {
      int64_t acc = bias.empty() ? 0 : bias[static_cast<size_t>(o)];
      for (int64_t k = 0; k < s.depth; ++k) {
        acc += int64_t{w[static_cast<size_t>(o * s.depth + k)]} *
               (x[static_cast<size_t>(k * s.columns + p)] - out.x_zero_point);
      }
      y[static_cast<size_t>(o * s.columns + p)] = static_cast<int8_t>(
          qmath::requantize(static_cast<int32_t>(acc), m[static_cast<size_t>(o)], out.y_zero_point,
                            out.qmin, out.qmax));
    }
  }
  return y;
}

class Int8GemmIsaTest : public ::testing::TestWithParam<Int8GemmIsa> {
 protected:
  void SetUp() override {
    if (!int8_gemm_isa_supported(GetParam())) {
      GTEST_SKIP() << "this CPU cannot run " << int8_gemm_isa_name(GetParam());
    }
  }
};

TEST_P(Int8GemmIsaTest, HandComputedCase) {
  // One output channel, two terms: w = [2, -3], x = [[5], [-4]], x_zp = 1:
  // 2·(5−1) + (−3)·(−4−1) = 8 + 15 = 23; + bias 4 = 27; · 0.5 = 13.5 -> 14;
  // + y_zp −3 = 11.
  const int8_t w[] = {2, -3};
  const int8_t x[] = {5, -4};
  const int32_t bias[] = {4};
  const qmath::FixedMultiplier m[] = {qmath::encode_multiplier(0.5)};
  int8_t y[1] = {0};
  qgemm_int8({1, 2, 1}, w, x, bias, m, {1, -3, -128, 127}, y, GetParam());
  EXPECT_EQ(y[0], 11);
  // A fused Relu (qmin = y_zp) clamps a negative result to the zero point.
  const int8_t neg[] = {-2, 3};
  qgemm_int8({1, 2, 1}, neg, x, nullptr, m, {1, -3, -3, 127}, y, GetParam());
  EXPECT_EQ(y[0], -3);  // −23 · 0.5 = −11.5 -> −11, −14 clamps to −3
}

TEST_P(Int8GemmIsaTest, MatchesTheDefinitionOnRandomData) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> code(-128, 127), wcode(-127, 127);
  const QGemmShape s{5, 37, 23};
  std::vector<int8_t> w(static_cast<size_t>(s.rows * s.depth)),
      x(static_cast<size_t>(s.depth * s.columns));
  for (auto& v : w) v = static_cast<int8_t>(wcode(rng));
  for (auto& v : x) v = static_cast<int8_t>(code(rng));
  std::vector<int32_t> bias;
  std::vector<qmath::FixedMultiplier> m;
  for (int64_t o = 0; o < s.rows; ++o) {
    bias.push_back(static_cast<int32_t>(o * 1000 - 2000));
    m.push_back(qmath::encode_multiplier(0.0007 * static_cast<double>(o + 1)));
  }
  const QGemmOutput out{-17, 9, -128, 127};
  std::vector<int8_t> y(static_cast<size_t>(s.rows * s.columns));
  qgemm_int8(s, w.data(), x.data(), bias.data(), m.data(), out, y.data(), GetParam());
  ASSERT_EQ(y, reference(s, w, x, bias, m, out));
  for (int64_t o = 0; o < s.rows; ++o) {
    for (int64_t p = 0; p < s.columns; ++p) {
      int64_t acc = bias[static_cast<size_t>(o)];
      for (int64_t k = 0; k < s.depth; ++k) {
        acc += int64_t{w[static_cast<size_t>(o * s.depth + k)]} *
               (x[static_cast<size_t>(k * s.columns + p)] - out.x_zero_point);
      }
      // Within one code of the real-valued result (before saturation).
      const double real =
          static_cast<double>(acc) * 0.0007 * static_cast<double>(o + 1) + out.y_zero_point;
      if (real > -128 && real < 127) {
        const int got = y[static_cast<size_t>(o * s.columns + p)];
        EXPECT_LE(std::fabs(got - real), 0.5 + 1e-4);  // + the Q31 encoding error
      }
    }
  }
}

// The largest sums the accumulator bound admits, with x − zp = ±255 and
// |w| at its maximum: Σ w·(x + 128) inside vpdpbusd is as large as the
// proven bound allows, and the zero-point correction exceeds int32.
TEST_P(Int8GemmIsaTest, ExactAtTheAccumulatorBound) {
  struct Extreme {
    int8_t w, x;
    int32_t x_zero_point;
  };
  for (const Extreme e :
       {Extreme{127, 127, -128}, Extreme{-127, 127, -128}, Extreme{127, -128, 127},
        Extreme{-128, -128, 127}, Extreme{-128, 127, -128}}) {
    const int64_t max_w = std::abs(int{e.w});
    // depth · 255 · max|w| + |bias| < 2^31, as the quantizer checks it.
    const int64_t depth = (int64_t{INT32_MAX} - 1000) / (255 * max_w);
    ASSERT_TRUE(qmath::accumulator_fits_int32(depth, 255, max_w, 1000));
    const QGemmShape s{2, depth, 17};
    std::vector<int8_t> w(static_cast<size_t>(s.rows * depth), e.w);
    std::vector<int8_t> x(static_cast<size_t>(depth * s.columns), e.x);
    const std::vector<int32_t> bias{1000, -1000};
    // 2^-24 brings ±2^31 to ±128: the outputs span the int8 range.
    const std::vector<qmath::FixedMultiplier> m(2, qmath::encode_multiplier(0x1p-24));
    const QGemmOutput out{e.x_zero_point, 0, -128, 127};
    std::vector<int8_t> y(static_cast<size_t>(s.rows * s.columns));
    qgemm_int8(s, w.data(), x.data(), bias.data(), m.data(), out, y.data(), GetParam());
    EXPECT_EQ(y, reference(s, w, x, bias, m, out)) << int{e.w} << " " << int{e.x};
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, Int8GemmIsaTest, ::testing::ValuesIn(listed_isas()),
                         [](const auto& param_info) {
                           return std::string(int8_gemm_isa_name(param_info.param));
                         });

TEST(Int8GemmTest, ResolvesToARunnableImplementation) {
  EXPECT_EQ(int8_gemm_resolve(Int8GemmIsa::kScalar), Int8GemmIsa::kScalar);
  EXPECT_NE(int8_gemm_resolve(Int8GemmIsa::kAuto), Int8GemmIsa::kAuto);
  EXPECT_EQ(int8_gemm_resolve(Int8GemmIsa::kAvx512Vnni),
            int8_gemm_isa_supported(Int8GemmIsa::kAvx512Vnni) ? Int8GemmIsa::kAvx512Vnni
                                                              : Int8GemmIsa::kScalar);
}

// EULERNPU_CPU_REF_ISA's choice: a supported variant by name, else the
// fastest (the last supported of the list), whatever the name.
TEST(Int8GemmTest, TheEnvironmentNamesASupportedVariant) {
  Int8GemmIsa fastest = Int8GemmIsa::kScalar;
  for (const auto& v : kernels::int8_gemm_variants()) {
    if (!v.supported()) continue;
    fastest = v.isa;
    EXPECT_EQ(kernels::int8_gemm_choose(v.name), v.isa) << v.name;
  }
  EXPECT_EQ(kernels::int8_gemm_choose(nullptr), fastest);
  EXPECT_EQ(kernels::int8_gemm_choose("no-such-isa"), fastest);
  EXPECT_EQ(kernels::int8_gemm_choose(""), fastest);
  EXPECT_EQ(kernels::int8_gemm_choose("scalar"), Int8GemmIsa::kScalar);
  for (const auto& v : kernels::int8_gemm_variants()) {
    if (!v.supported()) {
      EXPECT_EQ(kernels::int8_gemm_choose(v.name), fastest) << v.name;
    }
  }
}

// One random problem: a shape, values drawn from one of several
// distributions (uniform, the extremes only, constant), zero points and
// clamps at both ends, multipliers from tiny to saturating.
struct Problem {
  QGemmShape s;
  std::vector<int8_t> w, x;
  std::vector<int32_t> bias;  // empty: null
  std::vector<qmath::FixedMultiplier> m;
  QGemmOutput out;
};

int8_t draw_code(std::mt19937& rng, int mode, int lo) {
  switch (mode) {
    case 0:
      return static_cast<int8_t>(std::uniform_int_distribution<int>(lo, 127)(rng));
    case 1:
      return static_cast<int8_t>(std::bernoulli_distribution(0.5)(rng) ? lo : 127);
    default:
      return static_cast<int8_t>(mode == 2 ? lo : 127);
  }
}

Problem random_problem(std::mt19937& rng) {
  static constexpr int64_t kDepths[] = {0,  1,  2,  3,  4,  5,  7,  8,   9,
                                        15, 16, 17, 31, 63, 64, 65, 147, 577};
  static constexpr int64_t kColumns[] = {1, 2, 3, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 129};
  auto pick = [&](const auto& options) {
    return options[std::uniform_int_distribution<size_t>(0, std::size(options) - 1)(rng)];
  };
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Problem p;
  p.s = {uniform(1, 13), pick(kDepths), pick(kColumns)};
  const int w_mode = uniform(0, 3), x_mode = uniform(0, 3);
  for (int64_t i = 0; i < p.s.rows * p.s.depth; ++i) p.w.push_back(draw_code(rng, w_mode, -128));
  for (int64_t i = 0; i < p.s.depth * p.s.columns; ++i) {
    p.x.push_back(draw_code(rng, x_mode, -128));
  }
  // Occasional zero weights take the scalar path's skip.
  if (uniform(0, 3) == 0) {
    for (auto& v : p.w) v = uniform(0, 2) == 0 ? int8_t{0} : v;
  }
  const int32_t zero_points[] = {-128, 127, 0, uniform(-128, 127)};
  p.out.x_zero_point = pick(zero_points);
  p.out.y_zero_point = pick(zero_points);
  if (uniform(0, 2) == 0) {
    p.out.qmin = uniform(-128, 127);
    p.out.qmax = uniform(p.out.qmin, 127);
  }
  const bool with_bias = uniform(0, 3) != 0;
  for (int64_t o = 0; o < p.s.rows; ++o) {
    int max_w = 0;
    for (int64_t k = 0; k < p.s.depth; ++k) {
      max_w = std::max(max_w, std::abs(int{p.w[static_cast<size_t>(o * p.s.depth + k)]}));
    }
    // Bias up to what the accumulator bound leaves, at most 2^30.
    const int64_t room =
        std::min<int64_t>(int64_t{1} << 30, int64_t{INT32_MAX} - p.s.depth * 255 * max_w);
    if (with_bias) {
      p.bias.push_back(
          static_cast<int32_t>(std::uniform_int_distribution<int64_t>(-room, room)(rng)));
    }
    const double ratio = std::pow(2.0, std::uniform_real_distribution<double>(-34.0, 4.0)(rng));
    p.m.push_back(qmath::encode_multiplier(ratio));
  }
  return p;
}

TEST(Int8GemmTest, ListsTheScalarVariantFirst) {
  ASSERT_FALSE(kernels::int8_gemm_variants().empty());
  EXPECT_EQ(kernels::int8_gemm_variants().front().isa, Int8GemmIsa::kScalar);
  EXPECT_STREQ(int8_gemm_isa_name(Int8GemmIsa::kScalar), "scalar");
}

TEST(Int8GemmTest, EveryIsaMatchesScalarByteForByte) {
  if (fast_isas().empty()) GTEST_SKIP() << "this CPU runs no ISA variant but the scalar one";
  for (Int8GemmIsa isa : fast_isas()) {
    std::mt19937 rng(2024);
    for (int trial = 0; trial < 2000; ++trial) {
      const Problem p = random_problem(rng);
      const int32_t* bias = p.bias.empty() ? nullptr : p.bias.data();
      std::vector<int8_t> scalar(static_cast<size_t>(p.s.rows * p.s.columns), 1);
      std::vector<int8_t> vnni(scalar.size(), 2);
      qgemm_int8(p.s, p.w.data(), p.x.data(), bias, p.m.data(), p.out, scalar.data(),
                 Int8GemmIsa::kScalar);
      qgemm_int8(p.s, p.w.data(), p.x.data(), bias, p.m.data(), p.out, vnni.data(), isa);
      ASSERT_EQ(vnni, scalar) << int8_gemm_isa_name(isa) << " trial " << trial << ": rows "
                              << p.s.rows << " depth " << p.s.depth << " columns " << p.s.columns;
      if (trial % 10 == 0) {
        ASSERT_EQ(scalar, reference(p.s, p.w, p.x, p.bias, p.m, p.out)) << "trial " << trial;
      }
    }
  }
}

// Runs a kernel of the ai.eulernpu domain with the given implementation.
std::vector<int8_t> run_qop(const char* op, const nlohmann::json& attributes,
                            std::vector<Buffer> inputs, std::vector<int64_t> out_shape,
                            Int8GemmIsa isa) {
  const OpEntry* entry = find_op(kEulerNpuDomain, op, 1);
  EXPECT_NE(entry, nullptr);
  int64_t n = 1;
  for (int64_t d : out_shape) n *= d;
  std::vector<int8_t> y(static_cast<size_t>(n), 0);
  std::vector<Buffer> outputs{{ENP_DTYPE_INT8, std::move(out_shape), y.data()}};
  KernelContext ctx{attributes, inputs, outputs, 1};
  ctx.threads = 2;
  ctx.int8_gemm_isa = isa;
  if (entry) entry->kernel(ctx);
  return y;
}

TEST(Int8GemmTest, QConvAndQGemmKernelsGiveTheSameBytesWithEveryIsa) {
  if (fast_isas().empty()) GTEST_SKIP() << "this CPU runs no ISA variant but the scalar one";
  std::mt19937 rng(11);
  auto codes = [&](int64_t n) {
    std::vector<int8_t> v(static_cast<size_t>(n));
    for (auto& c : v) c = static_cast<int8_t>(std::uniform_int_distribution<int>(-128, 127)(rng));
    return v;
  };
  // QConv 3×3, pad 1, stride 2: 13 input channels, 19 output channels.
  const int64_t c = 13, o = 19, hw = 15;
  std::vector<int8_t> x = codes(c * hw * hw), w = codes(o * c * 9);
  std::vector<int32_t> bias(static_cast<size_t>(o)), mult(static_cast<size_t>(o)),
      shift(static_cast<size_t>(o));
  for (int64_t i = 0; i < o; ++i) {
    const auto e = qmath::encode_multiplier(0.0001 * static_cast<double>(i + 1));
    bias[static_cast<size_t>(i)] = static_cast<int32_t>(i * 977 - 9000);
    mult[static_cast<size_t>(i)] = e.multiplier;
    shift[static_cast<size_t>(i)] = e.shift;
  }
  const nlohmann::json conv_attrs = {{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}},
                                     {"strides", {2, 2}},      {"x_zero_point", -5},
                                     {"y_zero_point", 3},      {"qmin", 3}};
  const std::vector<Buffer> conv_in{{ENP_DTYPE_INT8, {1, c, hw, hw}, x.data()},
                                    {ENP_DTYPE_INT8, {o, c, 3, 3}, w.data()},
                                    {ENP_DTYPE_INT32, {o}, bias.data()},
                                    {ENP_DTYPE_INT32, {o}, mult.data()},
                                    {ENP_DTYPE_INT32, {o}, shift.data()}};
  const auto conv_scalar =
      run_qop("QConv", conv_attrs, conv_in, {1, o, 8, 8}, Int8GemmIsa::kScalar);
  for (Int8GemmIsa isa : fast_isas()) {
    EXPECT_EQ(run_qop("QConv", conv_attrs, conv_in, {1, o, 8, 8}, isa), conv_scalar)
        << int8_gemm_isa_name(isa);
  }
  // QGemm: 150 rows of A (more than one block of 128), K = 117, N = 19.
  std::vector<int8_t> a = codes(150 * 117), wg = codes(o * 117);
  const nlohmann::json gemm_attrs = {{"a_zero_point", 100}, {"y_zero_point", -20}};
  const std::vector<Buffer> gemm_in{{ENP_DTYPE_INT8, {150, 117}, a.data()},
                                    {ENP_DTYPE_INT8, {o, 117}, wg.data()},
                                    {ENP_DTYPE_INT32, {o}, bias.data()},
                                    {ENP_DTYPE_INT32, {o}, mult.data()},
                                    {ENP_DTYPE_INT32, {o}, shift.data()}};
  const auto gemm_scalar = run_qop("QGemm", gemm_attrs, gemm_in, {150, o}, Int8GemmIsa::kScalar);
  for (Int8GemmIsa isa : fast_isas()) {
    EXPECT_EQ(run_qop("QGemm", gemm_attrs, gemm_in, {150, o}, isa), gemm_scalar)
        << int8_gemm_isa_name(isa);
  }
}

}  // namespace
}  // namespace eulernpu::kit
