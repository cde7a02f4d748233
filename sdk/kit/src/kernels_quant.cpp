// ONNX quantization kernels: QuantizeLinear and DequantizeLinear on
// int8/uint8/int16/uint16 data; DynamicQuantizeLinear, MatMulInteger,
// QLinearMatMul, ConvInteger and QLinearConv on int8/uint8.
//
// The arithmetic is ONNX's reference implementation's, so results match it
// bit for bit: x / scale is divided in float32 (the scale's type) and
// rounded half to even; integer products accumulate exactly in int64 and
// saturate to int32 (where the reference's int32 would wrap); requantization
// multiplies that int32 by the product of the scales, computed in the
// scales' type (float32, or float16 for QLinearMatMul), in float64 as numpy
// promotes it, then rounds half to even and saturates.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/simd_clones.hpp"
#include "eulernpu/sdk/status.hpp"
#include "float16.hpp"
#include "kernel_util.hpp"
#include "lowbit.hpp"
#include "operands.hpp"

namespace eulernpu::kit {
namespace {

// Where this file's corrupt-artifact errors are located.
constexpr std::string_view kScope = "cpu_ref quantization";

using Dims = std::vector<int64_t>;

constexpr uint32_t kQuant8 = ENP_DTYPE_BIT(ENP_DTYPE_INT8) | ENP_DTYPE_BIT(ENP_DTYPE_UINT8);

// --- element access -------------------------------------------------------

// Elements of an int8, uint8, int16, uint16 or int32 tensor, widened to
// int32.
std::vector<int32_t> widen(const Buffer& b) {
  std::vector<int32_t> out(static_cast<size_t>(b.count()));
  auto copy = [&](const auto* p) { std::copy(p, p + out.size(), out.begin()); };
  switch (b.dtype) {
    case ENP_DTYPE_INT8:
      copy(b.as<const int8_t>());
      break;
    case ENP_DTYPE_UINT8:
      copy(b.as<const uint8_t>());
      break;
    case ENP_DTYPE_INT16:
      copy(b.as<const int16_t>());
      break;
    case ENP_DTYPE_UINT16:
      copy(b.as<const uint16_t>());
      break;
    case ENP_DTYPE_INT32:
      copy(b.as<const int32_t>());
      break;
    // --- low-precision integers: int4/int2 codes are the value as int8
    case ENP_DTYPE_INT4:
    case ENP_DTYPE_INT2:
      copy(b.as<const int8_t>());
      break;
    case ENP_DTYPE_UINT4:
    case ENP_DTYPE_UINT2:
      copy(b.as<const uint8_t>());
      break;
      // --- end of low-precision integers
    default:
      corrupt(kScope, std::string("integer input of dtype ") + sdk::dtype_name(b.dtype));
  }
  return out;
}

// `x` rounded to the nearest float16 value (ties to even), kept as float:
// numpy's float16 arithmetic is float32 arithmetic rounded so, and float32
// is wide enough that the double rounding never differs for * and /.
float round_to_half(float x) {
  if (!std::isfinite(x) || x == 0.0f) return x;
  int e = 0;
  std::frexp(x, &e);
  const int quantum = std::max(e - 11, -24);  // 11 significant bits; subnormals below 2^-14
  const float r = std::ldexp(std::nearbyint(std::ldexp(x, -quantum)), quantum);
  return std::fabs(r) > 65504.0f ? std::copysign(std::numeric_limits<float>::infinity(), x) : r;
}

// Scale element i of a float32 or float16 tensor.
float scale_at(const Buffer& b, int64_t i) {
  if (b.dtype == ENP_DTYPE_FLOAT16) return half_to_float(b.as<const uint16_t>()[i]);
  require(kScope, b.dtype == ENP_DTYPE_FLOAT32, "scales must be float32 or float16");
  return b.as<const float>()[i];
}

struct QRange {
  int32_t lo, hi;
};

QRange range_of(int32_t dtype) {
  switch (dtype) {
    case ENP_DTYPE_INT8:
      return {-128, 127};
    case ENP_DTYPE_UINT8:
      return {0, 255};
    case ENP_DTYPE_INT16:
      return {-32768, 32767};
    case ENP_DTYPE_UINT16:
      return {0, 65535};
    // --- low-precision integers
    case ENP_DTYPE_INT4:
    case ENP_DTYPE_UINT4:
    case ENP_DTYPE_INT2:
    case ENP_DTYPE_UINT2: {
      const sdk::lowbit::IntRange r = sdk::lowbit::int_range(dtype);
      return {static_cast<int32_t>(r.lo), static_cast<int32_t>(r.hi)};
    }
      // --- end of low-precision integers
    default:
      corrupt(kScope, std::string("quantized output of dtype ") + sdk::dtype_name(dtype));
  }
}

// round_half_even(v) + zero_point, saturated; NaN quantizes like 0.
template <typename F>
int32_t requantize(F v, int32_t zero_point, QRange r) {
  const double rounded = std::isnan(v) ? 0.0 : static_cast<double>(std::nearbyint(v));
  const double q = rounded + zero_point;
  return static_cast<int32_t>(std::clamp(q, static_cast<double>(r.lo), static_cast<double>(r.hi)));
}

int32_t saturate_int32(int64_t v) {
  return static_cast<int32_t>(std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}

// v is within range_of(out.dtype). int4/int2 codes are the value as int8,
// uint4/uint2 codes the value as uint8.
void store_quantized(const Buffer& out, int64_t i, int32_t v) {
  switch (out.dtype) {
    case ENP_DTYPE_INT8:
    case ENP_DTYPE_INT4:
    case ENP_DTYPE_INT2:
      out.as<int8_t>()[i] = static_cast<int8_t>(v);
      break;
    case ENP_DTYPE_INT16:
      out.as<int16_t>()[i] = static_cast<int16_t>(v);
      break;
    case ENP_DTYPE_UINT16:
      out.as<uint16_t>()[i] = static_cast<uint16_t>(v);
      break;
    default:
      out.as<uint8_t>()[i] = static_cast<uint8_t>(v);
      break;
  }
}

// --- scale layouts (QuantizeLinear, DequantizeLinear) ----------------------

// How scale and zero point map onto x, seen as (outer, length, inner)
// around the quantization axis: one value (per tensor), one per index along
// the axis (per axis), or one per block of `block` indices along the axis
// (blocked, opset 21).
struct Layout {
  enum class Kind { kTensor, kAxis, kBlocked } kind = Kind::kTensor;
  int64_t outer = 1, length = 1, inner = 1, block = 0, blocks = 1;

  int64_t scale_index(int64_t o, int64_t c, int64_t i) const {
    switch (kind) {
      case Kind::kTensor:
        return 0;
      case Kind::kAxis:
        return c;
      case Kind::kBlocked:
        return (o * blocks + c / block) * inner + i;
    }
    return 0;
  }
};

// The layout of a scale of shape `scale` over x, or why there is none.
std::optional<std::string> layout_of(const Dims& x, const Dims& scale, int64_t axis,
                                     int64_t block_size, Layout& l) {
  l = Layout{};
  if (product(scale) == 1) {
    l.length = product(x);
    return std::nullopt;
  }
  const auto rank = static_cast<int64_t>(x.size());
  if (axis < -rank || axis >= rank) {
    return "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank);
  }
  const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  l.outer = product({x.begin(), x.begin() + static_cast<std::ptrdiff_t>(a)});
  l.length = x[a];
  l.inner = product({x.begin() + static_cast<std::ptrdiff_t>(a) + 1, x.end()});
  if (block_size <= 0) {
    if (scale.size() != 1 || scale[0] != x[a]) {
      return "scale " + sdk::shape_string(scale) +
             " is neither one value nor one per index of axis " + std::to_string(axis) + " of " +
             sdk::shape_string(x);
    }
    l.kind = Layout::Kind::kAxis;
    return std::nullopt;
  }
  bool fits = scale.size() == x.size();
  for (size_t d = 0; fits && d < x.size(); ++d) {
    fits = d == a ? scale[d] == (x[d] + block_size - 1) / block_size : scale[d] == x[d];
  }
  if (!fits) {
    return "blocked scale " + sdk::shape_string(scale) + " does not tile " + sdk::shape_string(x) +
           " in blocks of " + std::to_string(block_size) + " along axis " + std::to_string(axis);
  }
  l.kind = Layout::Kind::kBlocked;
  l.block = block_size;
  l.blocks = scale[a];
  return std::nullopt;
}

Layout kernel_layout(const KernelContext& ctx) {
  Layout l;
  if (auto why = layout_of(ctx.inputs[0].shape, ctx.inputs[1].shape, ctx.attr_int("axis", 1),
                           ctx.attr_int("block_size", 0), l)) {
    corrupt(kScope, *why);
  }
  if (ctx.has_input(2)) {
    const Buffer& zp = ctx.inputs[2];
    const bool per_tensor = l.kind == Layout::Kind::kTensor;
    require(kScope, per_tensor ? zp.count() == 1 : zp.shape == ctx.inputs[1].shape,
            "the zero point's shape differs from the scale's");
  }
  require(kScope, ctx.outputs[0].shape == ctx.inputs[0].shape,
          "the output's shape differs from x's");
  return l;
}

// Calls fn(index, scale_index) for every element of x, split across threads
// by (outer, axis index) rows.
template <typename Fn>
void for_each_scaled(const KernelContext& ctx, const Layout& l, Fn fn) {
  parallel_for(l.outer * l.length, threads_for(ctx, l.outer * l.length * l.inner),
               [&](int64_t begin, int64_t end) {
                 for (int64_t row = begin; row < end; ++row) {
                   const int64_t o = row / l.length, c = row % l.length;
                   for (int64_t i = 0; i < l.inner; ++i) {
                     fn(row * l.inner + i, l.scale_index(o, c, i));
                   }
                 }
               });
}

std::vector<int32_t> zero_points(const KernelContext& ctx, size_t input, int64_t count) {
  return ctx.has_input(input) ? widen(ctx.inputs[input])
                              : std::vector<int32_t>(static_cast<size_t>(count), 0);
}

// --- low-precision floats
// QuantizeLinear to float8 or float4e2m1. float8: y = x / y_scale, saturated
// unless saturate=0; the zero point must be 0 and is not read, as in the
// reference. float4e2m1: y = x / y_scale + y_zero_point (the reference adds
// it, turning -0 into +0), always saturating. Both in float32 like the
// reference, then rounded once (sdk/lowbit.hpp).
void quantize_to_float(const KernelContext& ctx, const Layout& l,
                       const sdk::lowbit::FloatFormat& format) {
  const Buffer& out = ctx.outputs[0];
  const float* x = ctx.inputs[0].as<const float>();
  const float* scale = ctx.inputs[1].as<const float>();
  const bool saturate = ctx.attr_int("saturate", 1) != 0;
  const bool add_zero_point = out.dtype == ENP_DTYPE_FLOAT4E2M1 && ctx.has_input(2);
  const auto* zp = add_zero_point ? ctx.inputs[2].as<const uint8_t>() : nullptr;
  auto* y = out.as<uint8_t>();
  for_each_scaled(ctx, l, [&](int64_t i, int64_t s) {
    float v = x[i] / scale[s];
    if (zp) v += static_cast<float>(sdk::lowbit::decode_float(format, zp[s]));
    y[i] = sdk::lowbit::encode_float(format, v, saturate);
  });
}
// --- end of low-precision floats

// --- per-tensor 8-bit fast paths
// The boundaries of every quantized graph are per-tensor QuantizeLinear /
// DequantizeLinear on int8 or uint8: one tight loop each instead of the
// general layout walk, with the same bits. Quantize: x / scale in float32,
// rounded half to even, plus the zero point, clamped — in float32, which
// is exact below 2^24 and clamps the same above it. Dequantize: (x - zp)
// has at most 9 bits and the scale 24, so their float64 product is exact
// and its one rounding to float32 is the float32 product's.
template <typename Code>
inline __attribute__((always_inline)) void quantize_floats(const float* x, int64_t n, float scale,
                                                           float z, Code* y) {
  const auto lo = static_cast<float>(std::numeric_limits<Code>::min());
  const auto hi = static_cast<float>(std::numeric_limits<Code>::max());
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i] / scale;
    const float rounded = std::isnan(v) ? 0.0f : std::nearbyint(v);
    y[i] = static_cast<Code>(std::clamp(rounded + z, lo, hi));
  }
}

// The same IEEE operations in every clone (the AVX ones round with
// vroundps where the baseline calls nearbyint), so the same codes.
EULERNPU_SIMD_CLONES
void quantize_floats_to(const float* x, int64_t n, float scale, float z, int8_t* y) {
  quantize_floats(x, n, scale, z, y);
}
EULERNPU_SIMD_CLONES
void quantize_floats_to(const float* x, int64_t n, float scale, float z, uint8_t* y) {
  quantize_floats(x, n, scale, z, y);
}

template <typename Code>
void quantize_per_tensor(const KernelContext& ctx, const float* x, float scale, int32_t zp) {
  Code* y = ctx.outputs[0].as<Code>();
  const auto z = static_cast<float>(zp);
  const int64_t n = ctx.outputs[0].count();
  parallel_for(n, threads_for(ctx, n), [&](int64_t begin, int64_t end) {
    quantize_floats_to(x + begin, end - begin, scale, z, y + begin);
  });
}

template <typename Code>
void dequantize_per_tensor(const KernelContext& ctx, float scale, int32_t zp) {
  const Code* x = ctx.inputs[0].as<const Code>();
  float* y = ctx.outputs[0].as<float>();
  const int64_t n = ctx.outputs[0].count();
  parallel_for(n, threads_for(ctx, n), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = static_cast<float>(x[i] - zp) * scale;
  });
}

