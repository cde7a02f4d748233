#include "core/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace eulernpu::host {
namespace {

Tensor f32(const std::string& name, std::vector<int64_t> shape, std::vector<float> values) {
  Tensor t{name, DType::kFloat32, std::move(shape), {}};
  t.data.resize(values.size() * 4);
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

TEST(CompareTest, ReportsLargestDifferenceAndItsIndex) {
  const auto r = compare_tensors({f32("y", {2}, {1.0f, 2.5f})}, {f32("y", {2}, {1.0f, 2.0f})}, 0.1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].ok);
  EXPECT_DOUBLE_EQ(r[0].max_abs_diff, 0.5);
  EXPECT_EQ(r[0].worst_index, 1u);
  EXPECT_TRUE(
      compare_tensors({f32("y", {2}, {1.0f, 2.5f})}, {f32("y", {2}, {1.0f, 2.0f})}, 0.5)[0].ok);
}

TEST(CompareTest, NanAndInfinityRules) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(compare_tensors({f32("y", {2}, {nan, inf})}, {f32("y", {2}, {nan, inf})}, 0)[0].ok);
  EXPECT_TRUE(std::isinf(
      compare_tensors({f32("y", {1}, {nan})}, {f32("y", {1}, {1.0f})}, 1e9)[0].max_abs_diff));
  EXPECT_FALSE(compare_tensors({f32("y", {1}, {-inf})}, {f32("y", {1}, {inf})}, 1e30)[0].ok);
}

TEST(CompareTest, MissingKeysBothWaysAndShapes) {
  const auto r = compare_tensors({f32("a", {1}, {1}), f32("extra", {1}, {1})},
                                 {f32("a", {1, 1}, {1}), f32("b", {1}, {1})}, 0);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_TRUE(r[0].shape_mismatch);
  EXPECT_TRUE(r[1].missing_in_got);
  EXPECT_TRUE(r[2].missing_in_expected);
  for (const auto& c : r) EXPECT_FALSE(c.ok);
}

TEST(CompareTest, WidensEveryDtypeExactly) {
  Tensor h{"h", DType::kFloat16, {3}, {0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00}};  // 1, -2, 2^-24
  EXPECT_EQ(to_doubles(h), (std::vector<double>{1.0, -2.0, std::ldexp(1.0, -24)}));
  // bfloat16 1.5, -2^-133 (the smallest subnormal), -inf
  Tensor bf{"b", DType::kBFloat16, {3}, {0xc0, 0x3f, 0x01, 0x80, 0x80, 0xff}};
  EXPECT_EQ(to_doubles(bf), (std::vector<double>{1.5, -std::ldexp(1.0, -133), -INFINITY}));
  Tensor i8{"i", DType::kInt8, {2}, {0xff, 0x7f}};
  EXPECT_EQ(to_doubles(i8), (std::vector<double>{-1.0, 127.0}));
}

TEST(CompareTest, FormatsDifferencesLikeTheWalkthrough) {
  EXPECT_EQ(format_diff(0.0), "0.0");
  EXPECT_EQ(format_diff(3.4e-6), "3.4e-06");
  EXPECT_EQ(format_diff(0.5), "0.5");
}

}  // namespace
}  // namespace eulernpu::host
