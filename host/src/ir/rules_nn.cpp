// Rules of the neural-network ops: GEMM-shaped, convolution, pooling and
// resizing, with ONNX's padding rules (explicit pads, SAME_UPPER/LOWER,
// VALID, ceil_mode).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

ValueType unknown_like(const ValueType& t) { return ValueType{t.dtype, {}, false}; }

void matmul(InferContext& ctx) {
  const ValueType& a = ctx.input(0);
  const ValueType& b = ctx.input(1);
  if (!a.known || !b.known) return ctx.set_output(0, unknown_like(a));
  ctx.require(!a.dims.empty() && !b.dims.empty(), "MatMul inputs must have rank >= 1");
  std::vector<int64_t> da = a.dims, db = b.dims;
  const bool a1 = da.size() == 1, b1 = db.size() == 1;
  if (a1) da.insert(da.begin(), 1);
  if (b1) db.push_back(1);
  const int64_t k1 = da.back(), k2 = db[db.size() - 2];
  if (k1 >= 0 && k2 >= 0 && k1 != k2) {
    ctx.fail("inner dimensions differ: " + shape_string(a.dims) + " x " + shape_string(b.dims));
  }
  auto batch = broadcast_shapes({da.begin(), da.end() - 2}, {db.begin(), db.end() - 2});
  if (!batch)
    ctx.fail("batch dimensions do not broadcast: " + shape_string(a.dims) + " x " +
             shape_string(b.dims));
  std::vector<int64_t> out = *batch;
  if (!a1) out.push_back(da[da.size() - 2]);
  if (!b1) out.push_back(db.back());
  ctx.set_output(0, ValueType{a.dtype, out, true});
}

void gemm(InferContext& ctx) {
  const ValueType& a = ctx.input(0);
  const ValueType& b = ctx.input(1);
  if (!a.known || !b.known) return ctx.set_output(0, unknown_like(a));
  ctx.require(a.dims.size() == 2 && b.dims.size() == 2, "Gemm inputs A and B must be 2-D");
  const bool ta = ctx.attr_int("transA", 0) != 0, tb = ctx.attr_int("transB", 0) != 0;
  const int64_t m = ta ? a.dims[1] : a.dims[0], ka = ta ? a.dims[0] : a.dims[1];
  const int64_t kb = tb ? b.dims[1] : b.dims[0], n = tb ? b.dims[0] : b.dims[1];
  if (ka >= 0 && kb >= 0 && ka != kb) {
    ctx.fail("inner dimensions differ: A " + shape_string(a.dims) + (ta ? "ᵀ" : "") + " x B " +
             shape_string(b.dims) + (tb ? "ᵀ" : ""));
  }
  if (ctx.has_input(2) && ctx.input(2).known) {
    auto c = broadcast_shapes(ctx.input(2).dims, {m, n});
    ctx.require(c && (*c == std::vector<int64_t>{m, n} || m < 0 || n < 0),
                "C " + shape_string(ctx.input(2).dims) + " does not broadcast to (" +
                    std::to_string(m) + ", " + std::to_string(n) + ")");
  }
  ctx.set_output(0, ValueType{a.dtype, {m, n}, true});
}

// Output size of one spatial axis of a sliding window.
int64_t window_out(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin,
                   int64_t pad_end, bool ceil_mode) {
  if (in < 0 || kernel < 0) return -1;
  const int64_t span = dilation * (kernel - 1) + 1;
  const int64_t num = in + pad_begin + pad_end - span;
  if (num < 0) return 0;
  int64_t out = (ceil_mode ? (num + stride - 1) / stride : num / stride) + 1;
  // ceil_mode never starts a window inside the end padding only.
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
};