bool is_code8(int32_t dtype) { return dtype == ENP_DTYPE_INT8 || dtype == ENP_DTYPE_UINT8; }
// --- end of per-tensor 8-bit fast paths

// y = saturate(round_half_even(x / y_scale) + y_zero_point), divided in
// float32 like the reference.
void quantize_linear(const KernelContext& ctx) {
  const Layout l = kernel_layout(ctx);
  const Buffer& out = ctx.outputs[0];
  const float* x = ctx.inputs[0].as<const float>();
  const float* scale = ctx.inputs[1].as<const float>();
  // --- low-precision floats: x / y_scale rounded to nearest even.
  if (const auto format = sdk::lowbit::float_format(out.dtype)) {
    quantize_to_float(ctx, l, *format);
    return;
  }
  // --- end of low-precision floats
  const auto zp = zero_points(ctx, 2, ctx.inputs[1].count());
  if (l.kind == Layout::Kind::kTensor && is_code8(out.dtype) &&
      ctx.inputs[1].dtype == ENP_DTYPE_FLOAT32) {
    (out.dtype == ENP_DTYPE_INT8 ? quantize_per_tensor<int8_t>
                                 : quantize_per_tensor<uint8_t>)(ctx, x, scale[0], zp[0]);
    return;
  }
  const QRange r = range_of(out.dtype);
  for_each_scaled(ctx, l, [&](int64_t i, int64_t s) {
    store_quantized(out, i, requantize(x[i] / scale[s], zp[static_cast<size_t>(s)], r));
  });
}

