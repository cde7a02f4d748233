// Pooling kernels: MaxPool (with Indices), AveragePool, LpPool and their
// global forms. Windows follow ONNX: pads never win a max, and an average
// divides by the taps inside the input (count_include_pad = 0) or inside
// the explicitly padded input (count_include_pad = 1); ceil_mode's extra
// end positions never count.
//
// Spatial dims are normalized to three (D, H, W) with leading unit dims, so
// one loop nest serves 1-D, 2-D and 3-D pools.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "eulernpu/kernels/pool.hpp"
#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/status.hpp"
#include "kernel_util.hpp"

namespace eulernpu::kit {
namespace {

// Where this file's corrupt-artifact errors are located.
constexpr std::string_view kScope = "cpu_ref pooling";

using Dims3 = std::array<int64_t, 3>;
constexpr size_t kMaxSpatial = 3;
constexpr uint32_t kF64 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT64);
constexpr uint32_t kI8 = ENP_DTYPE_BIT(ENP_DTYPE_INT8) | ENP_DTYPE_BIT(ENP_DTYPE_UINT8);

// Right-aligns `v` into three dims; the missing leading ones get `fill`.
Dims3 to3(const std::vector<int64_t>& v, int64_t fill) {
  Dims3 d{fill, fill, fill};
  if (v.size() > kMaxSpatial) corrupt(kScope, "more than 3 spatial dims");
  std::copy(v.begin(), v.end(), d.begin() + static_cast<std::ptrdiff_t>(kMaxSpatial - v.size()));
  return d;
}

// The smallest k >= 0 with start + k * step >= limit.
int64_t first_reaching(int64_t start, int64_t step, int64_t limit) {
  return limit - start <= 0 ? 0 : (limit - start + step - 1) / step;
}

// The taps of every output position along one axis.
struct AxisWindows {
  std::vector<int64_t> start;   // input coordinate of tap 0
  std::vector<int64_t> lo, hi;  // taps [lo, hi) fall inside the input
  std::vector<int64_t> padded;  // taps inside the explicitly padded input
};

struct PoolGeometry {
  int64_t planes = 0;  // N * C
  Dims3 in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dilation{1, 1, 1};
  Dims3 pad_begin{0, 0, 0}, pad_end{0, 0, 0};
  std::array<AxisWindows, kMaxSpatial> windows;

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
};

std::vector<int64_t> spatial_attr(const KernelContext& ctx, const char* name, size_t n,
                                  int64_t fallback) {
  auto v = ctx.attr_ints(name, std::vector<int64_t>(n, fallback));
  if (v.size() != n) corrupt(kScope, std::string(name) + " does not match the spatial rank");
  return v;
}

// Explicit pads, or auto_pad's, resolved as the host's shape inference does.
void resolve_pads(const KernelContext& ctx, size_t n, PoolGeometry& g) {
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> pads = spatial_attr(ctx, "pads", 2 * n, 0);
  const size_t lead = kMaxSpatial - n;
  for (size_t i = 0; i < n; ++i) {
    const size_t j = lead + i;
    if (auto_pad == "VALID") {
      pads[i] = pads[i + n] = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = (g.in[j] + g.stride[j] - 1) / g.stride[j];
      const int64_t total = std::max<int64_t>(
          0, (out - 1) * g.stride[j] + g.dilation[j] * (g.kernel[j] - 1) + 1 - g.in[j]);
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + n] = total - pads[i];
    }
  }
  g.pad_begin = to3({pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(n)}, 0);
  g.pad_end = to3({pads.begin() + static_cast<std::ptrdiff_t>(n), pads.end()}, 0);
}

AxisWindows axis_windows(const PoolGeometry& g, size_t a) {
  AxisWindows w;
  for (int64_t o = 0; o < g.out[a]; ++o) {
    const int64_t start = o * g.stride[a] - g.pad_begin[a];
    const int64_t lo = std::min(g.kernel[a], first_reaching(start, g.dilation[a], 0));
    const int64_t hi = std::min(g.kernel[a], first_reaching(start, g.dilation[a], g.in[a]));
    const int64_t padded =
        std::min(g.kernel[a], first_reaching(start, g.dilation[a], g.in[a] + g.pad_end[a]));
    w.start.push_back(start);
    w.lo.push_back(lo);
    w.hi.push_back(std::max(lo, hi));
    w.padded.push_back(
        std::max<int64_t>(0, padded - first_reaching(start, g.dilation[a], -g.pad_begin[a])));
  }
  return w;
}

