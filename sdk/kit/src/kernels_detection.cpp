// Detection-style kernels: RoiAlign (avg/max, both coordinate transforms,
// adaptive sampling), MaxUnpool (the inverse of MaxPool's Indices) and
// DeformConv (2-D, offsets, optional mask, groups and offset groups).
//
// RoiAlign follows ONNX's reference bit for bit in its sampling: weights and
// coordinates are computed in double and each bin is reduced in double, so
// float results round once.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/status.hpp"
#include "float16.hpp"
#include "float_storage.hpp"
#include "kernel_util.hpp"

namespace eulernpu::kit {
namespace {

// Where this file's corrupt-artifact errors are located.
constexpr std::string_view kScope = "cpu_ref";

constexpr uint32_t kF16 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT16);
constexpr uint32_t kF64 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT64);
constexpr uint32_t kFloats = kF32 | kF16 | kF64;

std::optional<std::string> require_dtype(const sdk::NodeView& node, const sdk::GraphView& graph,
                                         size_t i, int32_t dtype, const char* what) {
  if (node.input(i).empty()) return std::nullopt;
  const auto v = graph.value(node.input(i));
  if (v && v->dtype() == dtype) return std::nullopt;
  return std::string(what) + " must be " + sdk::dtype_name(dtype);
}

int32_t dtype_of(const sdk::NodeView& node, const sdk::GraphView& graph, size_t i) {
  const auto v = graph.value(node.input(i));
  return v ? v->dtype() : ENP_DTYPE_UNDEFINED;
}

// --- RoiAlign ----------------------------------------------------------------

// One bilinear sample: four flat positions in the H x W plane and weights.
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

// The sample at (y, x), as ONNX's reference: points more than one pixel
// outside the map get zero weights, others clamp to the border.
Sample bilinear_sample(double y, double x, int64_t height, int64_t width) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(height) || x < -1.0 || x > static_cast<double>(width)) {
    return s;
  }
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  auto y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
  int64_t y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<double>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<double>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
  const double hy = 1.0 - ly, hx = 1.0 - lx;
  s.pos[0] = y_low * width + x_low;
  s.pos[1] = y_low * width + x_high;
  s.pos[2] = y_high * width + x_low;
  s.pos[3] = y_high * width + x_high;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