// y = (x - x_zero_point) * x_scale. The reference subtracts in float32 (an
// exact float64 here for data of up to 16 bits) and multiplies once in
// float32 (a float64 product of two floats rounded once is the same), then
// converts to the output type (float16: from that float32). float8 and
// float4e2m1 x have no zero point to subtract (the reference ignores it) and
// are exact in float32.
void dequantize_linear(const KernelContext& ctx) {
  const Layout l = kernel_layout(ctx);
  const Buffer& x = ctx.inputs[0];
  const Buffer& scale = ctx.inputs[1];
  const Buffer& out = ctx.outputs[0];
  require(kScope, out.dtype == ENP_DTYPE_FLOAT32 || out.dtype == ENP_DTYPE_FLOAT16,
          "DequantizeLinear's output must be float32 or float16");
  const bool half_out = out.dtype == ENP_DTYPE_FLOAT16;
  auto store = [&](int64_t i, int64_t s, double dx) {
    const float y = static_cast<float>(dx * static_cast<double>(scale_at(scale, s)));
    if (half_out) {
      out.as<uint16_t>()[i] = half_from_double(y);
    } else {
      out.as<float>()[i] = y;
    }
  };
  // --- low-precision floats
  if (sdk::lowbit::is_lowbit(x.dtype) && !sdk::lowbit::is_integer(x.dtype)) {
    const auto* px = x.as<const uint8_t>();
    for_each_scaled(
        ctx, l, [&](int64_t i, int64_t s) { store(i, s, sdk::lowbit::decode(x.dtype, px[i])); });
    return;
  }
  // --- end of low-precision floats
  const bool has_zp = ctx.has_input(2);
  const auto zp = zero_points(ctx, 2, scale.count());
  if (l.kind == Layout::Kind::kTensor && is_code8(x.dtype) && !half_out &&
      scale.dtype == ENP_DTYPE_FLOAT32) {
    (x.dtype == ENP_DTYPE_INT8
         ? dequantize_per_tensor<int8_t>
         : dequantize_per_tensor<uint8_t>)(ctx, scale.as<const float>()[0], zp[0]);
    return;
  }
  const std::vector<int32_t> values = widen(x);
  for_each_scaled(ctx, l, [&](int64_t i, int64_t s) {
    const auto v = values[static_cast<size_t>(i)];
    // Without a zero point the reference converts x to float32 first.
    const double dx = has_zp ? static_cast<double>(v) - zp[static_cast<size_t>(s)]
                             : static_cast<double>(static_cast<float>(v));
    store(i, s, dx);
  });
}

