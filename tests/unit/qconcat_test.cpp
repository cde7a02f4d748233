// QConcat (eulernpu/kernels/concat.hpp): every output byte is its input's
// code requantized into the output's scale, at its place along the axis,
// whether the blocks are long (one table call each) or shorter than a
// vector (the whole input through its table first, then copied).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "eulernpu/kernels/concat.hpp"

namespace eulernpu::kernels {
namespace qconcat_test {
namespace {

namespace qmath = sdk::qmath;

TEST(QConcatTest, ShortAndLongBlocksGiveTheDefinitionsBytes) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> code(-128, 127);
  struct Case {
    int64_t outer, inner;
    std::vector<int64_t> dims;
  };
  // [1, N, 2] + [1, N, 2] along the last axis (blocks of 2 bytes), blocks
  // around the 64-byte limit, and one outer block.
  const std::vector<Case> cases = {{4420, 1, {2, 2}},     {300, 1, {1, 3, 2}}, {50, 8, {7, 1}},
                                   {40, 1, {63, 64, 65}}, {1, 100, {3, 5}},    {3, 33, {2, 1}}};
  const std::vector<double> scales = {0.02, 0.05, 0.011};
  for (const Case& c : cases) {
    std::vector<std::vector<int8_t>> data;
    std::vector<ConcatInput> inputs;
    int64_t axis = 0;
    for (size_t i = 0; i < c.dims.size(); ++i) {
      data.emplace_back(static_cast<size_t>(c.outer * c.dims[i] * c.inner));
      for (int8_t& v : data.back()) v = static_cast<int8_t>(code(rng));
      axis += c.dims[i];
    }
    for (size_t i = 0; i < c.dims.size(); ++i) {
      inputs.push_back({data[i].data(), c.dims[i], static_cast<int32_t>(i) * 3 - 2,
                        qmath::encode_multiplier(scales[i % scales.size()] / 0.03)});
    }
    ConcatParams p;
    p.outer = c.outer;
    p.inner = c.inner;
    p.y_zero_point = 4;
    std::vector<int8_t> got(static_cast<size_t>(c.outer * axis * c.inner), 0);
    qconcat(p, inputs.data(), inputs.size(), got.data());
    size_t differ = 0;
    for (int64_t o = 0; o < c.outer; ++o) {
      int64_t at = 0;
      for (size_t i = 0; i < inputs.size(); ++i) {
        const int64_t chunk = c.dims[i] * c.inner;
        for (int64_t j = 0; j < chunk; ++j) {
          const int8_t q = data[i][static_cast<size_t>(o * chunk + j)];
          const auto want = static_cast<int8_t>(qmath::requantize(
              q - inputs[i].zero_point, inputs[i].multiplier, p.y_zero_point, -128, 127));
          if (got[static_cast<size_t>(o * axis * c.inner + at + j)] != want) ++differ;
        }
        at += chunk;
      }
    }
    EXPECT_EQ(differ, 0u) << "outer " << c.outer << " inner " << c.inner << " inputs "
                          << c.dims.size();
  }
}

}  // namespace
}  // namespace qconcat_test
}  // namespace eulernpu::kernels
