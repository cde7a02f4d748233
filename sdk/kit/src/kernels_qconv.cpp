// QConv and QConvTranspose of domain ai.eulernpu (docs/quantization.md, "The
// quantized graph"): cpu_ref's adapter over the reference kernels
// (eulernpu/kernels/conv.hpp). This file reads and checks the attributes
// and operands — at lowering from the node, at run time from graph.json —
// and turns them into the kernels' typed parameters.
#include <algorithm>
#include <array>
#include <memory>

#include "eulernpu/kernels/conv.hpp"
#include "kernel_util.hpp"
#include "qops_util.hpp"

namespace eulernpu::kit {
namespace {

using namespace qops;  // NOLINT(google-build-using-namespace): one op family
using Geometry = kernels::ConvGeometry;
using kernels::to3;

// Shapes and attributes of QConv (transpose = false) or QConvTranspose;
// fills `g` when there is no problem.
template <typename A>
Problem conv_problem(const A& attrs, const std::vector<Operand>& in,
                     const std::vector<Operand>& out, bool transpose, Geometry& g) {
  if (in.size() != 5 || out.size() != 1) return "takes X, W, Bias, M, S and one output";
  if (auto p = first_of({operand_problem(in, 0, ENP_DTYPE_INT8, "X"),
                         operand_problem(in, 1, ENP_DTYPE_INT8, "W"),
                         operand_problem(out, 0, ENP_DTYPE_INT8, "Y")})) {
    return p;
  }
  const Dims &x = in[0].shape, &w = in[1].shape;
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size()) {
    return "X " + sdk::shape_string(x) + " and W " + sdk::shape_string(w) +
           " must have the same rank, 1 to 3 spatial dims";
  }
  const size_t n = x.size() - 2;
  g.batch = x[0];
  g.in_channels = x[1];
  g.group = attrs.get("group", 1);
  if (g.group <= 0) return "group must be positive";
  if (transpose) {
    g.out_channels = w[1] * g.group;
    if (w[0] != g.in_channels || g.in_channels % g.group != 0) {
      return "X's " + std::to_string(g.in_channels) + " channels do not fit W " +
             sdk::shape_string(w) + " with group " + std::to_string(g.group);
    }
  } else {
    g.out_channels = w[0];
    if (w[1] * g.group != g.in_channels || g.out_channels % g.group != 0) {
      return "X's " + std::to_string(g.in_channels) + " channels do not fit W " +
             sdk::shape_string(w) + " with group " + std::to_string(g.group);
    }
  }
  if (auto p = first_of({operand_problem(in, 2, ENP_DTYPE_INT32, "Bias", g.out_channels),
                         operand_problem(in, 3, ENP_DTYPE_INT32, "M", g.out_channels),
                         operand_problem(in, 4, ENP_DTYPE_INT32, "S", g.out_channels),
                         zero_point_problem(attrs, "x_zero_point"),
                         zero_point_problem(attrs, "y_zero_point"), clamp_problem(attrs)})) {
    return p;
  }
  if (attrs.str("auto_pad", "NOTSET") != "NOTSET") return "auto_pad is not supported";
  if (attrs.has("output_shape")) return "output_shape is not supported";
  const Dims kernel(w.begin() + 2, w.end());
  if (attrs.has("kernel_shape") && attrs.ints("kernel_shape") != kernel) {
    return "kernel_shape differs from W's spatial dims";
  }
  const Dims strides = attrs.ints("strides", Dims(n, 1));
  const Dims dilations = attrs.ints("dilations", Dims(n, 1));
  const Dims pads = attrs.ints("pads", Dims(2 * n, 0));
  const Dims out_pad = attrs.ints("output_padding", Dims(n, 0));
  if (strides.size() != n || dilations.size() != n || pads.size() != 2 * n || out_pad.size() != n) {
    return "strides, dilations, pads and output_padding must match the spatial rank";
  }
  Dims y{g.batch, g.out_channels};
  for (size_t i = 0; i < n; ++i) {
    if (strides[i] <= 0 || dilations[i] <= 0 || kernel[i] <= 0 || pads[i] < 0 || pads[i + n] < 0) {
      return "kernel, strides and dilations must be positive and pads non-negative";
    }
    const int64_t span = dilations[i] * (kernel[i] - 1) + 1;
    if (transpose) {
      if (out_pad[i] < 0 || (out_pad[i] >= strides[i] && out_pad[i] >= dilations[i])) {
        return "output_padding must be smaller than the stride or the dilation";
      }
      y.push_back(strides[i] * (x[i + 2] - 1) + out_pad[i] + span - pads[i] - pads[i + n]);
      if (y.back() < 0) return "pads leave a negative output size";
    } else {
      const int64_t room = x[i + 2] + pads[i] + pads[i + n] - span;
      y.push_back(room < 0 ? 0 : room / strides[i] + 1);
    }
  }
  if (out[0].shape != y) {
    return "Y " + sdk::shape_string(out[0].shape) + " should be " + sdk::shape_string(y);
  }
  g.in = to3(x, 2, n, 1);
  g.out = to3(y, 2, n, 1);
  g.kernel = to3(w, 2, n, 1);
  g.stride = to3(strides, 0, n, 1);
  g.dilation = to3(dilations, 0, n, 1);
  g.pad = to3(pads, 0, n, 0);
  return std::nullopt;
}

Problem conv_values(const Geometry& g, const int8_t* w, const int32_t* bias, const int32_t* m,
                    const int32_t* s, bool transpose) {
  if (auto p = multipliers_problem(m, s, g.out_channels)) return p;
  if (!w) return std::nullopt;
  return bound_problem(g.in_channels / g.group * g.kernel_size(),
                       kernels::conv_max_abs_weight(g, w, transpose), bias);
}

template <bool kTranspose>
std::optional<std::string> conv_check(const sdk::NodeView& node, const sdk::GraphView& graph) {
  Geometry g;
  if (auto p = conv_problem(NodeAttrs{node}, graph_operands(node, graph),
                            graph_operands(node, graph, true), kTranspose, g)) {
    return p;
  }
  return conv_values(g, constant_data<int8_t>(graph, node.input(1), ENP_DTYPE_INT8),
                     constant_data<int32_t>(graph, node.input(2), ENP_DTYPE_INT32),
                     constant_data<int32_t>(graph, node.input(3), ENP_DTYPE_INT32),
                     constant_data<int32_t>(graph, node.input(4), ENP_DTYPE_INT32), kTranspose);
}

// The validated operands of a kernel call.
struct ConvCall {
  kernels::ConvParams p;
  const int8_t *x, *w;
  const int32_t* bias;
  std::vector<qmath::FixedMultiplier> m;
  int8_t* y;
  bool packed = false;  // w and bias: packed weights and offsets
};

// What a QConv keeps per prepared graph where W and the biases are
// weights (KernelContext::cache): that they passed the value checks, and W
// prepared for the direct kernel (null where another runs).
struct QConvCache {
  std::shared_ptr<const kernels::QConvPrepared> prepared;
};

const QConvCache* qconv_cache(const KernelContext& ctx) {
  return ctx.cache && *ctx.cache ? static_cast<const QConvCache*>(ctx.cache->get()) : nullptr;
}

ConvCall conv_call(const KernelContext& ctx, bool transpose, const char* op) {
  ConvCall c{};
  c.packed = !transpose && packed_weights(ctx, op);
  require_shapes(op, conv_problem(KernelAttrs{ctx}, logical_operands(ctx, c.packed),
                                  buffer_operands(ctx.outputs), transpose, c.p.g));
  const auto* m = ctx.inputs[3].as<int32_t>();
  const auto* s = ctx.inputs[4].as<int32_t>();
  c.x = ctx.inputs[0].as<int8_t>();
  c.w = ctx.inputs[1].as<int8_t>();
  c.bias = ctx.inputs[2].as<int32_t>();
  if (c.packed) {
    // Per group, a block of its output channels × (its input channels ·
    // kernel taps); depthwise convs are never packed.
    const Geometry& g = c.p.g;
    if (g.depthwise()) corrupt(op, "a depthwise conv's weights are packed");
    const int64_t block = kernels::packed_weight_bytes(g.out_channels / g.group,
                                                       g.in_channels / g.group * g.kernel_size());
    require_packed_bytes(op, ctx.inputs[1], g.group * block);
    // The offsets replace the biases; the bound was proven before packing.
    require_values(op, multipliers_problem(m, s, g.out_channels));
  } else if (transpose || !qconv_cache(ctx)) {
    // (Where a cache is kept, W, the biases and the multipliers passed in
    // an earlier run.)
    require_values(op, conv_values(c.p.g, c.w, c.bias, m, s, transpose));
  }
  for (int64_t o = 0; o < c.p.g.out_channels; ++o) c.m.push_back(fixed(m[o], s[o]));
  c.p.x_zero_point = static_cast<int32_t>(ctx.attr_int("x_zero_point", 0));
  c.p.y_zero_point = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  c.p.qmin = static_cast<int32_t>(ctx.attr_int("qmin", -128));
  c.p.qmax = static_cast<int32_t>(ctx.attr_int("qmax", 127));
  c.p.isa = ctx.int8_gemm_isa;
  c.y = ctx.outputs[0].as<int8_t>();
  return c;
}

void qconv(const KernelContext& ctx) {
  const ConvCall c = conv_call(ctx, false, "QConv");
  if (c.packed) {
    kernels::qconv_packed(c.p, c.x, c.w, c.bias, c.m.data(), c.y, task_runner(ctx));
    return;
  }
  const QConvCache* cache = qconv_cache(ctx);
  std::shared_ptr<QConvCache> fresh;
  if (!cache) {
    fresh = std::make_shared<QConvCache>();
    fresh->prepared = kernels::qconv_prepare(c.p, c.w, c.bias);
    cache = fresh.get();
    if (ctx.cache) *ctx.cache = fresh;
  }
  kernels::qconv(c.p, c.x, c.w, c.bias, c.m.data(), c.y, task_runner(ctx), cache->prepared.get());
}

void qconv_transpose(const KernelContext& ctx) {
  const ConvCall c = conv_call(ctx, true, "QConvTranspose");
  kernels::qconv_transpose(c.p, c.x, c.w, c.bias, c.m.data(), c.y, task_runner(ctx));
}

}  // namespace

std::vector<OpEntry> qconv_ops() {
  constexpr uint32_t kI8 = ENP_DTYPE_BIT(ENP_DTYPE_INT8);
  return {
      {"QConv", 1, 0, kI8,
       "1-3 spatial dims, groups (direct path for depthwise), explicit pads; int8 im2col into "
       "the int8 GEMM (with AVX-512 VNNI, direct from the padded input planes), int32 "
       "accumulation",
       &conv_check<false>, &qconv, kEulerNpuDomain},
      {"QConvTranspose", 1, 0, kI8,
       "1-3 spatial dims, groups, explicit pads and output_padding; direct int32 accumulation",
       &conv_check<true>, &qconv_transpose, kEulerNpuDomain},
  };
}

}  // namespace eulernpu::kit