// uint8 quantization with a scale and zero point spanning [min(x, 0),
// max(x, 0)], in float32 as the reference computes them. NaNs are left out
// of the range and quantize like 0.
void dynamic_quantize_linear(const KernelContext& ctx) {
  const Buffer& xb = ctx.inputs[0];
  require(kScope,
          ctx.outputs.size() == 3 && ctx.outputs[0].shape == xb.shape &&
              ctx.outputs[1].count() == 1 && ctx.outputs[2].count() == 1,
          "DynamicQuantizeLinear's outputs do not match x");
  const float* x = xb.as<const float>();
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < xb.count(); ++i) {
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
  }
  // An all-zero x has an empty range; the reference then uses scale 1.
  const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  const float zp_float = std::clamp(0.0f - lo / scale, 0.0f, 255.0f);
  const auto zp = static_cast<int32_t>(std::nearbyint(zp_float));
  uint8_t* y = ctx.outputs[0].as<uint8_t>();
  parallel_for(xb.count(), threads_for(ctx, xb.count()), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      y[i] = static_cast<uint8_t>(requantize(x[i] / scale, zp, QRange{0, 255}));
    }
  });
  ctx.outputs[1].as<float>()[0] = scale;
  ctx.outputs[2].as<uint8_t>()[0] = static_cast<uint8_t>(zp);
}

// --- integer matrix multiplication ----------------------------------------

// numpy matmul shapes: 1-D operands promoted, batch dims broadcast.
struct MatmulShape {
  Dims a, b;  // promoted to rank >= 2
  Dims batch;
  int64_t m = 0, k = 0, n = 0;
};

MatmulShape matmul_shape(const Dims& a, const Dims& b, const Buffer& out) {
  require(kScope, !a.empty() && !b.empty(), "MatMul inputs must have rank >= 1");
  MatmulShape s{a, b, {}, 0, 0, 0};
  if (s.a.size() == 1) s.a.insert(s.a.begin(), 1);
  if (s.b.size() == 1) s.b.push_back(1);
  s.m = s.a[s.a.size() - 2];
  s.k = s.a.back();
  s.n = s.b.back();
  require(kScope, s.b[s.b.size() - 2] == s.k, "MatMul inner dimensions differ");
  const size_t rank = std::max(s.a.size(), s.b.size()) - 2;
  s.batch.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + s.a.size() - 2 >= rank ? s.a[i + s.a.size() - 2 - rank] : 1;
    const int64_t db = i + s.b.size() - 2 >= rank ? s.b[i + s.b.size() - 2 - rank] : 1;
    require(kScope, da == db || da == 1 || db == 1, "MatMul batch dimensions do not broadcast");
    s.batch[i] = da == 1 ? db : da;
  }
  require(kScope, out.count() == product(s.batch) * s.m * s.n, "MatMul output size differs");
  return s;
}

// x - zero_point in int32, the zero point broadcast numpy-style over `shape`.
std::vector<int32_t> centered(const Buffer& x, const Dims& shape, const Buffer* zp, Dims zp_shape) {
  std::vector<int32_t> v = widen(x);
  if (!zp) return v;
  const std::vector<int32_t> z = widen(*zp);
  if (z.size() == 1) {
    for (int32_t& e : v) e -= z[0];
    return v;
  }
  require(kScope, zp_shape.size() <= shape.size(), "a zero point has a higher rank than its input");
  for (size_t i = 0; i < zp_shape.size(); ++i) {
    const int64_t d = zp_shape[zp_shape.size() - 1 - i];
    require(kScope, d == 1 || d == shape[shape.size() - 1 - i], "a zero point does not broadcast");
  }
  const auto zs = broadcast_strides(zp_shape, shape.size());
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t offset = 0;
  for (int32_t& e : v) {
    e -= z[static_cast<size_t>(offset)];
    for (size_t d = shape.size(); d-- > 0;) {
      offset += zs[d];
      if (++idx[d] < shape[d]) break;
      offset -= zs[d] * idx[d];
      idx[d] = 0;
    }
  }
  return v;
}

// Exact int64 rows of A * B: emit(row, acc) for each of the batch * m
// output rows, acc holding its n sums. Rows split across threads; each sum
// is exact, so the thread count cannot change it.
template <typename Emit>
void int_matmul(const std::vector<int32_t>& a, const std::vector<int32_t>& b, const MatmulShape& s,
                int threads, Emit emit) {
  const size_t rank = s.batch.size();
  const auto sa = broadcast_strides({s.a.begin(), s.a.end() - 2}, rank);
  const auto sb = broadcast_strides({s.b.begin(), s.b.end() - 2}, rank);
  const int64_t rows = product(s.batch) * s.m;
  parallel_for(rows, threads, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> acc(static_cast<size_t>(s.n));
    for (int64_t row = begin; row < end; ++row) {
      int64_t t = row / std::max<int64_t>(s.m, 1), oa = 0, ob = 0;
      for (size_t d = rank; d-- > 0;) {
        const int64_t i = t % s.batch[d];
        t /= s.batch[d];
        oa += i * sa[d];
        ob += i * sb[d];
      }
      const int32_t* pa = a.data() + (oa * s.m + row % s.m) * s.k;
      const int32_t* pb = b.data() + ob * s.k * s.n;
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t kk = 0; kk < s.k; ++kk) {
        const int64_t av = pa[kk];
        if (av == 0) continue;
        const int32_t* brow = pb + kk * s.n;
        for (int64_t j = 0; j < s.n; ++j) acc[static_cast<size_t>(j)] += av * brow[j];
      }
      emit(row, acc.data());
    }
  });
}

// A zero point of A given per row as an M-vector applies along rows.
Dims row_zero_point_shape(const Buffer& zp, int64_t m) {
  if (zp.shape.size() == 1 && zp.shape[0] == m) return {m, 1};
  return zp.shape;
}

void matmul_integer(const KernelContext& ctx) {
  const Buffer& out = ctx.outputs[0];
  const MatmulShape s = matmul_shape(ctx.inputs[0].shape, ctx.inputs[1].shape, out);
  const Buffer* azp = ctx.has_input(2) ? &ctx.inputs[2] : nullptr;
  const Buffer* bzp = ctx.has_input(3) ? &ctx.inputs[3] : nullptr;
  const auto a = centered(ctx.inputs[0], s.a, azp, azp ? row_zero_point_shape(*azp, s.m) : Dims{});
  const auto b = centered(ctx.inputs[1], s.b, bzp, bzp ? bzp->shape : Dims{});
  int32_t* y = out.as<int32_t>();
  int_matmul(a, b, s, threads_for(ctx, out.count() * s.k), [&](int64_t row, const int64_t* acc) {
    for (int64_t j = 0; j < s.n; ++j) y[row * s.n + j] = saturate_int32(acc[j]);
  });
}