PoolGeometry pool_geometry(const KernelContext& ctx) {
  const Buffer& x = ctx.inputs[0];
  const Buffer& y = ctx.outputs[0];
  const size_t rank = x.shape.size();
  if (rank < 3 || rank > 2 + kMaxSpatial || y.shape.size() != rank || y.shape[0] != x.shape[0] ||
      y.shape[1] != x.shape[1]) {
    corrupt(kScope, "X and Y must be (N, C, 1 to 3 spatial dims) alike");
  }
  const size_t n = rank - 2;
  PoolGeometry g;
  g.planes = x.shape[0] * x.shape[1];
  g.in = to3({x.shape.begin() + 2, x.shape.end()}, 1);
  g.out = to3({y.shape.begin() + 2, y.shape.end()}, 1);
  g.kernel = to3(spatial_attr(ctx, "kernel_shape", n, 1), 1);
  g.stride = to3(spatial_attr(ctx, "strides", n, 1), 1);
  g.dilation = to3(spatial_attr(ctx, "dilations", n, 1), 1);
  for (size_t i = 0; i < kMaxSpatial; ++i) {
    if (g.kernel[i] <= 0 || g.stride[i] <= 0 || g.dilation[i] <= 0) {
      corrupt(kScope, "kernel_shape, strides and dilations must be positive");
    }
  }
  resolve_pads(ctx, n, g);
  for (size_t a = 0; a < kMaxSpatial; ++a) g.windows[a] = axis_windows(g, a);
  return g;
}

// Calls fn(offset, id, ih, iw) for each in-input tap of output (od, oh, ow),
// in row-major tap order.
template <typename Fn>
void for_each_tap(const PoolGeometry& g, int64_t od, int64_t oh, int64_t ow, Fn&& fn) {
  const auto &wd = g.windows[0], &wh = g.windows[1], &ww = g.windows[2];
  for (int64_t kd = wd.lo[od]; kd < wd.hi[od]; ++kd) {
    const int64_t id = wd.start[od] + kd * g.dilation[0];
    for (int64_t kh = wh.lo[oh]; kh < wh.hi[oh]; ++kh) {
      const int64_t ih = wh.start[oh] + kh * g.dilation[1];
      const int64_t row = (id * g.in[1] + ih) * g.in[2];
      for (int64_t kw = ww.lo[ow]; kw < ww.hi[ow]; ++kw) {
        const int64_t iw = ww.start[ow] + kw * g.dilation[2];
        fn(row + iw, id, ih, iw);
      }
    }
  }
}

// Runs fn(plane, od, oh, ow, out_index) over every output element, split
// by output rows (plane, od, oh) across threads.
template <typename Fn>
void for_each_output(const PoolGeometry& g, int threads, Fn&& fn) {
  const int64_t rows = g.planes * g.out[0] * g.out[1];
  parallel_for(rows, threads, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t oh = r % g.out[1], od = r / g.out[1] % g.out[0];
      const int64_t plane = r / (g.out[0] * g.out[1]);
      for (int64_t ow = 0; ow < g.out[2]; ++ow) fn(plane, od, oh, ow, r * g.out[2] + ow);
    }
  });
}

// Calls f.template operator()<T>() for float, double and, if `with_int8`,
// int8/uint8: the types the pool kernels are built for.
template <typename F>
void dispatch_pool(int32_t dtype, bool with_int8, F&& f) {
  if (with_int8 ? !dispatch_among<float, double, int8_t, uint8_t>(dtype, f)
                : !dispatch_among<float, double>(dtype, f)) {
    corrupt(kScope, std::string("dtype ") + sdk::dtype_name(dtype) + " has no pooling kernel");
  }
}

// Flat index of an input element for MaxPool's Indices: over N x C x spatial,
// spatial row-major (storage_order 0) or column-major (1).
int64_t flat_index(const PoolGeometry& g, int64_t plane, int64_t id, int64_t ih, int64_t iw,
                   bool column_major) {
  const int64_t spatial =
      column_major ? id + (ih + iw * g.in[1]) * g.in[0] : (id * g.in[1] + ih) * g.in[2] + iw;
  return plane * g.in_size() + spatial;
}