template <typename T>
void roi_align_typed(const KernelContext& ctx) {
  const Buffer &x = ctx.inputs[0], &rois = ctx.inputs[1], &bi = ctx.inputs[2];
  Buffer& y = ctx.outputs[0];
  if (x.shape.size() != 4 || rois.shape.size() != 2 || rois.shape[1] != 4 || y.shape.size() != 4 ||
      bi.count() != rois.shape[0] || y.shape[0] != rois.shape[0] || y.shape[1] != x.shape[1]) {
    corrupt(kScope, "RoiAlign shapes do not agree");
  }
  const int64_t batch = x.shape[0], channels = x.shape[1], height = x.shape[2], width = x.shape[3];
  const int64_t num_rois = rois.shape[0], ph_count = y.shape[2], pw_count = y.shape[3];
  const bool avg = ctx.attr_string("mode", "avg") == "avg";
  // Opset 10 has no coordinate_transformation_mode and behaves as
  // output_half_pixel; opset 16 added it with default half_pixel.
  const bool half_pixel = ctx.opset >= 16 && ctx.attr_string("coordinate_transformation_mode",
                                                             "half_pixel") == "half_pixel";
  const int64_t sampling_ratio = ctx.attr_int("sampling_ratio", 0);
  const double scale = ctx.attr_float("spatial_scale", 1.0);
  const T* xd = x.as<T>();
  const T* rd = rois.as<T>();
  const auto* bd = bi.as<int64_t>();
  T* yd = y.as<T>();
  for (int64_t r = 0; r < num_rois; ++r) {
    if (bd[r] < 0 || bd[r] >= batch) {
      index_out_of_range("RoiAlign: batch_indices[" + std::to_string(r) +
                         "] = " + std::to_string(bd[r]) + " is outside the batch of " +
                         std::to_string(batch));
    }
  }
  parallel_for(num_rois, ctx.threads, [&](int64_t begin, int64_t end) {
    std::vector<Sample> samples;
    for (int64_t r = begin; r < end; ++r) {
      const double offset = half_pixel ? 0.5 : 0.0;
      const double start_w = load(rd[r * 4 + 0]) * scale - offset;
      const double start_h = load(rd[r * 4 + 1]) * scale - offset;
      const double end_w = load(rd[r * 4 + 2]) * scale - offset;
      const double end_h = load(rd[r * 4 + 3]) * scale - offset;
      double roi_w = end_w - start_w, roi_h = end_h - start_h;
      if (!half_pixel) {
        // Malformed ROIs are forced to 1x1, as the reference does.
        roi_w = std::max(roi_w, 1.0);
        roi_h = std::max(roi_h, 1.0);
      }
      const double bin_h = roi_h / static_cast<double>(ph_count);
      const double bin_w = roi_w / static_cast<double>(pw_count);
      const int64_t grid_h =
          sampling_ratio > 0
              ? sampling_ratio
              : static_cast<int64_t>(std::ceil(roi_h / static_cast<double>(ph_count)));
      const int64_t grid_w =
          sampling_ratio > 0
              ? sampling_ratio
              : static_cast<int64_t>(std::ceil(roi_w / static_cast<double>(pw_count)));
      const int64_t gh = std::max<int64_t>(grid_h, 0), gw = std::max<int64_t>(grid_w, 0);
      const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
      // The samples are shared by every channel.
      samples.clear();
      for (int64_t ph = 0; ph < ph_count; ++ph) {
        for (int64_t pw = 0; pw < pw_count; ++pw) {
          for (int64_t iy = 0; iy < gh; ++iy) {
            const double yy = start_h + static_cast<double>(ph) * bin_h +
                              (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(gh);
            for (int64_t ix = 0; ix < gw; ++ix) {
              const double xx = start_w + static_cast<double>(pw) * bin_w +
                                (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(gw);
              samples.push_back(bilinear_sample(yy, xx, height, width));
            }
          }
        }
      }
      const int64_t per_bin = gh * gw;
      for (int64_t c = 0; c < channels; ++c) {
        const T* plane = xd + (bd[r] * channels + c) * height * width;
        const int64_t out_base = (r * channels + c) * ph_count * pw_count;
        for (int64_t b = 0; b < ph_count * pw_count; ++b) {
          double acc = 0.0;
          for (int64_t k = 0; k < per_bin; ++k) {
            const Sample& s = samples[static_cast<size_t>(b * per_bin + k)];
            if (avg) {
              acc += s.w[0] * load(plane[s.pos[0]]) + s.w[1] * load(plane[s.pos[1]]) +
                     s.w[2] * load(plane[s.pos[2]]) + s.w[3] * load(plane[s.pos[3]]);
            } else {
              // Max of the weighted corners, as ONNX's reference (and ORT).
              double v = s.w[0] * load(plane[s.pos[0]]);
              for (int q = 1; q < 4; ++q) v = std::max(v, s.w[q] * load(plane[s.pos[q]]));
              acc = k == 0 ? v : std::max(acc, v);
            }
          }
          yd[out_base + b] = store<T>(avg ? acc / count : acc);
        }
      }
    }
  });
}

void roi_align_kernel(const KernelContext& ctx) {
  if (!dispatch_among<float, double, Half>(ctx.inputs[0].dtype,
                                           [&]<typename T>() { roi_align_typed<T>(ctx); })) {
    corrupt(kScope, "unexpected element type");
  }
}

std::optional<std::string> roi_align_check(const sdk::NodeView& node, const sdk::GraphView& graph) {
  if (auto p = require_dtype(node, graph, 1, dtype_of(node, graph, 0), "rois")) {
    return *p + " like X";
  }
  if (auto p = require_dtype(node, graph, 2, ENP_DTYPE_INT64, "batch_indices")) return p;
  const auto x = graph.value(node.input(0));
  if (x->dims().size() != 4) return "X must be 4-D (N, C, H, W)";
  const std::string mode = node.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") return "mode '" + mode + "' is not supported";
  return std::nullopt;
}

// --- MaxUnpool ---------------------------------------------------------------

// Y is zero except Y.flat[I[i]] = X.flat[i]; I indexes the whole of Y, as
// MaxPool's Indices index the whole of its input. Later writes win on
// duplicate indices, as in the reference.
void max_unpool_kernel(const KernelContext& ctx) {
  const Buffer &x = ctx.inputs[0], &idx = ctx.inputs[1];
  Buffer& y = ctx.outputs[0];
  if (idx.count() != x.count()) corrupt(kScope, "MaxUnpool: I must have X's shape");
  const size_t elem = sdk::dtype_size(x.dtype);
  const int64_t total = y.count();
  auto* out = static_cast<uint8_t*>(y.data);
  const auto* in = static_cast<const uint8_t*>(x.data);
  const auto* id = idx.as<int64_t>();
  std::memset(out, 0, static_cast<size_t>(total) * elem);
  for (int64_t i = 0; i < x.count(); ++i) {
    if (id[i] < 0 || id[i] >= total) {
      index_out_of_range("MaxUnpool: I[" + std::to_string(i) + "] = " + std::to_string(id[i]) +
                         " is outside the output's " + std::to_string(total) + " elements");
    }
    std::memcpy(out + static_cast<size_t>(id[i]) * elem, in + static_cast<size_t>(i) * elem, elem);
  }
}

std::optional<std::string> max_unpool_check(const sdk::NodeView& node,
                                            const sdk::GraphView& graph) {
  if (auto p = require_dtype(node, graph, 1, ENP_DTYPE_INT64, "I")) return p;
  if (!node.input(2).empty() && !graph.initializer(node.input(2))) {
    return "has output_shape as a graph input: a data-dependent output shape; it must be a "
           "constant for static compilation";
  }
  return std::nullopt;
}

// --- DeformConv --------------------------------------------------------------

struct DeformGeometry {
  int64_t batch = 0, channels = 0, out_channels = 0, group = 1, offset_group = 1;
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0, k_h = 0, k_w = 0;
  int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_t = 0, pad_l = 0;
};

DeformGeometry deform_geometry(const KernelContext& ctx) {
  const Buffer &x = ctx.inputs[0], &w = ctx.inputs[1], &off = ctx.inputs[2];
  const Buffer& y = ctx.outputs[0];
  if (x.shape.size() != 4 || w.shape.size() != 4 || off.shape.size() != 4 || y.shape.size() != 4) {
    corrupt(kScope, "DeformConv: X, W, offset and Y must be 4-D");
  }
  DeformGeometry g;
  g.batch = x.shape[0];
  g.channels = x.shape[1];
  g.in_h = x.shape[2];
  g.in_w = x.shape[3];
  g.out_channels = w.shape[0];
  g.k_h = w.shape[2];
  g.k_w = w.shape[3];
  g.out_h = y.shape[2];
  g.out_w = y.shape[3];
  g.group = ctx.attr_int("group", 1);
  g.offset_group = ctx.attr_int("offset_group", 1);
  const auto strides = ctx.attr_ints("strides", {1, 1});
  const auto dilations = ctx.attr_ints("dilations", {1, 1});
  const auto pads = ctx.attr_ints("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4) {
    corrupt(kScope, "DeformConv: strides, dilations or pads do not match 2 spatial dims");
  }
  g.stride_h = strides[0];
  g.stride_w = strides[1];
  g.dil_h = dilations[0];
  g.dil_w = dilations[1];
  g.pad_t = pads[0];
  g.pad_l = pads[1];
  const int64_t taps = g.k_h * g.k_w;
  if (g.group <= 0 || g.offset_group <= 0 || g.channels % g.group != 0 ||
      g.channels % g.offset_group != 0 || g.out_channels % g.group != 0 ||
      w.shape[1] * g.group != g.channels || y.shape[0] != g.batch || y.shape[1] != g.out_channels ||
      off.shape[0] != g.batch || off.shape[1] != g.offset_group * taps * 2 ||
      off.shape[2] != g.out_h || off.shape[3] != g.out_w) {
    corrupt(kScope, "DeformConv shapes do not agree");
  }
  if (ctx.has_input(3) && ctx.inputs[3].count() != g.out_channels) {
    corrupt(kScope, "DeformConv: B must have one entry per output channel");
  }
  if (ctx.has_input(4) &&
      ctx.inputs[4].count() != g.batch * g.offset_group * taps * g.out_h * g.out_w) {
    corrupt(kScope, "DeformConv: mask does not match offset");
  }
  return g;
}

// Bilinear sample of an H x W plane at (h, w) in pixel coordinates, corners
// outside the plane reading zero (GridSample with align_corners = 1 and
// padding_mode = zeros, as ONNX defines DeformConv).
double sample_zero_padded(const float* plane, int64_t height, int64_t width, double h, double w) {
  const double h0f = std::floor(h), w0f = std::floor(w);
  if (!std::isfinite(h0f) || !std::isfinite(w0f) || h0f < -2.0 ||
      h0f > static_cast<double>(height) || w0f < -2.0 || w0f > static_cast<double>(width)) {
    return 0.0;
  }
  const auto h0 = static_cast<int64_t>(h0f), w0 = static_cast<int64_t>(w0f);
  const double lh = h - h0f, lw = w - w0f;
  double v = 0.0;
  for (int dy = 0; dy < 2; ++dy) {
    const int64_t yy = h0 + dy;
    if (yy < 0 || yy >= height) continue;
    const double wy = dy == 0 ? 1.0 - lh : lh;
    for (int dx = 0; dx < 2; ++dx) {
      const int64_t xx = w0 + dx;
      if (xx < 0 || xx >= width) continue;
      const double wx = dx == 0 ? 1.0 - lw : lw;
      v += wy * wx * static_cast<double>(plane[yy * width + xx]);
    }
  }
  return v;
}

// Columns of one (image, group): row (channel, kh, kw), column (oh, ow), each
// the deformed, masked sample; then Y_g = W_g * columns as in Conv.
void deform_conv_kernel(const KernelContext& ctx) {
  const DeformGeometry g = deform_geometry(ctx);
  if (ctx.outputs[0].count() == 0) return;
  const float* x = ctx.inputs[0].as<float>();
  const float* w = ctx.inputs[1].as<float>();
  const float* off = ctx.inputs[2].as<float>();
  const float* bias = ctx.has_input(3) ? ctx.inputs[3].as<float>() : nullptr;
  const float* mask = ctx.has_input(4) ? ctx.inputs[4].as<float>() : nullptr;
  float* y = ctx.outputs[0].as<float>();
  const int64_t taps = g.k_h * g.k_w, out_size = g.out_h * g.out_w, in_size = g.in_h * g.in_w;
  const int64_t cg = g.channels / g.group, mg = g.out_channels / g.group;
  const int64_t c_per_og = g.channels / g.offset_group;
  std::vector<float> col(static_cast<size_t>(cg * taps * out_size));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t gi = 0; gi < g.group; ++gi) {
      parallel_for(cg * taps, ctx.threads, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const int64_t c = gi * cg + row / taps, tap = row % taps;
          const int64_t kh = tap / g.k_w, kw = tap % g.k_w;
          const int64_t og = c / c_per_og;
          const float* plane = x + (n * g.channels + c) * in_size;
          // offset (N, og, kh, kw, 2, oh, ow); mask (N, og, kh, kw, oh, ow).
          const float* dh = off + ((n * g.offset_group + og) * taps + tap) * 2 * out_size;
          const float* dw = dh + out_size;
          const float* m =
              mask ? mask + ((n * g.offset_group + og) * taps + tap) * out_size : nullptr;
          float* dst = col.data() + row * out_size;
          for (int64_t oh = 0; oh < g.out_h; ++oh) {
            for (int64_t ow = 0; ow < g.out_w; ++ow) {
              const int64_t o = oh * g.out_w + ow;
              const double h = static_cast<double>(oh * g.stride_h - g.pad_t + kh * g.dil_h) +
                               static_cast<double>(dh[o]);
              const double wc = static_cast<double>(ow * g.stride_w - g.pad_l + kw * g.dil_w) +
                                static_cast<double>(dw[o]);
              double v = sample_zero_padded(plane, g.in_h, g.in_w, h, wc);
              if (m) v *= static_cast<double>(m[o]);
              dst[o] = static_cast<float>(v);
            }
          }
        }
      });
      float* yg = y + (n * g.out_channels + gi * mg) * out_size;
      for (int64_t k = 0; k < mg; ++k) {
        std::fill(yg + k * out_size, yg + (k + 1) * out_size, bias ? bias[gi * mg + k] : 0.0f);
      }
      sgemm_f32(false, false, mg, out_size, cg * taps, 1.0f, w + gi * mg * cg * taps, col.data(),
                1.0f, yg, ctx.threads);
    }
  }
}

