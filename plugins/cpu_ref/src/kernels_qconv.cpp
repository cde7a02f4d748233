// QConv and QConvTranspose of domain ai.eulernpu (docs/quantization.md, "The
// quantized graph"): int8 in, int32 accumulation, one requantization per
// output through eulernpu/sdk/qmath.hpp. Integer sums are exact, so every
// split of the work gives the same bytes.
//
// QConv runs an int8 im2col (padding taps hold x_zero_point, so they add
// (z - z) · w = 0) into qgemm_int8 per group and block of output positions;
// depthwise convolutions (group == C == O) take a direct path over a
// zero-padded centered plane instead, which skips the im2col copy.
// QConvTranspose scatters each input tap into its output plane.
#include <algorithm>
#include <array>

#include "int8_gemm.hpp"
#include "kernel_util.hpp"
#include "qops_util.hpp"

namespace eulernpu::cpu_ref {
namespace {

using namespace qops;  // NOLINT(google-build-using-namespace): one op family
using Dims3 = std::array<int64_t, 3>;

// 1-3 spatial dims, normalized to (D, H, W) with leading unit dims.
struct Geometry {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  Dims3 in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  Dims3 stride{1, 1, 1}, dilation{1, 1, 1}, pad{0, 0, 0};  // begin pads

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};

Dims3 to3(const Dims& v, size_t first, size_t n, int64_t fill) {
  Dims3 d{fill, fill, fill};
  for (size_t i = 0; i < n; ++i) d[3 - n + i] = v[first + i];
  return d;
}

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

// Terms per output and max|W| per output channel.
std::vector<int64_t> conv_max_w(const Geometry& g, const int8_t* w, bool transpose) {
  std::vector<int64_t> out(static_cast<size_t>(g.out_channels), 0);
  const int64_t k = g.kernel_size();
  const int64_t per_group = g.out_channels / g.group, cg = g.in_channels / g.group;
  const int64_t rows = transpose ? g.in_channels * per_group : g.out_channels;
  const int64_t row_len = transpose ? k : cg * k;
  for (int64_t r = 0; r < rows; ++r) {
    // Transposed W is (C, O/group, kernel): row (c, oc) feeds channel
    // group(c) · O/group + oc.
    const int64_t o = transpose ? r / per_group / cg * per_group + r % per_group : r;
    int64_t& m = out[static_cast<size_t>(o)];
    for (int64_t i = 0; i < row_len; ++i) {
      m = std::max<int64_t>(m, std::abs(static_cast<int64_t>(w[r * row_len + i])));
    }
  }
  return out;
}

Problem conv_values(const Geometry& g, const int8_t* w, const int32_t* bias, const int32_t* m,
                    const int32_t* s, bool transpose) {
  if (auto p = multipliers_problem(m, s, g.out_channels)) return p;
  if (!w) return std::nullopt;
  return bound_problem(g.in_channels / g.group * g.kernel_size(), conv_max_w(g, w, transpose),
                       bias);
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
  Geometry g;
  const int8_t *x, *w;
  const int32_t* bias;
  std::vector<qmath::FixedMultiplier> m;
  QGemmOutput q;
  int8_t* y;
  Int8GemmIsa isa = Int8GemmIsa::kAuto;
};

ConvCall conv_call(const KernelContext& ctx, bool transpose, const char* op) {
  ConvCall c{};
  require_shapes(op, conv_problem(KernelAttrs{ctx}, buffer_operands(ctx.inputs),
                                  buffer_operands(ctx.outputs), transpose, c.g));
  const auto* m = ctx.inputs[3].as<int32_t>();
  const auto* s = ctx.inputs[4].as<int32_t>();
  c.x = ctx.inputs[0].as<int8_t>();
  c.w = ctx.inputs[1].as<int8_t>();
  c.bias = ctx.inputs[2].as<int32_t>();
  require_values(op, conv_values(c.g, c.w, c.bias, m, s, transpose));
  for (int64_t o = 0; o < c.g.out_channels; ++o) c.m.push_back(fixed(m[o], s[o]));
  c.q.x_zero_point = static_cast<int32_t>(ctx.attr_int("x_zero_point", 0));
  c.q.y_zero_point = static_cast<int32_t>(ctx.attr_int("y_zero_point", 0));
  c.q.qmin = static_cast<int32_t>(ctx.attr_int("qmin", -128));
  c.q.qmax = static_cast<int32_t>(ctx.attr_int("qmax", 127));
  c.y = ctx.outputs[0].as<int8_t>();
  c.isa = ctx.int8_gemm_isa;
  return c;
}

// Indexes i in [0, n) with 0 <= i · stride + offset < limit.
std::pair<int64_t, int64_t> reaching(int64_t n, int64_t stride, int64_t offset, int64_t limit) {
  // ceil(-offset / stride) and ceil((limit - offset) / stride), for stride > 0.
  auto ceil_div = [](int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); };
  return {std::clamp<int64_t>(ceil_div(-offset, stride), 0, n),
          std::clamp<int64_t>(ceil_div(limit - offset, stride), 0, n)};
}

// Columns [p0, p0 + width) of the im2col matrix of `channels` planes of X:
// row (c, kd, kh, kw), padding taps hold the zero point. Each row is filled
// in runs along one output row, where the input index moves by the stride:
// zero point before and after the taps inside X, a copy in between (the
// per-element bounds checks cost several times the int8 GEMM itself).
void im2col_block(const int8_t* x, const Geometry& g, int64_t channels, int64_t p0, int64_t width,
                  int8_t zero_point, int8_t* col) {
  const int64_t ksize = g.kernel_size(), in_size = g.in_size();
  for (int64_t r = 0; r < channels * ksize; ++r) {
    const int64_t t = r % ksize;
    const Dims3 off{t / (g.kernel[1] * g.kernel[2]) * g.dilation[0],
                    t / g.kernel[2] % g.kernel[1] * g.dilation[1], t % g.kernel[2] * g.dilation[2]};
    const int8_t* plane = x + r / ksize * in_size;
    int8_t* dst = col + r * width;
    for (int64_t j = 0; j < width;) {
      const int64_t p = p0 + j, o2 = p % g.out[2], o01 = p / g.out[2];
      const int64_t run = std::min(width - j, g.out[2] - o2);
      const int64_t i0 = o01 / g.out[1] * g.stride[0] - g.pad[0] + off[0];
      const int64_t i1 = o01 % g.out[1] * g.stride[1] - g.pad[1] + off[1];
      int8_t* d = dst + j;
      j += run;
      if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1]) {
        std::fill_n(d, run, zero_point);
        continue;
      }
      const int8_t* src = plane + (i0 * g.in[1] + i1) * g.in[2];
      const int64_t s2 = g.stride[2], first = o2 * s2 - g.pad[2] + off[2];
      const auto [lo, hi] = reaching(run, s2, first, g.in[2]);
      std::fill_n(d, lo, zero_point);
      if (s2 == 1) {
        std::copy_n(src + first + lo, hi - lo, d + lo);
      } else {
        for (int64_t e = lo; e < hi; ++e) d[e] = src[first + e * s2];
      }
      std::fill_n(d + hi, run - hi, zero_point);
    }
  }
}

