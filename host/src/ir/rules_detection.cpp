// Shape rules of the detection-style ops (see
// sdk/kit/src/kernels_detection.cpp): RoiAlign, MaxUnpool and
// DeformConv. Their outputs follow from shapes and attributes alone, except
// MaxUnpool's output_shape input: when it is not a constant only the rank is
// known, and the model's declared output type may fill in the dims.
#include <algorithm>
#include <string>

#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

using Dims = std::vector<int64_t>;

// Spatial attribute `name` of `n` entries, `fallback` each when absent.
Dims spatial_ints(const InferContext& ctx, const char* name, size_t n, int64_t fallback) {
  const Dims v = ctx.attr_ints(name, Dims(n, fallback));
  ctx.require(v.size() == n, std::string(name) + " must have " + std::to_string(n) + " entries");
  return v;
}

// --- RoiAlign ----------------------------------------------------------------

void roi_align(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const ValueType& rois = ctx.input(1);
  const ValueType& batch = ctx.input(2);
  const std::string mode = ctx.attr_string("mode", "avg");
  ctx.require(mode == "avg" || mode == "max", "mode '" + mode + "' is not one of avg, max");
  if (ctx.opset() >= 16) {
    const std::string ctm = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
    ctx.require(
        ctm == "half_pixel" || ctm == "output_half_pixel",
        "coordinate_transformation_mode '" + ctm + "' is not one of half_pixel, output_half_pixel");
  }
  const int64_t oh = ctx.attr_int("output_height", 1), ow = ctx.attr_int("output_width", 1);
  ctx.require(oh > 0 && ow > 0, "output_height and output_width must be positive");
  ctx.require(ctx.attr_int("sampling_ratio", 0) >= 0, "sampling_ratio must not be negative");
  ctx.require(batch.dtype == DType::kInt64 || batch.dtype == DType::kUndefined,
              "batch_indices must be int64");
  if (!x.known || !rois.known || !batch.known) return ctx.set_output(0, unknown(x.dtype));
  ctx.require(x.dims.size() == 4, "X must be 4-D (N, C, H, W), not " + shape_string(x.dims));
  ctx.require(rois.dims.size() == 2 && agree(rois.dims[1], 4),
              "rois must be (num_rois, 4), not " + shape_string(rois.dims));
  ctx.require(batch.dims.size() == 1 && agree(batch.dims[0], rois.dims[0]),
              "batch_indices " + shape_string(batch.dims) + " must be (num_rois) for rois " +
                  shape_string(rois.dims));
  const int64_t r = rois.dims[0] >= 0 ? rois.dims[0] : batch.dims[0];
  ctx.set_output(0, ValueType{x.dtype, {r, x.dims[1], oh, ow}, true});
}

// --- MaxUnpool ---------------------------------------------------------------

void max_unpool(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const ValueType& indices = ctx.input(1);
  ctx.require(indices.dtype == DType::kInt64 || indices.dtype == DType::kUndefined,
              "I must be int64");
  if (!x.known) return ctx.set_output(0, unknown(x.dtype));
  ctx.require(x.dims.size() >= 3, "X must have rank >= 3 (N, C, spatial...)");
  ctx.require(!indices.known || indices.dims == x.dims,
              "I " + shape_string(indices.dims) + " must have X's shape " + shape_string(x.dims));
  const size_t n = x.dims.size() - 2;
  const Dims kernel = ctx.attr_ints("kernel_shape");
  ctx.require(kernel.size() == n, "kernel_shape must have one entry per spatial dim");
  const Dims strides = spatial_ints(ctx, "strides", n, 1);
  const Dims pads = spatial_ints(ctx, "pads", 2 * n, 0);
  for (size_t i = 0; i < n; ++i) {
    ctx.require(kernel[i] > 0 && strides[i] > 0, "kernel_shape and strides must be positive");
    ctx.require(pads[i] >= 0 && pads[i + n] >= 0, "pads must not be negative");
  }
  if (ctx.has_input(2)) {
    const auto shape = ctx.constant_ints(2);
    if (!shape) return ctx.set_output(0, ValueType{x.dtype, Dims(x.dims.size(), -1), true});
    ctx.require(shape->size() == x.dims.size(),
                "output_shape " + shape_string(*shape) + " must have X's rank");
    ctx.require(
        agree((*shape)[0], x.dims[0]) && agree((*shape)[1], x.dims[1]),
        "output_shape " + shape_string(*shape) + " must keep X's N and C " + shape_string(x.dims));
    for (int64_t d : *shape) ctx.require(d >= 0, "output_shape must not be negative");
    return ctx.set_output(0, ValueType{x.dtype, *shape, true});
  }
  Dims out{x.dims[0], x.dims[1]};
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = x.dims[i + 2];
    out.push_back(in < 0 ? -1 : (in - 1) * strides[i] - pads[i] - pads[i + n] + kernel[i]);
    ctx.require(out.back() >= -1 && (out.back() >= 0 || in < 0),
                "pads make spatial dim " + std::to_string(i) + " of the output negative");
  }
  ctx.set_output(0, ValueType{x.dtype, out, true});
}