// The windows run in the portable kernel (eulernpu/kernels/pool.hpp),
// which int8 backends share; Indices are its argmax in ONNX's numbering.
void max_pool(const KernelContext& ctx) {
  const PoolGeometry g = pool_geometry(ctx);
  const bool column_major = ctx.attr_int("storage_order", 0) != 0;
  int64_t* indices =
      ctx.outputs.size() > 1 && ctx.outputs[1].data ? ctx.outputs[1].as<int64_t>() : nullptr;
  if (indices && ctx.outputs[1].count() != ctx.outputs[0].count()) corrupt(kScope, "Indices shape");
  kernels::PoolParams p;
  p.planes = g.planes;
  p.in = g.in, p.out = g.out, p.kernel = g.kernel, p.stride = g.stride, p.dilation = g.dilation;
  p.pad_begin = g.pad_begin, p.pad_end = g.pad_end;
  dispatch_pool(ctx.inputs[0].dtype, true, [&]<typename T>() {
    kernels::max_pool(p, ctx.inputs[0].as<T>(), ctx.outputs[0].as<T>(), indices, task_runner(ctx));
  });
  if (!indices) return;
  const int64_t per_plane = g.out_size();
  for (int64_t o = 0; o < ctx.outputs[1].count(); ++o) {
    const int64_t at = indices[o];
    if (at < 0) continue;
    const int64_t iw = at % g.in[2], ih = at / g.in[2] % g.in[1], id = at / (g.in[1] * g.in[2]);
    indices[o] = flat_index(g, o / per_plane, id, ih, iw, column_major);
  }
}

void average_pool(const KernelContext& ctx) {
  const PoolGeometry g = pool_geometry(ctx);
  const bool include_pad = ctx.attr_int("count_include_pad", 0) != 0;
  dispatch_pool(ctx.inputs[0].dtype, false, [&]<typename T>() {
    const T* x = ctx.inputs[0].as<T>();
    T* y = ctx.outputs[0].as<T>();
    for_each_output(g, ctx.threads,
                    [&](int64_t plane, int64_t od, int64_t oh, int64_t ow, int64_t o) {
                      const T* px = x + plane * g.in_size();
                      double sum = 0;
                      int64_t taps = 0;
                      for_each_tap(g, od, oh, ow, [&](int64_t off, int64_t, int64_t, int64_t) {
                        sum += static_cast<double>(px[off]);
                        ++taps;
                      });
                      if (include_pad) {
                        const auto& w = g.windows;
                        taps = w[0].padded[od] * w[1].padded[oh] * w[2].padded[ow];
                      }
                      // An empty window gives 0/0 = NaN, as ONNX's reference does.
                      y[o] = static_cast<T>(sum / static_cast<double>(taps));
                    });
  });
}

double lp_norm_p(const KernelContext& ctx) { return ctx.attr_float("p", 2.0); }

// |v|^p with the common exponents exact.
double lp_term(double v, double p) {
  if (p == 2.0) return v * v;
  if (p == 1.0) return std::fabs(v);
  return std::pow(std::fabs(v), p);
}

double lp_root(double sum, double p) {
  if (p == 2.0) return std::sqrt(sum);
  if (p == 1.0) return sum;
  return std::pow(sum, 1.0 / p);
}

void lp_pool(const KernelContext& ctx) {
  const PoolGeometry g = pool_geometry(ctx);
  const double p = lp_norm_p(ctx);
  dispatch_pool(ctx.inputs[0].dtype, false, [&]<typename T>() {
    const T* x = ctx.inputs[0].as<T>();
    T* y = ctx.outputs[0].as<T>();
    for_each_output(g, ctx.threads,
                    [&](int64_t plane, int64_t od, int64_t oh, int64_t ow, int64_t o) {
                      const T* px = x + plane * g.in_size();
                      double sum = 0;
                      for_each_tap(g, od, oh, ow, [&](int64_t off, int64_t, int64_t, int64_t) {
                        sum += lp_term(static_cast<double>(px[off]), p);
                      });
                      y[o] = static_cast<T>(lp_root(sum, p));
                    });
  });
}