// The general path: per (image, group, block of output positions), an
// im2col block and one qgemm_int8. Blocks are sized by the shape alone.
void qconv_im2col(const ConvCall& c, int threads) {
  const Geometry& g = c.g;
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  const int64_t kc = cg * g.kernel_size(), plane = g.out_size();
  // A block's columns (kc × width int8) stay cache-sized.
  const int64_t width =
      std::min(plane, std::clamp<int64_t>(65536 / std::max<int64_t>(kc, 1), 32, 1024));
  if (width == 0) return;
  const int64_t blocks = (plane + width - 1) / width;
  parallel_tasks(g.batch * g.group * blocks, threads, [&](int64_t task) {
    const int64_t b = task % blocks, gi = task / blocks % g.group, n = task / blocks / g.group;
    const int64_t p0 = b * width, cols = std::min(width, plane - p0);
    std::vector<int8_t> col(static_cast<size_t>(kc * cols));
    std::vector<int8_t> out(static_cast<size_t>(mg * cols));
    im2col_block(c.x + (n * g.in_channels + gi * cg) * g.in_size(), g, cg, p0, cols,
                 static_cast<int8_t>(c.q.x_zero_point), col.data());
    qgemm_int8({mg, kc, cols}, c.w + gi * mg * kc, col.data(), c.bias + gi * mg,
               c.m.data() + gi * mg, c.q, out.data(), c.isa);
    for (int64_t o = 0; o < mg; ++o) {
      std::copy_n(out.data() + o * cols, cols,
                  c.y + (n * g.out_channels + gi * mg + o) * plane + p0);
    }
  });
}