// Resolves auto_pad into explicit pads, as ONNX defines it.
Window window(InferContext& ctx, const std::vector<int64_t>& spatial_in,
              std::vector<int64_t> kernel) {
  const size_t n = spatial_in.size();
  Window w;
  w.kernel = std::move(kernel);
  w.strides = ctx.attr_ints("strides", std::vector<int64_t>(n, 1));
  w.dilations = ctx.attr_ints("dilations", std::vector<int64_t>(n, 1));
  w.pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  ctx.require(w.kernel.size() == n && w.strides.size() == n && w.dilations.size() == n &&
                  w.pads.size() == 2 * n,
              "kernel_shape, strides, dilations and pads must match the " + std::to_string(n) +
                  " spatial dimensions");
  for (size_t i = 0; i < n; ++i) {
    // kernel -1: W's spatial dim is unknown; window_out then says unknown.
    ctx.require(w.strides[i] > 0 && w.dilations[i] > 0 && (w.kernel[i] > 0 || w.kernel[i] == -1),
                "kernel, strides and dilations must be positive");
  }
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) {
      if (spatial_in[i] < 0 || w.kernel[i] < 0) continue;
      const int64_t out = (spatial_in[i] + w.strides[i] - 1) / w.strides[i];
      const int64_t total = std::max<int64_t>(
          0, (out - 1) * w.strides[i] + w.dilations[i] * (w.kernel[i] - 1) + 1 - spatial_in[i]);
      const int64_t small = total / 2, big = total - small;
      w.pads[i] = auto_pad == "SAME_UPPER" ? small : big;
      w.pads[i + n] = auto_pad == "SAME_UPPER" ? big : small;
    }
  } else if (auto_pad == "VALID") {
    std::fill(w.pads.begin(), w.pads.end(), 0);
  } else if (auto_pad != "NOTSET") {
    ctx.fail("auto_pad '" + auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
  }
  return w;
}

// Conv's optional B must be (M) when both are known.
void require_bias(InferContext& ctx, int64_t out_channels) {
  if (!ctx.has_input(2) || !ctx.input(2).known) return;
  const auto& b = ctx.input(2).dims;
  ctx.require(b.size() == 1 && (b[0] < 0 || out_channels < 0 || b[0] == out_channels),
              "B " + shape_string(b) + " must have one entry per output channel (" +
                  std::to_string(out_channels) + ")");
}

void conv(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const ValueType& wt = ctx.input(1);
  if (!x.known || !wt.known) return ctx.set_output(0, unknown_like(x));
  ctx.require(x.dims.size() >= 3 && wt.dims.size() == x.dims.size(),
              "X and W must have the same rank, at least 3 (N, C, spatial...)");
  const int64_t group = ctx.attr_int("group", 1);
  ctx.require(group > 0, "group must be positive");
  if (x.dims[1] >= 0 && wt.dims[1] >= 0) {
    ctx.require(x.dims[1] == wt.dims[1] * group,
                "X has " + std::to_string(x.dims[1]) + " channels; W " + shape_string(wt.dims) +
                    " with group " + std::to_string(group) + " needs " +
                    std::to_string(wt.dims[1] * group));
  }
  ctx.require(wt.dims[0] < 0 || wt.dims[0] % group == 0,
              "W's " + std::to_string(wt.dims[0]) + " output channels do not divide into " +
                  std::to_string(group) + " groups");
  require_bias(ctx, wt.dims[0]);
  const std::vector<int64_t> spatial(x.dims.begin() + 2, x.dims.end());
  const Window w =
      window(ctx, spatial, ctx.attr_ints("kernel_shape", {wt.dims.begin() + 2, wt.dims.end()}));
  std::vector<int64_t> out{x.dims[0], wt.dims[0]};
  for (size_t i = 0; i < spatial.size(); ++i) {
    out.push_back(window_out(spatial[i], w.kernel[i], w.strides[i], w.dilations[i], w.pads[i],
                             w.pads[i + spatial.size()], false));
  }
  ctx.set_output(0, ValueType{x.dtype, out, true});
}

