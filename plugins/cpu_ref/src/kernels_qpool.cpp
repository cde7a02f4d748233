// QAveragePool and QGlobalAveragePool of domain ai.eulernpu
// (docs/quantization.md): int32 sums of X - x_zero_point over each window,
// one requantization per output through eulernpu/sdk/qmath.hpp, with the
// multiplier of the window's tap count n.
#include <algorithm>
#include <array>

#include "kernel_util.hpp"
#include "qops_util.hpp"

namespace eulernpu::cpu_ref {
namespace {

using namespace qops;  // NOLINT(google-build-using-namespace): one op family

// --- QAveragePool, QGlobalAveragePool ---------------------------------------------

using Dims3 = std::array<int64_t, 3>;

struct PoolShape {
  int64_t planes = 0, taps = 0;
  Dims3 in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dilation{1, 1, 1};
  Dims3 pad_begin{0, 0, 0}, pad_end{0, 0, 0};
  bool include_pad = false;
};

Dims3 to3(const Dims& v, size_t first, size_t n, int64_t fill) {
  Dims3 d{fill, fill, fill};
  for (size_t i = 0; i < n; ++i) d[3 - n + i] = v[first + i];
  return d;
}

template <typename A>
Problem pool_shapes(const A& attrs, const std::vector<Operand>& in, const std::vector<Operand>& out,
                    PoolShape& sh) {
  if (auto p = arity<A>(in, out, 3)) return p;
  if (auto p = operand_problem(in, 0, ENP_DTYPE_INT8, "X")) return p;
  const Dims& x = in[0].shape;
  if (x.size() < 3 || x.size() > 5) return "X must have 1 to 3 spatial dims";
  const size_t n = x.size() - 2;
  if (attrs.str("auto_pad", "NOTSET") != "NOTSET") return "auto_pad is not supported";
  const Dims kernel = attrs.ints("kernel_shape");
  const Dims strides = attrs.ints("strides", Dims(n, 1));
  const Dims dilations = attrs.ints("dilations", Dims(n, 1));
  const Dims pads = attrs.ints("pads", Dims(2 * n, 0));
  if (kernel.size() != n || strides.size() != n || dilations.size() != n || pads.size() != 2 * n) {
    return "kernel_shape, strides, dilations and pads must match the spatial rank";
  }
  const int64_t ceil_mode = attrs.get("ceil_mode", 0);
  const int64_t include = attrs.get("count_include_pad", 0);
  if ((ceil_mode != 0 && ceil_mode != 1) || (include != 0 && include != 1)) {
    return "ceil_mode and count_include_pad must be 0 or 1";
  }
  sh.taps = 1;
  Dims y{x[0], x[1]};
  for (size_t i = 0; i < n; ++i) {
    if (kernel[i] <= 0 || kernel[i] > (int64_t{1} << 20) || strides[i] <= 0 || dilations[i] <= 0 ||
        pads[i] < 0 || pads[i + n] < 0) {
      return "kernel, strides and dilations must be positive and pads non-negative";
    }
    sh.taps *= kernel[i];
    if (sh.taps > (int64_t{1} << 20)) return "the kernel has more than 2^20 taps";
    // AveragePool's output size; ceil_mode never starts a window in the end
    // padding only (the host's shape rule, rules_nn.cpp).
    const int64_t span = dilations[i] * (kernel[i] - 1) + 1;
    const int64_t num = x[i + 2] + pads[i] + pads[i + n] - span;
    int64_t o = 0;
    if (num >= 0) {
      o = (ceil_mode ? (num + strides[i] - 1) / strides[i] : num / strides[i]) + 1;
      if (ceil_mode && (o - 1) * strides[i] >= x[i + 2] + pads[i]) --o;
    }
    y.push_back(o);
  }
  sh.planes = x[0] * x[1];
  sh.in = to3(x, 2, n, 1);
  sh.out = to3(y, 2, n, 1);
  sh.kernel = to3(kernel, 0, n, 1);
  sh.stride = to3(strides, 0, n, 1);
  sh.dilation = to3(dilations, 0, n, 1);
  sh.pad_begin = to3(pads, 0, n, 0);
  sh.pad_end = to3(pads, n, n, 0);
  sh.include_pad = include == 1;
  return first_of({operand_problem(in, 1, ENP_DTYPE_INT32, "M", sh.taps + 1),
                   operand_problem(in, 2, ENP_DTYPE_INT32, "S", sh.taps + 1),
                   zero_point_problem(attrs, "x_zero_point"),
                   zero_point_problem(attrs, "y_zero_point"), output_shape_problem(out[0], y)});
}

std::optional<std::string> pool_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  PoolShape sh;
  if (auto p = pool_shapes(NodeAttrs{node}, graph_operands(node, g), graph_operands(node, g, true),
                           sh)) {
    return p;
  }
  return multipliers_problem(constant_data<int32_t>(g, node.input(1), ENP_DTYPE_INT32),
                             constant_data<int32_t>(g, node.input(2), ENP_DTYPE_INT32),
                             sh.taps + 1);
}

// Taps of one axis for output index o: first..last (inclusive, in tap
// steps) inside X, and how many of them count toward n.
struct AxisTaps {
  int64_t first = 0, end = 0, counted = 0;
};

AxisTaps axis_taps(const PoolShape& sh, size_t d, int64_t o) {
  AxisTaps t;
  const int64_t start = o * sh.stride[d] - sh.pad_begin[d];
  t.first = sh.kernel[d];
  for (int64_t k = 0; k < sh.kernel[d]; ++k) {
    const int64_t pos = start + k * sh.dilation[d];
    const bool inside = pos >= 0 && pos < sh.in[d];
    // Padding taps count with count_include_pad; the ceil_mode overhang
    // (past the end padding) never does.
    const bool padded = pos >= -sh.pad_begin[d] && pos < sh.in[d] + sh.pad_end[d];
    if (inside) {
      t.first = std::min(t.first, k);
      t.end = k + 1;
    }
    if (sh.include_pad ? padded : inside) ++t.counted;
  }
  if (t.first >= t.end) t.first = t.end = 0;
  return t;
}

void qaverage_pool(const KernelContext& ctx) {
  PoolShape sh;
  require_shapes("QAveragePool", pool_shapes(KernelAttrs{ctx}, buffer_operands(ctx.inputs),
                                             buffer_operands(ctx.outputs), sh));
  const auto *m = ctx.inputs[1].as<int32_t>(), *s = ctx.inputs[2].as<int32_t>();
  require_values("QAveragePool", multipliers_problem(m, s, sh.taps + 1));
  const int32_t zx = static_cast<int32_t>(ctx.attr_int("x_zero_point", 0));
  const int32_t zy = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  std::array<std::vector<AxisTaps>, 3> taps;
  for (size_t d = 0; d < 3; ++d) {
    for (int64_t o = 0; o < sh.out[d]; ++o) taps[d].push_back(axis_taps(sh, d, o));
  }
  const int64_t in_size = sh.in[0] * sh.in[1] * sh.in[2];
  const int64_t out_size = sh.out[0] * sh.out[1] * sh.out[2];
  const int8_t* x = ctx.inputs[0].as<int8_t>();
  int8_t* y = ctx.outputs[0].as<int8_t>();
  parallel_tasks(sh.planes, threads_for(ctx, sh.planes * out_size * sh.taps), [&](int64_t p) {
    const int8_t* plane = x + p * in_size;
    int8_t* dst = y + p * out_size;
    for (int64_t o0 = 0; o0 < sh.out[0]; ++o0) {
      const AxisTaps& t0 = taps[0][static_cast<size_t>(o0)];
      for (int64_t o1 = 0; o1 < sh.out[1]; ++o1) {
        const AxisTaps& t1 = taps[1][static_cast<size_t>(o1)];
        for (int64_t o2 = 0; o2 < sh.out[2]; ++o2) {
          const AxisTaps& t2 = taps[2][static_cast<size_t>(o2)];
          int32_t acc = 0;
          for (int64_t k0 = t0.first; k0 < t0.end; ++k0) {
            const int64_t i0 = o0 * sh.stride[0] - sh.pad_begin[0] + k0 * sh.dilation[0];
            for (int64_t k1 = t1.first; k1 < t1.end; ++k1) {
              const int64_t i1 = o1 * sh.stride[1] - sh.pad_begin[1] + k1 * sh.dilation[1];
              const int8_t* row = plane + (i0 * sh.in[1] + i1) * sh.in[2];
              for (int64_t k2 = t2.first; k2 < t2.end; ++k2) {
                acc += row[o2 * sh.stride[2] - sh.pad_begin[2] + k2 * sh.dilation[2]] - zx;
              }
            }
          }
          const auto n = static_cast<size_t>(t0.counted * t1.counted * t2.counted);
          dst[(o0 * sh.out[1] + o1) * sh.out[2] + o2] =
              static_cast<int8_t>(qmath::requantize(acc, fixed(m[n], s[n]), zy, -128, 127));
        }
      }
    }
  });
}

template <typename A>
Problem global_pool_shapes(const A& attrs, const std::vector<Operand>& in,
                           const std::vector<Operand>& out) {
  if (auto p = arity<A>(in, out, 1)) return p;
  if (auto p = operand_problem(in, 0, ENP_DTYPE_INT8, "X")) return p;
  const Dims& x = in[0].shape;
  if (x.size() < 3) return "X must have rank >= 3 (N, C, spatial...)";
  Dims y = x;
  std::fill(y.begin() + 2, y.end(), 1);
  const int64_t n = product(x.begin() + 2, x.end());
  if (n > (int64_t{1} << 31) || !qmath::accumulator_fits_int32(n, 255, 1, 0)) {
    return "the spatial size " + std::to_string(n) + " can overflow the int32 accumulator";
  }
  return first_of(
      {zero_point_problem(attrs, "x_zero_point"), zero_point_problem(attrs, "y_zero_point"),
       multiplier_attr_problem(attrs, "multiplier", "shift"), output_shape_problem(out[0], y)});
}

void qglobal_average_pool(const KernelContext& ctx) {
  require_shapes("QGlobalAveragePool",
                 global_pool_shapes(KernelAttrs{ctx}, buffer_operands(ctx.inputs),
                                    buffer_operands(ctx.outputs)));
  const Buffer& xb = ctx.inputs[0];
  const int64_t planes = xb.shape[0] * xb.shape[1];
  const int64_t size = product(xb.shape.begin() + 2, xb.shape.end());
  const int32_t zx = static_cast<int32_t>(ctx.attr_int("x_zero_point", 0));
  const int32_t zy = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  const auto m = fixed(ctx.attr_int("multiplier", 0), ctx.attr_int("shift", 1));
  const int8_t* x = xb.as<int8_t>();
  int8_t* y = ctx.outputs[0].as<int8_t>();
  parallel_for(planes, threads_for(ctx, planes * size), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      int32_t acc = 0;
      for (int64_t i = 0; i < size; ++i) acc += x[p * size + i] - zx;
      y[p] = static_cast<int8_t>(qmath::requantize(acc, m, zy, -128, 127));
    }
  });
}

}  // namespace

std::vector<OpEntry> qpool_ops() {
  constexpr uint32_t kI8 = ENP_DTYPE_BIT(ENP_DTYPE_INT8);
  return {
      {"QAveragePool", 1, 0, kI8,
       "1-3 spatial dims, explicit pads, dilations, ceil_mode, count_include_pad", &pool_check,
       &qaverage_pool, kEulerNpuDomain},
      {"QGlobalAveragePool", 1, 0, kI8, "any spatial rank",
       &shapes_check<&global_pool_shapes<NodeAttrs>>, &qglobal_average_pool, kEulerNpuDomain},
  };
}

}  // namespace eulernpu::cpu_ref
