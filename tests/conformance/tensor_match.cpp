#include "tensor_match.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/compare.hpp"

namespace eulernpu::conformance {
namespace {

using host::DType;
using host::Tensor;

bool is_floating(DType d) {
  // --- low-precision float types compare decoded (NaN matches NaN).
  switch (d) {
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
      return true;
    default:
      break;
  }
  // --- end of low-precision types
  return d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16 ||
         d == DType::kBFloat16;
}

bool close(double got, double expected, const Tolerance& t) {
  if (std::isnan(got) || std::isnan(expected)) return std::isnan(got) && std::isnan(expected);
  // atol + rtol * inf would accept anything next to an infinity.
  if (std::isinf(got) || std::isinf(expected)) return got == expected;
  return std::fabs(got - expected) <= t.atol + t.rtol * std::fabs(expected);
}

// Integers beyond 2^53 do not survive a trip through double: compare the
// stored bytes.
bool same_bytes(const Tensor& a, const Tensor& b, uint64_t i) {
  const size_t w = host::dtype_size(a.dtype);
  return std::memcmp(a.data.data() + i * w, b.data.data() + i * w, w) == 0;
}

// "[1, 0, 3]" for flat index `flat` of `shape`.
std::string index_string(uint64_t flat, const std::vector<int64_t>& shape) {
  std::vector<uint64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    const auto d = static_cast<uint64_t>(shape[k]);
    idx[k] = d ? flat % d : 0;
    flat = d ? flat / d : 0;
  }
  std::string s;
  for (uint64_t v : idx) {
    if (!s.empty()) s += ", ";
    s += std::to_string(v);
  }
  return "[" + s + "]";
}

std::string value_string(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::optional<std::string> mismatch(const Tensor& got, const Tensor& expected,
                                    const Tolerance& tolerance) {
  if (got.dtype != expected.dtype) {
    return std::string("dtype ") + host::dtype_name(got.dtype) + ", expected " +
           host::dtype_name(expected.dtype);
  }
  if (got.shape != expected.shape) {
    return "shape " + host::shape_string(got.shape) + ", expected " +
           host::shape_string(expected.shape);
  }
  const uint64_t n = expected.element_count();
  if (got.data.size() != expected.data.size() ||
      expected.data.size() != n * host::dtype_size(expected.dtype)) {
    return "holds " + std::to_string(got.data.size()) + " bytes, expected " +
           std::to_string(expected.data.size());
  }
  const std::vector<double> g = host::to_doubles(got), e = host::to_doubles(expected);
  const bool floating = is_floating(expected.dtype);
  uint64_t bad = 0, worst = 0;
  double worst_diff = -1;
  for (uint64_t i = 0; i < n; ++i) {
    if (floating ? close(g[i], e[i], tolerance) : same_bytes(got, expected, i)) continue;
    ++bad;
    double diff = std::fabs(g[i] - e[i]);
    if (std::isnan(diff)) diff = INFINITY;
    if (diff > worst_diff) {
      worst_diff = diff;
      worst = i;
    }
  }
  if (bad == 0) return std::nullopt;
  return std::to_string(bad) + " of " + std::to_string(n) + " elements differ, max abs diff " +
         host::format_diff(worst_diff) + " at " + index_string(worst, expected.shape) + " (got " +
         value_string(g[worst]) + ", expected " + value_string(e[worst]) + ")";
}

}  // namespace eulernpu::conformance