void conv_transpose(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const ValueType& wt = ctx.input(1);
  if (!x.known || !wt.known) return ctx.set_output(0, unknown_like(x));
  ctx.require(x.dims.size() >= 3 && wt.dims.size() == x.dims.size(),
              "X and W must have the same rank, at least 3");
  const size_t n = x.dims.size() - 2;
  const int64_t group = ctx.attr_int("group", 1);
  ctx.require(group > 0, "group must be positive");
  ctx.require(x.dims[1] < 0 || wt.dims[0] < 0 || x.dims[1] == wt.dims[0],
              "X has " + std::to_string(x.dims[1]) + " channels; W " + shape_string(wt.dims) +
                  " needs " + std::to_string(wt.dims[0]));
  ctx.require(wt.dims[0] < 0 || wt.dims[0] % group == 0, "W's " + std::to_string(wt.dims[0]) +
                                                             " input channels do not divide into " +
                                                             std::to_string(group) + " groups");
  require_bias(ctx, wt.dims[1] < 0 ? -1 : wt.dims[1] * group);
  const auto kernel = ctx.attr_ints("kernel_shape", {wt.dims.begin() + 2, wt.dims.end()});
  const auto strides = ctx.attr_ints("strides", std::vector<int64_t>(n, 1));
  const auto dilations = ctx.attr_ints("dilations", std::vector<int64_t>(n, 1));
  const auto out_pad = ctx.attr_ints("output_padding", std::vector<int64_t>(n, 0));
  auto pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  ctx.require(kernel.size() == n && strides.size() == n && dilations.size() == n &&
                  out_pad.size() == n && pads.size() == 2 * n,
              "attributes must match the spatial rank");
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "VALID") std::fill(pads.begin(), pads.end(), 0);
  for (size_t i = 0; i < n; ++i) {
    ctx.require(strides[i] > 0 && dilations[i] > 0, "strides and dilations must be positive");
  }
  std::vector<int64_t> out{x.dims[0], wt.dims[1] < 0 ? -1 : wt.dims[1] * group};
  const auto output_shape = ctx.attr_ints("output_shape");
  ctx.require(output_shape.empty() || output_shape.size() >= n,
              "output_shape must have one entry per spatial dim");
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = x.dims[i + 2];
    if (!output_shape.empty()) {
      out.push_back(output_shape[output_shape.size() - n + i]);
    } else if (in < 0 || kernel[i] < 0) {
      out.push_back(-1);
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out.push_back(in * strides[i]);
    } else {
      out.push_back(strides[i] * (in - 1) + out_pad[i] + ((kernel[i] - 1) * dilations[i] + 1) -
                    pads[i] - pads[i + n]);
    }
    ctx.require(out.back() >= -1 && (out.back() >= 0 || in < 0 || kernel[i] < 0),
                "pads make spatial dim " + std::to_string(i) + " of the output negative");
  }
  ctx.set_output(0, ValueType{x.dtype, out, true});
}

void pool(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!x.known) return ctx.set_output(0, unknown_like(x));
  ctx.require(x.dims.size() >= 3, "X must have rank >= 3 (N, C, spatial...)");
  const std::vector<int64_t> spatial(x.dims.begin() + 2, x.dims.end());
  const auto kernel = ctx.attr_ints("kernel_shape");
  ctx.require(kernel.size() == spatial.size(), "kernel_shape must have one entry per spatial dim");
  const Window w = window(ctx, spatial, kernel);
  const bool ceil_mode = ctx.attr_int("ceil_mode", 0) != 0;
  std::vector<int64_t> out{x.dims[0], x.dims[1]};
  for (size_t i = 0; i < spatial.size(); ++i) {
    out.push_back(window_out(spatial[i], w.kernel[i], w.strides[i], w.dilations[i], w.pads[i],
                             w.pads[i + spatial.size()], ceil_mode));
  }
  ctx.set_output(0, ValueType{x.dtype, out, true});
  if (ctx.output_count() > 1) ctx.set_output(1, ValueType{DType::kInt64, out, true});
}

void global_pool(InferContext& ctx) {
  ValueType out = ctx.input(0);
  if (out.known) {
    ctx.require(out.dims.size() >= 3, "X must have rank >= 3");
    for (size_t i = 2; i < out.dims.size(); ++i) out.dims[i] = 1;
  }
  ctx.set_output(0, out);
}

// Floats of a constant float32/float64 tensor; nullopt if not constant.
std::optional<std::vector<double>> constant_floats(const InferContext& ctx, size_t i) {
  const Tensor* t = ctx.constant(i);
  if (!t || (t->dtype != DType::kFloat32 && t->dtype != DType::kFloat64)) return std::nullopt;
  std::vector<double> out;
  for (uint64_t k = 0; k < t->element_count(); ++k) {
    if (t->dtype == DType::kFloat32) {
      float v;
      std::memcpy(&v, t->data.data() + 4 * k, 4);
      out.push_back(v);
    } else {
      double v;
      std::memcpy(&v, t->data.data() + 8 * k, 8);
      out.push_back(v);
    }
  }
  return out;
}

// True if input i is given and not an empty tensor (opsets 11-12 pass an
// empty scales next to sizes).
bool nonempty_input(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return false;
  const ValueType& t = ctx.input(i);
  if (!t.known) return true;
  for (int64_t d : t.dims) {
    if (d == 0) return false;
  }
  return true;
}

// Output dims of Resize/Upsample from per-axis scales: floor(in * scale),
// in double as ONNX's reference computes it.
void scale_dims(InferContext& ctx, const std::vector<double>& scales,
                const std::vector<int64_t>& axes, std::vector<int64_t>& dims) {
  ctx.require(scales.size() == axes.size(), "scales must have one entry per axis");
  for (size_t i = 0; i < axes.size(); ++i) {
    ctx.require(scales[i] > 0, "scales must be positive");
    int64_t& d = dims[static_cast<size_t>(axes[i])];
    if (d < 0) continue;
    const double v = std::floor(static_cast<double>(d) * scales[i]);
    ctx.require(v < 1e15, "scales make the output too large");
    d = static_cast<int64_t>(v);
  }
}