// a_scale * b_scale / y_scale, per output column when b is quantized per
// column, in the scales' own type as numpy evaluates it.
std::vector<double> matmul_multipliers(const Buffer& as, const Buffer& bs, const Buffer& ys,
                                       int64_t n) {
  const bool half = bs.dtype == ENP_DTYPE_FLOAT16;
  std::vector<double> m(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    const float b = scale_at(bs, bs.count() == 1 ? 0 : j);
    float v = scale_at(as, 0) * b;
    if (half) v = round_to_half(v);
    v /= scale_at(ys, 0);
    if (half) v = round_to_half(v);
    m[static_cast<size_t>(j)] = v;
  }
  return m;
}

void qlinear_matmul(const KernelContext& ctx) {
  const Buffer& out = ctx.outputs[0];
  const Buffer &ab = ctx.inputs[0], &bb = ctx.inputs[3];
  const MatmulShape s = matmul_shape(ab.shape, bb.shape, out);
  require(kScope,
          ctx.inputs[1].count() == 1 && ctx.inputs[2].count() == 1 && ctx.inputs[6].count() == 1 &&
              ctx.inputs[7].count() == 1,
          "a's and y's scales and zero points must be single values");
  for (size_t i : {size_t{4}, size_t{5}}) {
    require(kScope, ctx.inputs[i].count() == 1 || ctx.inputs[i].count() == s.n,
            "b's scale and zero point must be one value or one per column");
  }
  const auto a = centered(ab, s.a, &ctx.inputs[2], ctx.inputs[2].shape);
  const auto b = centered(bb, s.b, &ctx.inputs[5], ctx.inputs[5].shape);
  const auto mult = matmul_multipliers(ctx.inputs[1], ctx.inputs[4], ctx.inputs[6], s.n);
  const int32_t yzp = widen(ctx.inputs[7])[0];
  const QRange r = range_of(out.dtype);
  int_matmul(a, b, s, threads_for(ctx, out.count() * s.k), [&](int64_t row, const int64_t* acc) {
    for (int64_t j = 0; j < s.n; ++j) {
      const double v = static_cast<double>(saturate_int32(acc[j])) * mult[static_cast<size_t>(j)];
      store_quantized(out, row * s.n + j, requantize(v, yzp, r));
    }
  });
}

// --- integer convolution ----------------------------------------------------

// Spatial attributes normalized to three dims (D, H, W), as kernels_conv.cpp
// does: 1-D and 2-D convolutions get leading unit dims.
using Dims3 = std::array<int64_t, 3>;

struct ConvShape {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  Dims3 in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  Dims3 stride{1, 1, 1}, dilation{1, 1, 1}, pad{0, 0, 0};  // begin pads only

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};

Dims3 to3(const Dims& v, int64_t fill) {
  Dims3 d{fill, fill, fill};
  std::copy(v.begin(), v.end(), d.begin() + static_cast<std::ptrdiff_t>(3 - v.size()));
  return d;
}

Dims spatial_attr(const KernelContext& ctx, const char* name, size_t n, int64_t fallback) {
  Dims v = ctx.attr_ints(name, Dims(n, fallback));
  require(kScope, v.size() == n, std::string(name) + " does not match the spatial rank");
  return v;
}

// Begin pads of one axis, and its output size, as the host's shape
// inference computes them.
std::pair<int64_t, int64_t> axis_window(const std::string& auto_pad, int64_t in, int64_t kernel,
                                        int64_t stride, int64_t dilation, int64_t pad_begin,
                                        int64_t pad_end) {
  const int64_t span = dilation * (kernel - 1) + 1;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const int64_t out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>(0, (out - 1) * stride + span - in);
    return {auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2, out};
  }
  if (auto_pad == "VALID") pad_begin = pad_end = 0;
  const int64_t room = in + pad_begin + pad_end - span;
  return {pad_begin, room < 0 ? 0 : room / stride + 1};
}

ConvShape conv_shape(const KernelContext& ctx, const Buffer& x, const Buffer& w, const Buffer& y) {
  const size_t rank = x.shape.size();
  require(kScope, rank >= 3 && rank <= 5 && w.shape.size() == rank && y.shape.size() == rank,
          "X, W and Y must have the same rank, 3 to 5");
  const size_t n = rank - 2;
  ConvShape c;
  c.batch = x.shape[0];
  c.in_channels = x.shape[1];
  c.out_channels = w.shape[0];
  c.group = ctx.attr_int("group", 1);
  require(kScope,
          c.group > 0 && c.out_channels % c.group == 0 && w.shape[1] * c.group == c.in_channels &&
              y.shape[0] == c.batch && y.shape[1] == c.out_channels,
          "channels do not match W and group");
  const Dims in(x.shape.begin() + 2, x.shape.end()), kernel(w.shape.begin() + 2, w.shape.end());
  const Dims strides = spatial_attr(ctx, "strides", n, 1);
  const Dims dilations = spatial_attr(ctx, "dilations", n, 1);
  const Dims pads = spatial_attr(ctx, "pads", 2 * n, 0);
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  Dims begin(n);
  for (size_t i = 0; i < n; ++i) {
    require(kScope, strides[i] > 0 && dilations[i] > 0, "strides and dilations must be positive");
    const auto [pad, out] =
        axis_window(auto_pad, in[i], kernel[i], strides[i], dilations[i], pads[i], pads[i + n]);
    require(kScope, out == y.shape[i + 2],
            "the output's spatial dims differ from the convolution's");
    begin[i] = pad;
  }
  c.in = to3(in, 1);
  c.out = to3({y.shape.begin() + 2, y.shape.end()}, 1);
  c.kernel = to3(kernel, 1);
  c.stride = to3(strides, 1);
  c.dilation = to3(dilations, 1);
  c.pad = to3(begin, 0);
  return c;
}