std::optional<std::string> deform_conv_check(const sdk::NodeView& node,
                                             const sdk::GraphView& graph) {
  for (size_t i = 1; i < 5; ++i) {
    static const char* const kNames[] = {"X", "W", "offset", "B", "mask"};
    if (auto p = require_dtype(node, graph, i, ENP_DTYPE_FLOAT32, kNames[i])) return *p + " like X";
  }
  const auto x = graph.value(node.input(0));
  if (x->dims().size() != 4) return "only 2-D DeformConv (X of rank 4) is supported";
  return std::nullopt;
}

}  // namespace

std::vector<OpEntry> detection_ops() {
  return {
      {"DeformConv", 19, 0, kF32,
       "2-D; offsets, optional mask and bias, group, offset_group, strides, dilations, pads",
       &deform_conv_check, &deform_conv_kernel},
      {"MaxUnpool", 9, 0, kFloats,
       "I int64; output_shape only as a constant (the output shape must be static)",
       &max_unpool_check, &max_unpool_kernel},
      {"RoiAlign", 10, 0, kFloats,
       "mode avg/max, sampling_ratio 0 = adaptive; coordinate_transformation_mode (opset 16+); "
       "batch_indices int64",
       &roi_align_check, &roi_align_kernel},
  };
}

}  // namespace eulernpu::kit
