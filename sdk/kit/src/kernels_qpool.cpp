// QAveragePool and QGlobalAveragePool of domain ai.eulernpu
// (docs/quantization.md): cpu_ref's adapter over the reference kernels
// (eulernpu/kernels/pool.hpp), which checks the attributes and operands and
// hands them over as the kernels' typed parameters.
#include <algorithm>
#include <array>

#include "eulernpu/kernels/pool.hpp"
#include "kernel_util.hpp"
#include "qops_util.hpp"

namespace eulernpu::kit {
namespace {

using namespace qops;  // NOLINT(google-build-using-namespace): one op family

// --- QAveragePool, QGlobalAveragePool ---------------------------------------------

using PoolShape = kernels::PoolParams;
using kernels::to3;

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

void qaverage_pool(const KernelContext& ctx) {
  PoolShape sh;
  require_shapes("QAveragePool", pool_shapes(KernelAttrs{ctx}, buffer_operands(ctx.inputs),
                                             buffer_operands(ctx.outputs), sh));
  const auto *m = ctx.inputs[1].as<int32_t>(), *s = ctx.inputs[2].as<int32_t>();
  require_values("QAveragePool", multipliers_problem(m, s, sh.taps + 1));
  sh.x_zero_point = static_cast<int32_t>(ctx.attr_int("x_zero_point", 0));
  sh.y_zero_point = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  std::vector<qmath::FixedMultiplier> mult;
  for (int64_t n = 0; n <= sh.taps; ++n) mult.push_back(fixed(m[n], s[n]));
  kernels::qaverage_pool(sh, ctx.inputs[0].as<int8_t>(), mult.data(), ctx.outputs[0].as<int8_t>(),
                         task_runner(ctx));
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
  kernels::GlobalPoolParams p;
  p.planes = xb.shape[0] * xb.shape[1];
  p.size = product(xb.shape.begin() + 2, xb.shape.end());
  p.x_zero_point = static_cast<int32_t>(ctx.attr_int("x_zero_point", 0));
  p.y_zero_point = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  p.multiplier = fixed(ctx.attr_int("multiplier", 0), ctx.attr_int("shift", 1));
  kernels::qglobal_average_pool(p, xb.as<int8_t>(), ctx.outputs[0].as<int8_t>(), task_runner(ctx));
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

}  // namespace eulernpu::kit