// Unfolds `channels` planes of centered X into int32 columns: row (c, kd,
// kh, kw), column (od, oh, ow); padding reads as 0, i.e. as the zero point.
void im2col(const int32_t* x, const ConvShape& g, int64_t channels, int32_t* col, int threads) {
  const int64_t ksize = g.kernel_size(), in_size = g.in_size(), out_size = g.out_size();
  const int64_t k1 = g.kernel[1], k2 = g.kernel[2];
  parallel_for(channels * ksize, threads, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t kidx = r % ksize;
      const Dims3 k{kidx / (k1 * k2), kidx / k2 % k1, kidx % k2};
      const int32_t* plane = x + r / ksize * in_size;
      int32_t* dst = col + r * out_size;
      for (int64_t o = 0; o < out_size; ++o) {
        const Dims3 pos{o / (g.out[1] * g.out[2]), o / g.out[2] % g.out[1], o % g.out[2]};
        int64_t src = 0;
        bool inside = true;
        for (size_t d = 0; d < 3; ++d) {
          const int64_t i = pos[d] * g.stride[d] - g.pad[d] + k[d] * g.dilation[d];
          inside = inside && i >= 0 && i < g.in[d];
          src = src * g.in[d] + i;
        }
        dst[o] = inside ? plane[src] : 0;
      }
    }
  });
}

// Exact int64 convolution of centered X and W: emit(n, m, acc) for each
// output plane, acc holding its out_size sums.
template <typename Emit>
void int_conv(const std::vector<int32_t>& x, const std::vector<int32_t>& w, const ConvShape& g,
              int threads, Emit emit) {
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  const int64_t in_size = g.in_size(), out_size = g.out_size(), kc = cg * g.kernel_size();
  std::vector<int32_t> col(static_cast<size_t>(kc * out_size));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t gi = 0; gi < g.group; ++gi) {
      im2col(x.data() + (n * g.in_channels + gi * cg) * in_size, g, cg, col.data(), threads);
      parallel_for(mg, threads, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> acc(static_cast<size_t>(out_size));
        for (int64_t m = gi * mg + begin; m < gi * mg + end; ++m) {
          std::fill(acc.begin(), acc.end(), 0);
          const int32_t* wm = w.data() + m * kc;
          for (int64_t kk = 0; kk < kc; ++kk) {
            const int64_t wv = wm[kk];
            if (wv == 0) continue;
            const int32_t* row = col.data() + kk * out_size;
            for (int64_t o = 0; o < out_size; ++o) acc[static_cast<size_t>(o)] += wv * row[o];
          }
          emit(n, m, acc.data());
        }
      });
    }
  }
}

// W minus its zero point, one value or one per output channel.
std::vector<int32_t> centered_weights(const Buffer& w, const Buffer* zp) {
  if (!zp || zp->count() == 1) return centered(w, w.shape, zp, {});
  require(kScope, zp->count() == w.shape[0],
          "W's zero point must be one value or one per output channel");
  Dims per_channel(w.shape.size(), 1);
  per_channel[0] = w.shape[0];
  return centered(w, w.shape, zp, per_channel);
}

int conv_workers(const KernelContext& ctx, const ConvShape& g) {
  return threads_for(ctx, g.batch * g.out_channels * g.out_size() * g.kernel_size());
}

void conv_integer(const KernelContext& ctx) {
  const Buffer &xb = ctx.inputs[0], &wb = ctx.inputs[1], &out = ctx.outputs[0];
  const ConvShape g = conv_shape(ctx, xb, wb, out);
  const Buffer* xzp = ctx.has_input(2) ? &ctx.inputs[2] : nullptr;
  require(kScope, !xzp || xzp->count() == 1, "X's zero point must be one value");
  const auto x = centered(xb, xb.shape, xzp, {});
  const auto w = centered_weights(wb, ctx.has_input(3) ? &ctx.inputs[3] : nullptr);
  int32_t* y = out.as<int32_t>();
  const int64_t plane = g.out_size();
  int_conv(x, w, g, conv_workers(ctx, g), [&](int64_t n, int64_t m, const int64_t* acc) {
    int32_t* dst = y + (n * g.out_channels + m) * plane;
    for (int64_t o = 0; o < plane; ++o) dst[o] = saturate_int32(acc[o]);
  });
}

void qlinear_conv(const KernelContext& ctx) {
  const Buffer &xb = ctx.inputs[0], &wb = ctx.inputs[3], &out = ctx.outputs[0];
  const ConvShape g = conv_shape(ctx, xb, wb, out);
  for (size_t i : {size_t{1}, size_t{2}, size_t{6}, size_t{7}}) {
    require(kScope, ctx.inputs[i].count() == 1,
            "X's and Y's scales and zero points must be single values");
  }
  require(kScope, ctx.inputs[4].count() == 1 || ctx.inputs[4].count() == g.out_channels,
          "W's scale must be one value or one per output channel");
  const auto x = centered(xb, xb.shape, &ctx.inputs[2], {});
  const auto w = centered_weights(wb, &ctx.inputs[5]);
  std::vector<int32_t> bias(static_cast<size_t>(g.out_channels), 0);
  if (ctx.has_input(8)) {
    require(kScope, ctx.inputs[8].count() == g.out_channels,
            "B must have one value per output channel");
    bias = widen(ctx.inputs[8]);
  }
  std::vector<double> mult(static_cast<size_t>(g.out_channels));
  for (int64_t m = 0; m < g.out_channels; ++m) {
    const float ws = scale_at(ctx.inputs[4], ctx.inputs[4].count() == 1 ? 0 : m);
    mult[static_cast<size_t>(m)] = scale_at(ctx.inputs[1], 0) * ws / scale_at(ctx.inputs[6], 0);
  }
  const int32_t yzp = widen(ctx.inputs[7])[0];
  const QRange r = range_of(out.dtype);
  const int64_t plane = g.out_size();
  int_conv(x, w, g, conv_workers(ctx, g), [&](int64_t n, int64_t m, const int64_t* acc) {
    const int64_t base = (n * g.out_channels + m) * plane;
    const auto mi = static_cast<size_t>(m);
    for (int64_t o = 0; o < plane; ++o) {
      const int32_t sum = saturate_int32(acc[o] + bias[mi]);
      store_quantized(out, base + o, requantize(static_cast<double>(sum) * mult[mi], yzp, r));
    }
  });
}

