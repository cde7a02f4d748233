// MaxPool (eulernpu/kernels/pool.hpp): without argmax, the columns whose
// taps lie in the row run as vectors; with argmax, every output goes
// through the tap-by-tap loop. Both must give the same bytes, NaN and ties
// included, for every element type the kernel is built for.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "eulernpu/kernels/pool.hpp"

namespace eulernpu::kernels {
namespace {

struct Case {
  int64_t h, w, k, stride, dilation, pad_begin, pad_end;
};

std::string describe(const Case& c) {
  return std::to_string(c.h) + "x" + std::to_string(c.w) + " k" + std::to_string(c.k) + " s" +
         std::to_string(c.stride) + " d" + std::to_string(c.dilation) + " p" +
         std::to_string(c.pad_begin) + "," + std::to_string(c.pad_end);
}

int64_t out_dim(int64_t in, const Case& c) {
  return (in + c.pad_begin + c.pad_end - c.dilation * (c.k - 1) - 1) / c.stride + 1;
}

template <typename T>
void check(const Case& c, std::mt19937& rng) {
  PoolParams p;
  p.planes = 3;
  p.in = {1, c.h, c.w};
  p.out = {1, out_dim(c.h, c), out_dim(c.w, c)};
  p.kernel = {1, c.k, c.k};
  p.taps = c.k * c.k;
  p.stride = {1, c.stride, c.stride};
  p.dilation = {1, c.dilation, c.dilation};
  p.pad_begin = {0, c.pad_begin, c.pad_begin};
  p.pad_end = {0, c.pad_end, c.pad_end};
  std::vector<T> x(static_cast<size_t>(p.planes * c.h * c.w));
  // Few distinct values, so that ties are common.
  std::uniform_int_distribution<int> dist(-4, 4);
  for (T& v : x) v = static_cast<T>(dist(rng));
  if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
    for (size_t i = 0; i < x.size(); i += 7) x[i] = std::numeric_limits<T>::quiet_NaN();
    for (size_t i = 3; i < x.size(); i += 11) x[i] = -std::numeric_limits<T>::infinity();
  }
  const size_t n = static_cast<size_t>(p.planes * p.out[1] * p.out[2]);
  ASSERT_GT(n, 0u) << describe(c);
  std::vector<T> fast(n), slow(n);
  std::vector<int64_t> argmax(n);
  max_pool(p, x.data(), fast.data());
  max_pool(p, x.data(), slow.data(), argmax.data());
  EXPECT_EQ(std::memcmp(fast.data(), slow.data(), n * sizeof(T)), 0)
      << describe(c) << ", " << sizeof(T) << "-byte elements";
}

TEST(MaxPoolTest, VectorRowsGiveTheTapByTapBytes) {
  const std::vector<Case> cases = {
      {8, 20, 2, 2, 1, 0, 0},
      {6, 64, 2, 2, 1, 0, 0},
      {6, 66, 3, 1, 1, 1, 1},
      {5, 47, 3, 2, 1, 1, 1},
      {5, 140, 3, 2, 1, 0, 1},
      {9, 90, 5, 1, 2, 2, 2},
      {4, 200, 2, 1, 1, 0, 1},
      {3, 15, 3, 1, 1, 1, 1},
      {7, 130, 3, 3, 1, 1, 0},
      {4, 70, 4, 2, 1, 5, 5},
      // Rows shorter than a vector (one vector each; the last rows of X,
      // where its reads would pass X's end, one output at a time), a 2×2
      // window dilated too.
      {28, 28, 2, 2, 1, 0, 0},
      {10, 21, 2, 1, 2, 0, 0},
      {9, 17, 3, 2, 1, 1, 1},
  };
  std::mt19937 rng(11);
  for (const Case& c : cases) {
    check<float>(c, rng);
    check<double>(c, rng);
    check<int8_t>(c, rng);
    check<uint8_t>(c, rng);
  }
}

}  // namespace
}  // namespace eulernpu::kernels