// Depthwise (one input and one output channel per group): per plane, X
// minus its zero point in a zero-padded buffer, then a multiply-add per tap
// along output rows, with no bounds checks inside.
void qconv_depthwise(const ConvCall& c, int threads) {
  const Geometry& g = c.g;
  Dims3 padded{};
  for (size_t d = 0; d < 3; ++d) {
    padded[d] = std::max(g.in[d] + g.pad[d],
                         (g.out[d] - 1) * g.stride[d] + (g.kernel[d] - 1) * g.dilation[d] + 1);
  }
  if (g.out_size() == 0) return;
  const int64_t ksize = g.kernel_size();
  parallel_tasks(g.batch * g.in_channels, threads, [&](int64_t task) {
    const int64_t ch = task % g.in_channels;
    std::vector<int32_t> xp(static_cast<size_t>(padded[0] * padded[1] * padded[2]), 0);
    const int8_t* x = c.x + task * g.in_size();
    for (int64_t i0 = 0; i0 < g.in[0]; ++i0) {
      for (int64_t i1 = 0; i1 < g.in[1]; ++i1) {
        const int8_t* src = x + (i0 * g.in[1] + i1) * g.in[2];
        int32_t* dst =
            xp.data() + ((i0 + g.pad[0]) * padded[1] + i1 + g.pad[1]) * padded[2] + g.pad[2];
        for (int64_t i2 = 0; i2 < g.in[2]; ++i2) dst[i2] = src[i2] - c.q.x_zero_point;
      }
    }
    const int8_t* w = c.w + ch * ksize;
    int8_t* y = c.y + task * g.out_size();
    std::vector<int32_t> acc(static_cast<size_t>(g.out[2]));
    for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
        std::fill(acc.begin(), acc.end(), c.bias[ch]);
        for (int64_t t = 0; t < ksize; ++t) {
          const int32_t wv = w[t];
          if (wv == 0) continue;
          const int64_t k0 = t / (g.kernel[1] * g.kernel[2]), k1 = t / g.kernel[2] % g.kernel[1];
          const int64_t k2 = t % g.kernel[2];
          const int32_t* row = xp.data() +
                               ((o0 * g.stride[0] + k0 * g.dilation[0]) * padded[1] +
                                o1 * g.stride[1] + k1 * g.dilation[1]) *
                                   padded[2] +
                               k2 * g.dilation[2];
          const int64_t s2 = g.stride[2];
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            acc[static_cast<size_t>(o2)] += wv * row[o2 * s2];
          }
        }
        int8_t* dst = y + (o0 * g.out[1] + o1) * g.out[2];
        for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
          dst[o2] = static_cast<int8_t>(qmath::requantize(acc[static_cast<size_t>(o2)],
                                                          c.m[static_cast<size_t>(ch)],
                                                          c.q.y_zero_point, c.q.qmin, c.q.qmax));
        }
      }
    }
  });
}

void qconv(const KernelContext& ctx) {
  const ConvCall c = conv_call(ctx, false, "QConv");
  const Geometry& g = c.g;
  const int threads = threads_for(
      ctx, g.batch * g.out_channels * g.out_size() * (g.in_channels / g.group) * g.kernel_size());
  if (g.group == g.in_channels && g.group == g.out_channels) {
    qconv_depthwise(c, threads);
  } else {
    qconv_im2col(c, threads);
  }
}