// --- lowering checks --------------------------------------------------------

std::string dtype_problem(size_t input, int32_t dtype, const char* allowed) {
  return "input " + std::to_string(input) + " is " + sdk::dtype_name(dtype) + " (" + allowed +
         " only)";
}

bool is_quant8(int32_t dtype) { return (kQuant8 & ENP_DTYPE_BIT(dtype)) != 0; }

// Input i, if given, must be int8/uint8 (`same_as`: of that exact dtype).
std::optional<std::string> quant8_input(const sdk::NodeView& node, const sdk::GraphView& g,
                                        size_t i, int32_t same_as = ENP_DTYPE_UNDEFINED) {
  if (node.input(i).empty()) return std::nullopt;
  const int32_t d = dtype_of(g, node.input(i));
  if (same_as != ENP_DTYPE_UNDEFINED && d != same_as) {
    return "input " + std::to_string(i) + " is " + sdk::dtype_name(d) + "; it must be " +
           sdk::dtype_name(same_as) + " like the tensor it quantizes";
  }
  if (!is_quant8(d)) return dtype_problem(i, d, "int8, uint8");
  return std::nullopt;
}

std::optional<std::string> float_input(const sdk::NodeView& node, const sdk::GraphView& g,
                                       size_t i) {
  const int32_t d = dtype_of(g, node.input(i));
  if (d != ENP_DTYPE_FLOAT32) return dtype_problem(i, d, "float32");
  return std::nullopt;
}

// The scale (input 1) and zero point (input 2) of QuantizeLinear and
// DequantizeLinear fit x.
std::optional<std::string> layout_problem(const sdk::NodeView& node, const sdk::GraphView& g) {
  Layout l;
  const Dims x = shape_of(g, node.input(0)), scale = shape_of(g, node.input(1));
  if (auto why = layout_of(x, scale, node.attr_int("axis", 1), node.attr_int("block_size", 0), l)) {
    return why;
  }
  if (node.input(2).empty()) return std::nullopt;
  const Dims zp = shape_of(g, node.input(2));
  const bool ok = l.kind == Layout::Kind::kTensor ? product(zp) == 1 : zp == scale;
  if (!ok)
    return "zero point " + sdk::shape_string(zp) + " differs from scale " +
           sdk::shape_string(scale);
  return std::nullopt;
}

// QuantizeLinear's outputs and DequantizeLinear's inputs beyond int8/uint8.
constexpr uint32_t kQuantWide =
    ENP_DTYPE_BIT(ENP_DTYPE_INT16) | ENP_DTYPE_BIT(ENP_DTYPE_UINT16) | kLowBitInts | kLowBitFloats;
constexpr const char* kQuantTypes =
    "int8, uint8, int16, uint16, int4, uint4, int2, uint2, float8e4m3fn, float8e4m3fnuz, "
    "float8e5m2, float8e5m2fnuz, float4e2m1";

bool is_quant_type(int32_t dtype) {
  return dtype > 0 && dtype < 32 && ((kQuant8 | kQuantWide) & ENP_DTYPE_BIT(dtype)) != 0;
}

std::optional<std::string> quantize_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (auto why = float_input(node, g, 1)) return why;
  const int32_t out = dtype_of(g, node.output(0));
  if (!is_quant_type(out)) {
    return std::string("quantizing to ") + sdk::dtype_name(out) + " is not supported (" +
           kQuantTypes + " only)";
  }
  // output_dtype (opset 21) names the output type when there is no zero
  // point; shape inference already made the two agree, this keeps an
  // inconsistent graph from lowering.
  const int64_t output_dtype = node.attr_int("output_dtype", 0);
  if (output_dtype != 0 && output_dtype != out) {
    return "output_dtype " + std::to_string(output_dtype) + " differs from the output's dtype " +
           sdk::dtype_name(out);
  }
  if (!node.input(2).empty() && dtype_of(g, node.input(2)) != out) {
    return "the zero point is " + std::string(sdk::dtype_name(dtype_of(g, node.input(2)))) +
           "; it must be " + sdk::dtype_name(out) + " like y";
  }
  const int64_t saturate = node.attr_int("saturate", 1);
  if (saturate != 0 && saturate != 1) {
    return "saturate must be 0 or 1, not " + std::to_string(saturate);
  }
  const int64_t precision = node.attr_int("precision", 0);
  if (precision != 0 && precision != ENP_DTYPE_FLOAT32) {
    return "precision " + std::to_string(precision) + " is not supported (float32 only)";
  }
  return layout_problem(node, g);
}

std::optional<std::string> dequantize_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const int32_t scale = dtype_of(g, node.input(1));
  if (scale != ENP_DTYPE_FLOAT32 && scale != ENP_DTYPE_FLOAT16) {
    return dtype_problem(1, scale, "float32, float16");
  }
  const int32_t x = dtype_of(g, node.input(0));
  if (!node.input(2).empty() && dtype_of(g, node.input(2)) != x) {
    return "the zero point's dtype differs from x's";
  }
  const int32_t out = dtype_of(g, node.output(0));
  if (out != ENP_DTYPE_FLOAT32 && out != ENP_DTYPE_FLOAT16) {
    return std::string("output dtype ") + sdk::dtype_name(out) +
           " is not supported (float32, float16 only)";
  }
  return layout_problem(node, g);
}

// Elements of input i (absent: 1).
int64_t count_of(const sdk::NodeView& node, const sdk::GraphView& g, size_t i) {
  return node.input(i).empty() ? 1 : product(shape_of(g, node.input(i)));
}

std::optional<std::string> matmul_integer_check(const sdk::NodeView& node,
                                                const sdk::GraphView& g) {
  if (auto why = quant8_input(node, g, 1)) return why;
  if (auto why = quant8_input(node, g, 2, dtype_of(g, node.input(0)))) return why;
  return quant8_input(node, g, 3, dtype_of(g, node.input(1)));
}