// Resize's sizes, with keep_aspect_ratio_policy: one scale for all axes,
// output rounded half up.
void size_dims(InferContext& ctx, const std::vector<int64_t>& sizes,
               const std::vector<int64_t>& axes, std::vector<int64_t>& dims) {
  ctx.require(sizes.size() == axes.size(), "sizes must have one entry per axis");
  for (int64_t s : sizes) ctx.require(s >= 0, "sizes must not be negative");
  const std::string policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy == "stretch") {
    for (size_t i = 0; i < axes.size(); ++i) dims[static_cast<size_t>(axes[i])] = sizes[i];
    return;
  }
  ctx.require(policy == "not_larger" || policy == "not_smaller",
              "keep_aspect_ratio_policy '" + policy + "' is unknown");
  double scale = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t in = dims[static_cast<size_t>(axes[i])];
    if (in < 0) {
      for (int64_t a : axes) dims[static_cast<size_t>(a)] = -1;
      return;
    }
    if (in == 0) continue;  // stays empty whatever the scale
    const double s = static_cast<double>(sizes[i]) / static_cast<double>(in);
    scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
  }
  if (!std::isfinite(scale)) scale = 0.0;  // every resized axis is empty
  for (int64_t a : axes) {
    int64_t& d = dims[static_cast<size_t>(a)];
    d = static_cast<int64_t>(scale * static_cast<double>(d) + 0.5);
  }
}

// Resize: sizes (input 3) or scales (input 2), or, before opset 11, scales
// as input 1; only the resized axes change. Scales or sizes computed at run
// time leave those axes unknown (the model's declared output may know them).
void resize(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!x.known) return ctx.set_output(0, ValueType{x.dtype, {}, false});
  const auto rank = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> axes = ctx.attr_ints("axes");
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  for (auto& a : axes) a = ctx.axis(a, rank, "axes entry");
  ValueType out{x.dtype, x.dims, true};
  const bool old = ctx.opset() < 11;
  const size_t scales_at = old ? 1 : 2;
  auto unknown_axes = [&] {
    for (int64_t a : axes) out.dims[static_cast<size_t>(a)] = -1;
    ctx.set_output(0, out);
  };
  if (nonempty_input(ctx, scales_at)) {
    const auto scales = constant_floats(ctx, scales_at);
    if (!scales) return unknown_axes();
    scale_dims(ctx, *scales, axes, out.dims);
  } else if (!old && nonempty_input(ctx, 3)) {
    const auto sizes = ctx.constant_ints(3);
    if (!sizes) return unknown_axes();
    size_dims(ctx, *sizes, axes, out.dims);
  } else {
    ctx.fail("Resize needs scales or sizes");
  }
  ctx.set_output(0, out);
}

// Upsample (opsets 7-9): scales as an attribute (7, 8) or input 1 (9).
void upsample(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!x.known) return ctx.set_output(0, ValueType{x.dtype, {}, false});
  std::vector<int64_t> axes;
  for (size_t i = 0; i < x.dims.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  ValueType out{x.dtype, x.dims, true};
  std::optional<std::vector<double>> scales;
  if (ctx.has_attr("scales")) {
    const auto f = ctx.attr_floats("scales");
    scales = std::vector<double>(f.begin(), f.end());
  } else if (ctx.has_input(1)) {
    scales = constant_floats(ctx, 1);
    if (!scales)
      return ctx.set_output(0, ValueType{x.dtype, std::vector<int64_t>(x.dims.size(), -1), true});
  } else {
    ctx.fail("Upsample needs scales");
  }
  scale_dims(ctx, *scales, axes, out.dims);
  ctx.set_output(0, out);
}

}  // namespace

std::vector<OpRule> nn_rules() {
  return {
      {"MatMul", &matmul, nullptr},
      {"Gemm", &gemm, nullptr},
      {"Conv", &conv, nullptr},
      {"ConvTranspose", &conv_transpose, nullptr},
      {"MaxPool", &pool, nullptr},
      {"AveragePool", &pool, nullptr},
      {"LpPool", &pool, nullptr},
      {"GlobalAveragePool", &global_pool, nullptr},
      {"GlobalMaxPool", &global_pool, nullptr},
      {"GlobalLpPool", &global_pool, nullptr},
      {"Resize", &resize, nullptr},
      {"Upsample", &upsample, nullptr},
  };
}

}  // namespace eulernpu::host::ir