// --- DeformConv --------------------------------------------------------------

void deform_conv(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const ValueType& w = ctx.input(1);
  ctx.require(ctx.has_input(2), "offset is required");
  if (!x.known || !w.known) return ctx.set_output(0, unknown(x.dtype));
  ctx.require(x.dims.size() >= 3 && w.dims.size() == x.dims.size(),
              "X and W must have the same rank, at least 3 (N, C, spatial...)");
  const size_t n = x.dims.size() - 2;
  const int64_t group = ctx.attr_int("group", 1), offset_group = ctx.attr_int("offset_group", 1);
  ctx.require(group > 0 && offset_group > 0, "group and offset_group must be positive");
  const int64_t c = x.dims[1], oc = w.dims[0];
  ctx.require(c < 0 || w.dims[1] < 0 || c == w.dims[1] * group,
              "X has " + std::to_string(c) + " channels; W " + shape_string(w.dims) +
                  " with group " + std::to_string(group) + " needs " +
                  std::to_string(w.dims[1] * group));
  ctx.require(oc < 0 || oc % group == 0, "W's " + std::to_string(oc) +
                                             " output channels do not divide into " +
                                             std::to_string(group) + " groups");
  ctx.require(c < 0 || c % offset_group == 0, "X's " + std::to_string(c) +
                                                  " channels do not divide into " +
                                                  std::to_string(offset_group) + " offset groups");
  const Dims kernel = ctx.attr_ints("kernel_shape", {w.dims.begin() + 2, w.dims.end()});
  ctx.require(kernel.size() == n && std::equal(kernel.begin(), kernel.end(), w.dims.begin() + 2,
                                               [](int64_t a, int64_t b) { return agree(a, b); }),
              "kernel_shape " + shape_string(kernel) + " differs from W's spatial dims");
  const Dims strides = spatial_ints(ctx, "strides", n, 1);
  const Dims dilations = spatial_ints(ctx, "dilations", n, 1);
  const Dims pads = spatial_ints(ctx, "pads", 2 * n, 0);
  Dims out{x.dims[0], oc};
  int64_t taps = offset_group;
  for (size_t i = 0; i < n; ++i) {
    ctx.require(strides[i] > 0 && dilations[i] > 0, "strides and dilations must be positive");
    ctx.require(pads[i] >= 0 && pads[i + n] >= 0, "pads must not be negative");
    const int64_t in = x.dims[i + 2], k = kernel[i];
    taps = taps < 0 || k < 0 ? -1 : taps * k;
    if (in < 0 || k < 0) {
      out.push_back(-1);
      continue;
    }
    const int64_t span = dilations[i] * (k - 1) + 1;
    const int64_t num = in + pads[i] + pads[i + n] - span;
    ctx.require(num >= 0, "the dilated kernel is larger than the padded input along spatial dim " +
                              std::to_string(i));
    out.push_back(num / strides[i] + 1);
  }
  // offset is (N, offset_group * prod(kernel) * n, out...); mask drops the
  // trailing factor n.
  auto check_side = [&](size_t idx, const char* name, int64_t channels) {
    if (!ctx.has_input(idx) || !ctx.input(idx).known) return;
    const Dims& d = ctx.input(idx).dims;
    Dims want = out;
    want[1] = channels;
    bool ok = d.size() == want.size();
    for (size_t i = 0; ok && i < d.size(); ++i) ok = agree(d[i], want[i]);
    ctx.require(ok, std::string(name) + " " + shape_string(d) + " must be " + shape_string(want));
  };
  check_side(2, "offset", taps < 0 ? -1 : taps * static_cast<int64_t>(n));
  check_side(4, "mask", taps);
  if (ctx.has_input(3) && ctx.input(3).known) {
    const Dims& b = ctx.input(3).dims;
    ctx.require(b.size() == 1 && agree(b[0], oc),
                "B " + shape_string(b) + " must have one entry per output channel");
  }
  ctx.set_output(0, ValueType{x.dtype, out, true});
}

}  // namespace

std::vector<OpRule> detection_rules() {
  return {
      {"RoiAlign", &roi_align, nullptr},
      {"MaxUnpool", &max_unpool, nullptr},
      {"DeformConv", &deform_conv, nullptr},
  };
}

}  // namespace eulernpu::host::ir