// Global pools reduce each (n, c) plane of any spatial rank to one value.
template <typename Reduce>
void global_pool(const KernelContext& ctx, Reduce reduce) {
  const Buffer& x = ctx.inputs[0];
  if (x.shape.size() < 2 || ctx.outputs[0].count() != x.shape[0] * x.shape[1]) {
    corrupt(kScope, "global pool output must be (N, C, 1, ...)");
  }
  const int64_t planes = x.shape[0] * x.shape[1];
  const int64_t size = planes == 0 ? 0 : x.count() / planes;
  dispatch_pool(x.dtype, false, [&]<typename T>() {
    const T* px = x.as<T>();
    T* y = ctx.outputs[0].as<T>();
    parallel_for(planes, ctx.threads, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) y[p] = static_cast<T>(reduce(px + p * size, size));
    });
  });
}

void global_average_pool(const KernelContext& ctx) {
  global_pool(ctx, []<typename T>(const T* v, int64_t n) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(v[i]);
    return sum / static_cast<double>(n);
  });
}

void global_max_pool(const KernelContext& ctx) {
  global_pool(ctx, []<typename T>(const T* v, int64_t n) {
    T best = std::numeric_limits<T>::lowest();
    for (int64_t i = 0; i < n; ++i) best = i == 0 || v[i] > best ? v[i] : best;
    return static_cast<double>(best);
  });
}

void global_lp_pool(const KernelContext& ctx) {
  const double p = lp_norm_p(ctx);
  global_pool(ctx, [p]<typename T>(const T* v, int64_t n) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += lp_term(static_cast<double>(v[i]), p);
    return lp_root(sum, p);
  });
}

std::optional<std::string> rank_problem(const sdk::NodeView& node, const sdk::GraphView& graph,
                                        size_t max_spatial) {
  const auto x = graph.value(node.input(0));
  if (!x || x->dims().size() < 3) return "X must have rank >= 3 (N, C, spatial...)";
  if (x->dims().size() > 2 + max_spatial) {
    return "only 1-D, 2-D and 3-D pooling windows are supported";
  }
  return std::nullopt;
}

std::optional<std::string> pool_check(const sdk::NodeView& node, const sdk::GraphView& graph) {
  if (auto p = rank_problem(node, graph, kMaxSpatial)) return p;
  const size_t n = graph.value(node.input(0))->dims().size() - 2;
  if (node.attr_ints("kernel_shape").size() != n) {
    return "kernel_shape must have one entry per spatial dim";
  }
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return "auto_pad '" + auto_pad + "' is not supported";
  }
  const int64_t order = node.attr_int("storage_order", 0);
  if (order != 0 && order != 1) return "storage_order must be 0 or 1";
  return std::nullopt;
}

std::optional<std::string> p_problem(const sdk::NodeView& node) {
  const enp_attribute_t* p = node.find_attribute("p");
  const double v = !p ? 2.0 : p->type == ENP_ATTR_FLOAT ? p->f : static_cast<double>(p->i);
  if (!(v > 0)) return "p must be positive";
  return std::nullopt;
}

std::optional<std::string> lp_pool_check(const sdk::NodeView& node, const sdk::GraphView& graph) {
  if (auto problem = pool_check(node, graph)) return problem;
  return p_problem(node);
}

std::optional<std::string> global_check(const sdk::NodeView& node, const sdk::GraphView& graph) {
  if (auto problem = rank_problem(node, graph, std::numeric_limits<size_t>::max() - 2)) {
    return problem;
  }
  return node.op_type() == "GlobalLpPool" ? p_problem(node) : std::nullopt;
}

}  // namespace

std::vector<OpEntry> pool_ops() {
  return {
      {"MaxPool", 1, 0, kF32 | kF64 | kI8,
       "1-3 spatial dims; dilations, ceil_mode, storage_order, Indices", &pool_check, &max_pool},
      {"AveragePool", 1, 0, kF32 | kF64, "1-3 spatial dims; count_include_pad, ceil_mode",
       &pool_check, &average_pool},
      {"LpPool", 1, 0, kF32 | kF64, "1-3 spatial dims", &lp_pool_check, &lp_pool},
      {"GlobalAveragePool", 1, 0, kF32 | kF64, "", &global_check, &global_average_pool},
      {"GlobalMaxPool", 1, 0, kF32 | kF64, "", &global_check, &global_max_pool},
      {"GlobalLpPool", 1, 0, kF32 | kF64, "", &global_check, &global_lp_pool},
  };
}

}  // namespace eulernpu::kit
