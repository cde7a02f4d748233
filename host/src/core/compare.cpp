#include "core/compare.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "eulernpu/sdk/float16.hpp"
#include "eulernpu/sdk/lowbit.hpp"

namespace eulernpu::host {
namespace {

using sdk::float16::half_to_double;

// bfloat16 is the upper half of a float32: widening is exact.
double bfloat16_to_double(uint16_t b) { return sdk::float16::bfloat16_to_float(b); }

template <typename T>
double exactly(T v) {
  return static_cast<double>(v);
}

// Each element of `t`, stored as T, through `to_double` (the 16-bit floats
// are stored as their bits).
template <typename T, double (*to_double)(T) = exactly<T>>
void widen(const Tensor& t, std::vector<double>& out) {
  const size_t n = t.data.size() / sizeof(T);
  out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, t.data.data() + i * sizeof(T), sizeof(T));
    out[i] = to_double(v);
  }
}

double element_diff(double g, double e) {
  if (std::isnan(g) && std::isnan(e)) return 0;
  if (g == e) return 0;  // also equal infinities
  const double d = std::fabs(g - e);
  return std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
}

}  // namespace

std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> out;
  switch (t.dtype) {
    case DType::kFloat32:
      widen<float>(t, out);
      break;
    case DType::kFloat64:
      widen<double>(t, out);
      break;
    case DType::kInt8:
      widen<int8_t>(t, out);
      break;
    case DType::kUInt8:
      widen<uint8_t>(t, out);
      break;
    case DType::kBool:
      widen<uint8_t>(t, out);
      break;
    case DType::kUInt16:
      widen<uint16_t>(t, out);
      break;
    case DType::kUInt32:
      widen<uint32_t>(t, out);
      break;
    case DType::kUInt64:
      widen<uint64_t>(t, out);
      break;
    case DType::kInt16:
      widen<int16_t>(t, out);
      break;
    case DType::kInt32:
      widen<int32_t>(t, out);
      break;
    case DType::kInt64:
      widen<int64_t>(t, out);
      break;
    case DType::kFloat16:
      widen<uint16_t, half_to_double>(t, out);
      break;
    case DType::kBFloat16:
      widen<uint16_t, bfloat16_to_double>(t, out);
      break;
    case DType::kUndefined:
      break;
    // --- low-precision types: one code byte per element, decoded exactly
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
    case DType::kUInt2:
    case DType::kInt2:
      out.resize(t.data.size());
      for (size_t i = 0; i < t.data.size(); ++i) {
        out[i] = sdk::lowbit::decode(static_cast<int32_t>(t.dtype), t.data[i]);
      }
      break;
      // --- end of low-precision types
  }
  return out;
}

std::vector<TensorComparison> compare_tensors(const std::vector<Tensor>& got,
                                              const std::vector<Tensor>& expected,
                                              double tolerance) {
  auto find = [](const std::vector<Tensor>& list, const std::string& name) -> const Tensor* {
    for (const Tensor& t : list) {
      if (t.name == name) return &t;
    }
    return nullptr;
  };
  std::vector<TensorComparison> out;
  for (const Tensor& e : expected) {
    TensorComparison c;
    c.name = e.name;
    c.expected_shape = e.shape;
    c.expected_dtype = e.dtype;
    const Tensor* g = find(got, e.name);
    if (!g) {
      c.missing_in_got = true;
      out.push_back(c);
      continue;
    }
    c.got_shape = g->shape;
    c.got_dtype = g->dtype;
    if (g->shape != e.shape) {
      c.shape_mismatch = true;
      out.push_back(c);
      continue;
    }
    const std::vector<double> gv = to_doubles(*g), ev = to_doubles(e);
    for (size_t i = 0; i < gv.size() && i < ev.size(); ++i) {
      const double d = element_diff(gv[i], ev[i]);
      if (d > c.max_abs_diff) {
        c.max_abs_diff = d;
        c.worst_index = i;
        c.worst_got = gv[i];
        c.worst_expected = ev[i];
      }
    }
    c.ok = c.max_abs_diff <= tolerance;
    out.push_back(c);
  }
  for (const Tensor& g : got) {
    if (find(expected, g.name)) continue;
    TensorComparison c;
    c.name = g.name;
    c.got_shape = g.shape;
    c.got_dtype = g.dtype;
    c.missing_in_expected = true;
    out.push_back(c);
  }
  return out;
}

std::string format_diff(double diff) {
  if (diff == 0) return "0.0";
  if (std::isinf(diff)) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", diff);
  return buf;
}

}  // namespace eulernpu::host
