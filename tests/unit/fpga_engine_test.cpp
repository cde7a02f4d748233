// The fpga_board engine model (plugins/fpga_board/src/layer_tiles.hpp):
// every layer shape the engine's tile loops treat differently, against the
// reference QConv kernel — output channels and pixels below, at and above
// the engine's lanes, input channels not a multiple of ICP, a reduction
// longer than the buffers (accumulators carried between tiles), groups,
// depthwise, strides, dilations, padding, 1-D, a GEMM's strided layout,
// and the clamps of a fused activation.
#include <gtest/gtest.h>

#include <ostream>
#include <random>
#include <vector>

#include "engine_core.hpp"
#include "eulernpu/kernels/conv.hpp"
#include "eulernpu/sdk/qmath.hpp"
#include "layer_tiles.hpp"

namespace eulernpu::fpga_board {
namespace {

struct Case {
  const char* name;
  int64_t batch, c, h, w, o, group, kh, kw, stride, dilation, pad;
  int32_t x_zp = 3, y_zp = -5, qmin = -128, qmax = 127;
};

// Names the case in test output instead of its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const EngineSize kSmall{"test", 4, 8, 8, 512};
// A depth of 5 steps cuts most reductions into several tiles.
const EngineSize kShallow{"shallow", 2, 4, 6, 5};

class FpgaEngineTest : public ::testing::TestWithParam<Case> {};

TEST_P(FpgaEngineTest, LayerGivesTheReferenceBytesAndItsScheduleCycles) {
  const Case& k = GetParam();
  for (const EngineSize& size : {kSmall, kShallow}) {
    std::mt19937 rng(7);
    auto i8 = [&](int lo, int hi) {
      return static_cast<int8_t>(std::uniform_int_distribution<int>(lo, hi)(rng));
    };
    const int64_t cg = k.c / k.group;
    const int64_t oh = (k.h + 2 * k.pad - k.dilation * (k.kh - 1) - 1) / k.stride + 1;
    const int64_t ow = (k.w + 2 * k.pad - k.dilation * (k.kw - 1) - 1) / k.stride + 1;
    std::vector<int8_t> x(static_cast<size_t>(k.batch * k.c * k.h * k.w));
    std::vector<int8_t> w(static_cast<size_t>(k.o * cg * k.kh * k.kw));
    for (auto& v : x) v = i8(-128, 127);
    for (auto& v : w) v = i8(-127, 127);
    std::vector<int32_t> bias(static_cast<size_t>(k.o)), mult(bias.size()), shift(bias.size());
    std::vector<sdk::qmath::FixedMultiplier> m(bias.size());
    for (size_t i = 0; i < bias.size(); ++i) {
      bias[i] = std::uniform_int_distribution<int32_t>(-40000, 40000)(rng);
      m[i] = sdk::qmath::encode_multiplier(std::uniform_real_distribution<double>(1e-4, 2e-2)(rng));
      mult[i] = m[i].multiplier;
      shift[i] = m[i].shift;
    }
    kernels::ConvParams p;
    p.g.batch = k.batch;
    p.g.in_channels = k.c;
    p.g.out_channels = k.o;
    p.g.group = k.group;
    p.g.in = {1, k.h, k.w};
    p.g.out = {1, oh, ow};
    p.g.kernel = {1, k.kh, k.kw};
    p.g.stride = {1, k.stride, k.stride};
    p.g.dilation = {1, k.dilation, k.dilation};
    p.g.pad = {0, k.pad, k.pad};
    p.x_zero_point = k.x_zp;
    p.y_zero_point = k.y_zp;
    p.qmin = k.qmin;
    p.qmax = k.qmax;
    std::vector<int8_t> want(static_cast<size_t>(k.batch * k.o * oh * ow));
    kernels::qconv(p, x.data(), w.data(), bias.data(), m.data(), want.data());

    LayerGeometry g;
    g.batch = k.batch;
    g.channels = k.c;
    g.height = k.h;
    g.width = k.w;
    g.out_channels = k.o;
    g.out_height = oh;
    g.out_width = ow;
    g.group = k.group;
    g.kernel_h = k.kh;
    g.kernel_w = k.kw;
    g.stride_h = g.stride_w = k.stride;
    g.dilation_h = g.dilation_w = k.dilation;
    g.pad_top = g.pad_left = k.pad;
    g.x_channel = k.h * k.w;
    g.x_batch = k.c * g.x_channel;
    g.y_channel = oh * ow;
    g.y_batch = k.o * g.y_channel;
    g.x_zero_point = k.x_zp;
    g.y_zero_point = k.y_zp;
    g.qmin = k.qmin;
    g.qmax = k.qmax;
    EngineCore core(size);
    std::vector<int8_t> got(want.size(), 0x55);
    int64_t observed = 0;
    const LayerStats st =
        run_layer(core, g, x.data(), w.data(), bias.data(), mult.data(), shift.data(), got.data(),
                  [&](const TileJob&, std::span<const int8_t>, int64_t c) { observed += c; });
    EXPECT_EQ(got, want) << size.name;
    const LayerStats planned = layer_schedule(size, g);
    EXPECT_EQ(st.cycles, planned.cycles) << size.name;
    EXPECT_EQ(st.tiles, planned.tiles) << size.name;
    EXPECT_EQ(observed, st.cycles) << size.name;
    EXPECT_EQ(st.macs, k.batch * k.o * oh * ow * cg * k.kh * k.kw);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, FpgaEngineTest,
    ::testing::Values(Case{"pointwise", 1, 8, 4, 4, 8, 1, 1, 1, 1, 1, 0},
                      Case{"tails", 2, 13, 5, 7, 11, 1, 3, 3, 1, 1, 1},
                      Case{"long_k", 1, 37, 6, 6, 9, 1, 3, 3, 2, 1, 1},
                      Case{"grouped", 1, 12, 6, 5, 18, 3, 3, 3, 1, 1, 1},
                      Case{"depthwise", 1, 19, 7, 6, 19, 19, 3, 3, 1, 1, 1},
                      Case{"depthwise_strided", 2, 10, 9, 9, 10, 10, 5, 5, 2, 1, 2},
                      Case{"dilated", 1, 6, 9, 9, 7, 1, 3, 3, 1, 2, 2},
                      Case{"one_d", 1, 9, 1, 17, 5, 1, 1, 4, 1, 1, 0},
                      Case{"relu_clamp", 1, 8, 5, 5, 8, 1, 3, 3, 1, 1, 1, -7, -20, -20, 90}),
    [](const ::testing::TestParamInfo<Case>& c) { return std::string(c.param.name); });

// A GEMM is a 1x1 conv whose pixels are A's rows, A row-major (rows × K)
// and Y row-major (rows × N): the strides place them.
TEST(FpgaEngineGemmTest, RowMajorGemmGivesTheReferenceBytes) {
  const int64_t rows = 9, k = 21, n = 13;
  std::mt19937 rng(3);
  std::vector<int8_t> a(static_cast<size_t>(rows * k)), w(static_cast<size_t>(n * k));
  for (auto& v : a) v = static_cast<int8_t>(std::uniform_int_distribution<int>(-128, 127)(rng));
  for (auto& v : w) v = static_cast<int8_t>(std::uniform_int_distribution<int>(-127, 127)(rng));
  std::vector<int32_t> bias(static_cast<size_t>(n)), mult(bias.size()), shift(bias.size());
  for (size_t i = 0; i < bias.size(); ++i) {
    bias[i] = static_cast<int32_t>(i * 977) - 5000;
    const auto m = sdk::qmath::encode_multiplier(0.003 + 0.0001 * static_cast<double>(i));
    mult[i] = m.multiplier;
    shift[i] = m.shift;
  }
  const int32_t a_zp = -9, y_zp = 4;
  std::vector<int8_t> want(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < n; ++o) {
      int32_t acc = bias[static_cast<size_t>(o)];
      for (int64_t i = 0; i < k; ++i) acc += (a[r * k + i] - a_zp) * w[o * k + i];
      want[static_cast<size_t>(r * n + o)] = static_cast<int8_t>(sdk::qmath::requantize(
          acc, {mult[static_cast<size_t>(o)], shift[static_cast<size_t>(o)]}, y_zp, -128, 127));
    }
  }
  LayerGeometry g;
  g.channels = k;
  g.out_channels = n;
  g.width = g.out_width = rows;
  g.x_channel = 1;
  g.x_pixel = k;
  g.y_channel = 1;
  g.y_pixel = n;
  g.x_zero_point = a_zp;
  g.y_zero_point = y_zp;
  for (const EngineSize& size : {kSmall, kShallow}) {
    EngineCore core(size);
    std::vector<int8_t> got(want.size());
    run_layer(core, g, a.data(), w.data(), bias.data(), mult.data(), shift.data(), got.data());
    EXPECT_EQ(got, want) << size.name;
  }
}

// The cycle formula is the RTL's pipeline (tests/cli/test_fpga_rtl.py
// checks it against Verilator): steps, then 3 edges to the accumulators,
// then one pixel an edge through 3 registers of requantization.
TEST(FpgaEngineCoreTest, TileCyclesFollowThePipeline) {
  EXPECT_EQ(tile_cycles(kSmall, 1, false), 1 + 3);
  EXPECT_EQ(tile_cycles(kSmall, 10, true), 10 + 3 + 4 + 3);
  EXPECT_EQ(tile_cycles(kShallow, 5, true), 5 + 3 + 2 + 3);
}

}  // namespace
}  // namespace eulernpu::fpga_board