// Per output plane (image, output channel): Bias, plus every input tap of
// the group that reaches it, then the requantization.
void qconv_transpose(const KernelContext& ctx) {
  const ConvCall c = conv_call(ctx, true, "QConvTranspose");
  const Geometry& g = c.g;
  const int64_t cg = g.in_channels / g.group, og = g.out_channels / g.group;
  const int64_t ksize = g.kernel_size(), in_size = g.in_size(), plane = g.out_size();
  const int threads = threads_for(ctx, g.batch * g.in_channels * in_size * og * ksize);
  parallel_tasks(g.batch * g.out_channels, threads, [&](int64_t task) {
    const int64_t n = task / g.out_channels, o = task % g.out_channels;
    const int64_t gi = o / og, oc = o % og;
    std::vector<int32_t> acc(static_cast<size_t>(plane), c.bias[o]);
    std::vector<int32_t> xc(static_cast<size_t>(in_size));
    for (int64_t ci = gi * cg; ci < (gi + 1) * cg; ++ci) {
      const int8_t* x = c.x + (n * g.in_channels + ci) * in_size;
      for (int64_t i = 0; i < in_size; ++i) xc[static_cast<size_t>(i)] = x[i] - c.q.x_zero_point;
      const int8_t* w = c.w + (ci * og + oc) * ksize;
      for (int64_t t = 0; t < ksize; ++t) {
        const int32_t wv = w[t];
        if (wv == 0) continue;
        const Dims3 off{t / (g.kernel[1] * g.kernel[2]) * g.dilation[0] - g.pad[0],
                        t / g.kernel[2] % g.kernel[1] * g.dilation[1] - g.pad[1],
                        t % g.kernel[2] * g.dilation[2] - g.pad[2]};
        const auto r0 = reaching(g.in[0], g.stride[0], off[0], g.out[0]);
        const auto r1 = reaching(g.in[1], g.stride[1], off[1], g.out[1]);
        const auto r2 = reaching(g.in[2], g.stride[2], off[2], g.out[2]);
        for (int64_t i0 = r0.first; i0 < r0.second; ++i0) {
          for (int64_t i1 = r1.first; i1 < r1.second; ++i1) {
            const int32_t* src = xc.data() + (i0 * g.in[1] + i1) * g.in[2];
            // Every index reached is inside the plane (reaching() bounds it).
            const int64_t base =
                ((i0 * g.stride[0] + off[0]) * g.out[1] + i1 * g.stride[1] + off[1]) * g.out[2] +
                off[2];
            for (int64_t i2 = r2.first; i2 < r2.second; ++i2) {
              acc[static_cast<size_t>(base + i2 * g.stride[2])] += wv * src[i2];
            }
          }
        }
      }
    }
    int8_t* y = c.y + task * plane;
    for (int64_t p = 0; p < plane; ++p) {
      y[p] = static_cast<int8_t>(qmath::requantize(acc[static_cast<size_t>(p)],
                                                   c.m[static_cast<size_t>(o)], c.q.y_zero_point,
                                                   c.q.qmin, c.q.qmax));
    }
  });
}

}  // namespace

std::vector<OpEntry> qconv_ops() {
  constexpr uint32_t kI8 = ENP_DTYPE_BIT(ENP_DTYPE_INT8);
  return {
      {"QConv", 1, 0, kI8,
       "1-3 spatial dims, groups (direct path for depthwise), explicit pads; int8 im2col into "
       "the int8 GEMM, int32 accumulation",
       &conv_check<false>, &qconv, kEulerNpuDomain},
      {"QConvTranspose", 1, 0, kI8,
       "1-3 spatial dims, groups, explicit pads and output_padding; direct int32 accumulation",
       &conv_check<true>, &qconv_transpose, kEulerNpuDomain},
  };
}

}  // namespace eulernpu::cpu_ref