// Scales all float32, or all float16.
std::optional<std::string> scales_problem(const sdk::NodeView& node, const sdk::GraphView& g,
                                          std::initializer_list<size_t> scales, bool allow_half) {
  const int32_t first = dtype_of(g, node.input(*scales.begin()));
  for (size_t i : scales) {
    const int32_t d = dtype_of(g, node.input(i));
    const bool ok = d == ENP_DTYPE_FLOAT32 || (allow_half && d == ENP_DTYPE_FLOAT16);
    if (!ok) return dtype_problem(i, d, allow_half ? "float32, float16" : "float32");
    if (d != first) return "the scales have different dtypes";
  }
  return std::nullopt;
}

std::optional<std::string> qlinear_matmul_check(const sdk::NodeView& node,
                                                const sdk::GraphView& g) {
  if (auto why = scales_problem(node, g, {1, 4, 6}, true)) return why;
  if (auto why = quant8_input(node, g, 3)) return why;
  if (auto why = quant8_input(node, g, 2, dtype_of(g, node.input(0)))) return why;
  if (auto why = quant8_input(node, g, 5, dtype_of(g, node.input(3)))) return why;
  if (auto why = quant8_input(node, g, 7)) return why;
  for (size_t i : {size_t{1}, size_t{2}, size_t{6}, size_t{7}}) {
    if (count_of(node, g, i) != 1) {
      return "input " + std::to_string(i) + " must hold one value (per-tensor quantization)";
    }
  }
  const Dims b = shape_of(g, node.input(3));
  for (size_t i : {size_t{4}, size_t{5}}) {
    const int64_t c = count_of(node, g, i);
    if (c != 1 && (b.empty() || c != b.back())) {
      return "input " + std::to_string(i) + " must hold one value or one per column of b";
    }
  }
  return std::nullopt;
}

// Shared by ConvInteger and QLinearConv: 1-3 spatial dims, W's kernel.
std::optional<std::string> conv_problem(const sdk::NodeView& node, const sdk::GraphView& g,
                                        size_t w_input) {
  const Dims x = shape_of(g, node.input(0)), w = shape_of(g, node.input(w_input));
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size()) {
    return "only 1-D, 2-D and 3-D convolutions are supported";
  }
  const auto kernel = node.attr_ints("kernel_shape");
  if (!kernel.empty() && !std::equal(kernel.begin(), kernel.end(), w.begin() + 2, w.end())) {
    return "kernel_shape " + sdk::shape_string(kernel) + " differs from W's spatial dims";
  }
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return "auto_pad '" + auto_pad + "' is not supported";
  }
  const int64_t per_channel = count_of(node, g, w_input + 2);
  if (per_channel != 1 && per_channel != w[0]) {
    return "W's zero point must hold one value or one per output channel";
  }
  return std::nullopt;
}

std::optional<std::string> conv_integer_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (auto why = quant8_input(node, g, 1)) return why;
  if (auto why = quant8_input(node, g, 2, dtype_of(g, node.input(0)))) return why;
  if (auto why = quant8_input(node, g, 3, dtype_of(g, node.input(1)))) return why;
  if (count_of(node, g, 2) != 1) return "X's zero point must hold one value";
  return conv_problem(node, g, 1);
}

std::optional<std::string> qlinear_conv_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (auto why = scales_problem(node, g, {1, 4, 6}, false)) return why;
  if (auto why = quant8_input(node, g, 3)) return why;
  if (auto why = quant8_input(node, g, 2, dtype_of(g, node.input(0)))) return why;
  if (auto why = quant8_input(node, g, 5, dtype_of(g, node.input(3)))) return why;
  if (auto why = quant8_input(node, g, 7)) return why;
  if (!node.input(8).empty() && dtype_of(g, node.input(8)) != ENP_DTYPE_INT32) {
    return dtype_problem(8, dtype_of(g, node.input(8)), "int32");
  }
  for (size_t i : {size_t{1}, size_t{2}, size_t{6}, size_t{7}}) {
    if (count_of(node, g, i) != 1) {
      return "input " + std::to_string(i) + " must hold one value (per-tensor quantization)";
    }
  }
  const int64_t w_scales = count_of(node, g, 4);
  const Dims w = shape_of(g, node.input(3));
  if (w_scales != 1 && (w.empty() || w_scales != w[0])) {
    return "W's scale must hold one value or one per output channel";
  }
  return conv_problem(node, g, 3);
}

}  // namespace

std::vector<OpEntry> quant_ops() {
  constexpr uint32_t kDequant = kQuant8 | ENP_DTYPE_BIT(ENP_DTYPE_INT32) | kQuantWide;
  return {
      {"ConvInteger", 10, 0, kQuant8,
       "1-3 spatial dims, groups, auto_pad; W zero point per tensor or per output channel; "
       "exact int64 sums saturated to int32",
       &conv_integer_check, &conv_integer},
      {"DequantizeLinear", 10, 0, kDequant,
       "per tensor, per axis or blocked; float32 or float16 scale and output; float8 and "
       "float4e2m1 x ignore the zero point",
       &dequantize_check, &dequantize_linear},
      {"DynamicQuantizeLinear", 11, 0, kF32, "uint8; NaNs quantize like 0", nullptr,
       &dynamic_quantize_linear},
      {"MatMulInteger", 10, 0, kQuant8,
       "numpy broadcasting; zero points broadcast (per row / per column); int32 saturated",
       &matmul_integer_check, &matmul_integer},
      {"QLinearConv", 10, 0, kQuant8,
       "1-3 spatial dims, groups, auto_pad; W scale/zero point per tensor or per output channel; "
       "float32 scales",
       &qlinear_conv_check, &qlinear_conv},
      {"QLinearMatMul", 10, 0, kQuant8,
       "numpy broadcasting; b per tensor or per column; float32 or float16 scales",
       &qlinear_matmul_check, &qlinear_matmul},
      {"QuantizeLinear", 10, 0, kF32,
       "to (u)int8/16/4/2, float8, float4e2m1; per tensor, per axis or blocked; float32 scale; "
       "NaN quantizes like 0 for integers",
       &quantize_check, &quantize_linear},
  };
}

}  // namespace eulernpu::kit
