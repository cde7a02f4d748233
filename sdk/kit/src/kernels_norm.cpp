// Normalization kernels: BatchNormalization (inference), GroupNormalization,
// LayerNormalization, InstanceNormalization, LpNormalization, LRN,
// MeanVarianceNormalization.
// Means, variances and norms accumulate in float64 in a fixed order; each
// output element is computed in float64 and rounded once to float32.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "eulernpu/kit/errors.hpp"
#include "kernel_util.hpp"
#include "operands.hpp"

namespace eulernpu::kit {
namespace {

void expect_count(const Buffer& b, int64_t n, const char* what) {
  if (b.count() != n) corrupt(std::string(what) + " has the wrong number of elements");
}

// Mean and variance (population) of n values `stride` apart.
struct Moments {
  double mean = 0, var = 0;
};

Moments moments(const float* x, int64_t n, int64_t stride = 1) {
  Moments m;
  if (n == 0) return m;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i * stride];
  m.mean = sum / static_cast<double>(n);
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = x[i * stride] - m.mean;
    sq += d * d;
  }
  m.var = sq / static_cast<double>(n);
  return m;
}

// Per-channel parameters for (N, C, ...) inputs: N*C planes of `plane`
// elements each.
struct Planes {
  int64_t count = 0, channels = 0, plane = 0;
};

Planes planes_of(const Buffer& x) {
  if (x.shape.size() < 2) corrupt("a normalization input has rank < 2");
  return {x.shape[0] * x.shape[1], x.shape[1], product(x.shape.begin() + 2, x.shape.end())};
}

// ---------------------------------------------------------------------------
// BatchNormalization: y = (x - mean) / sqrt(var + epsilon) * scale + B with
// the stored statistics.

void batchnorm_kernel(const KernelContext& ctx) {
  const Buffer& x = ctx.inputs[0];
  const Planes p = planes_of(x);
  for (size_t i = 1; i <= 4; ++i) expect_count(ctx.inputs[i], p.channels, "a BatchNorm parameter");
  expect_count(ctx.outputs[0], x.count(), "BatchNorm's output");
  const float* scale = ctx.inputs[1].as<const float>();
  const float* bias = ctx.inputs[2].as<const float>();
  const float* mean = ctx.inputs[3].as<const float>();
  const float* var = ctx.inputs[4].as<const float>();
  const double eps = ctx.attr_float("epsilon", 1e-5);
  const float* in = x.as<const float>();
  float* out = ctx.outputs[0].as<float>();
  parallel_for(p.count, threads_for(ctx, x.count()), [&](int64_t begin, int64_t end) {
    for (int64_t nc = begin; nc < end; ++nc) {
      const int64_t c = nc % p.channels;
      const double a = scale[c] / std::sqrt(double{var[c]} + eps);
      const float* xs = in + nc * p.plane;
      float* ys = out + nc * p.plane;
      for (int64_t i = 0; i < p.plane; ++i) {
        ys[i] = static_cast<float>((xs[i] - double{mean[c]}) * a + bias[c]);
      }
    }
  });
}

// ---------------------------------------------------------------------------
// InstanceNormalization: each (n, c) plane normalized by its own statistics.

void instancenorm_kernel(const KernelContext& ctx) {
  const Buffer& x = ctx.inputs[0];
  const Planes p = planes_of(x);
  expect_count(ctx.inputs[1], p.channels, "InstanceNormalization's scale");
  expect_count(ctx.inputs[2], p.channels, "InstanceNormalization's B");
  expect_count(ctx.outputs[0], x.count(), "InstanceNormalization's output");
  const float* scale = ctx.inputs[1].as<const float>();
  const float* bias = ctx.inputs[2].as<const float>();
  const double eps = ctx.attr_float("epsilon", 1e-5);
  const float* in = x.as<const float>();
  float* out = ctx.outputs[0].as<float>();
  parallel_for(p.count, threads_for(ctx, x.count()), [&](int64_t begin, int64_t end) {
    for (int64_t nc = begin; nc < end; ++nc) {
      const int64_t c = nc % p.channels;
      const float* xs = in + nc * p.plane;
      float* ys = out + nc * p.plane;
      const Moments m = moments(xs, p.plane);
      const double a = scale[c] / std::sqrt(m.var + eps);
      for (int64_t i = 0; i < p.plane; ++i) {
        ys[i] = static_cast<float>((xs[i] - m.mean) * a + bias[c]);
      }
    }
  });
}

// ---------------------------------------------------------------------------
// LayerNormalization: normalizes over the dims from `axis` on; Scale and B
// broadcast to those dims. Mean and InvStdDev, if requested, get one value
// per normalized group.

// `t` broadcast (numpy, right-aligned) to `dims`, as float64.
std::vector<double> expand_to(const Buffer& t, const std::vector<int64_t>& dims) {
  const auto strides = broadcast_strides(t.shape, dims.size());
  const float* v = t.as<const float>();
  const int64_t n = product(dims);
  std::vector<double> out(static_cast<size_t>(n));
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < dims.size(); ++d) off += idx[d] * strides[d];
    out[static_cast<size_t>(i)] = v[off];
    for (size_t d = dims.size(); d-- > 0;) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// Whether output `output` is asked for as float32, the only dtype these
// kernels write it in.
bool wants_f32(const KernelContext& ctx, size_t output) {
  return output < ctx.outputs.size() && ctx.outputs[output].dtype == ENP_DTYPE_FLOAT32;
}

void layernorm_kernel(const KernelContext& ctx) {
  const Buffer& x = ctx.inputs[0];
  const auto rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = ctx.attr_int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) corrupt("LayerNormalization's axis is out of range");
  const std::vector<int64_t> norm_dims(x.shape.begin() + axis, x.shape.end());
  for (size_t i = 1; i <= 2; ++i) {
    if (ctx.has_input(i) && !broadcasts_to(ctx.inputs[i].shape, norm_dims)) {
      corrupt("LayerNormalization's scale or B does not broadcast");
    }
  }
  const int64_t n = product(norm_dims);
  const int64_t groups = product(x.shape.begin(), x.shape.begin() + axis);
  expect_count(ctx.outputs[0], x.count(), "LayerNormalization's output");
  const std::vector<double> scale = expand_to(ctx.inputs[1], norm_dims);
  const std::vector<double> bias =
      ctx.has_input(2) ? expand_to(ctx.inputs[2], norm_dims) : std::vector<double>(scale.size());
  float* mean_out = wants_f32(ctx, 1) ? ctx.outputs[1].as<float>() : nullptr;
  float* inv_out = wants_f32(ctx, 2) ? ctx.outputs[2].as<float>() : nullptr;
  if (mean_out) expect_count(ctx.outputs[1], groups, "LayerNormalization's Mean");
  if (inv_out) expect_count(ctx.outputs[2], groups, "LayerNormalization's InvStdDev");
  const double eps = ctx.attr_float("epsilon", 1e-5);
  const float* in = x.as<const float>();
  float* out = ctx.outputs[0].as<float>();
  parallel_for(groups, threads_for(ctx, x.count()), [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g) {
      const float* xs = in + g * n;
      float* ys = out + g * n;
      const Moments m = moments(xs, n);
      const double inv = 1.0 / std::sqrt(m.var + eps);
      for (int64_t i = 0; i < n; ++i) {
        const auto k = static_cast<size_t>(i);
        ys[i] = static_cast<float>((xs[i] - m.mean) * inv * scale[k] + bias[k]);
      }
      if (mean_out) mean_out[g] = static_cast<float>(m.mean);
      if (inv_out) inv_out[g] = static_cast<float>(inv);
    }
  });
}

// ---------------------------------------------------------------------------
// LpNormalization: x / ||x||_p along one axis (p = 1 or 2). An all-zero
// line stays zero, as in the ONNX reference.

void lpnorm_kernel(const KernelContext& ctx) {
  const Buffer& x = ctx.inputs[0];
  const auto rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = ctx.attr_int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) corrupt("LpNormalization's axis is out of range");
  const bool l1 = ctx.attr_int("p", 2) == 1;
  const auto a = static_cast<size_t>(axis);
  const int64_t outer = product(x.shape.begin(), x.shape.begin() + a), len = x.shape[a];
  const int64_t inner = product(x.shape.begin() + a + 1, x.shape.end());
  expect_count(ctx.outputs[0], x.count(), "LpNormalization's output");
  const float* in = x.as<const float>();
  float* out = ctx.outputs[0].as<float>();
  parallel_for(outer * inner, threads_for(ctx, x.count()), [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      const int64_t base = line / inner * len * inner + line % inner;
      double norm = 0;
      for (int64_t j = 0; j < len; ++j) {
        const double v = in[base + j * inner];
        norm += l1 ? std::fabs(v) : v * v;
      }
      if (!l1) norm = std::sqrt(norm);
      for (int64_t j = 0; j < len; ++j) {
        out[base + j * inner] = norm == 0 ? 0.0f : static_cast<float>(in[base + j * inner] / norm);
      }
    }
  });
}

// ---------------------------------------------------------------------------
// MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes` (default
// 0, 2, 3), as ONNX's function body with its fixed epsilon.

void mvn_kernel(const KernelContext& ctx) {
  const Buffer& x = ctx.inputs[0];
  const size_t rank = x.shape.size();
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : ctx.attr_ints("axes", {0, 2, 3})) {
    const int64_t a = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
    if (a < 0 || a >= static_cast<int64_t>(rank)) corrupt("MVN's axes are out of range");
    reduced[static_cast<size_t>(a)] = true;
  }
  // Each element's group: its coordinates along the kept dims.
  std::vector<int64_t> group_stride(rank, 0);
  int64_t groups = 1;
  for (size_t d = rank; d-- > 0;) {
    if (reduced[d]) continue;
    group_stride[d] = groups;
    groups *= x.shape[d];
  }
  const int64_t n = x.count();
  expect_count(ctx.outputs[0], n, "MVN's output");
  std::vector<int64_t> group(static_cast<size_t>(n));
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t g = 0;
    for (size_t d = 0; d < rank; ++d) g += idx[d] * group_stride[d];
    group[static_cast<size_t>(i)] = g;
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < x.shape[d]) break;
      idx[d] = 0;
    }
  }
  const float* in = x.as<const float>();
  float* out = ctx.outputs[0].as<float>();
  const auto gs = static_cast<size_t>(groups);
  std::vector<double> sum(gs, 0.0), sq(gs, 0.0), size(gs, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    const auto g = static_cast<size_t>(group[static_cast<size_t>(i)]);
    sum[g] += in[i];
    size[g] += 1;
  }
  for (size_t g = 0; g < gs; ++g) sum[g] = size[g] > 0 ? sum[g] / size[g] : 0.0;  // now the mean
  for (int64_t i = 0; i < n; ++i) {
    const auto g = static_cast<size_t>(group[static_cast<size_t>(i)]);
    const double d = in[i] - sum[g];
    sq[g] += d * d;
  }
  for (int64_t i = 0; i < n; ++i) {
    const auto g = static_cast<size_t>(group[static_cast<size_t>(i)]);
    const double stddev = std::sqrt(sq[g] / size[g]);
    out[i] = static_cast<float>((in[i] - sum[g]) / (stddev + 1e-9));
  }
}

// ---------------------------------------------------------------------------
// GroupNormalization: channels split into num_groups groups; each (n, group)
// normalized by its own statistics. Opset 18 has one scale and bias per
// group, opset 21 one per channel. stash_type only asks for at least float32
// statistics; they are float64 here.

void groupnorm_kernel(const KernelContext& ctx) {
  const Buffer& x = ctx.inputs[0];
  const Planes p = planes_of(x);
  const int64_t groups = ctx.attr_int("num_groups", 0);
  if (groups <= 0 || p.channels % groups != 0) {
    corrupt("GroupNormalization's num_groups does not divide the channels");
  }
  const bool per_channel = ctx.opset >= 21;
  const int64_t params = per_channel ? p.channels : groups;
  expect_count(ctx.inputs[1], params, "GroupNormalization's scale");
  expect_count(ctx.inputs[2], params, "GroupNormalization's bias");
  expect_count(ctx.outputs[0], x.count(), "GroupNormalization's output");
  const float* scale = ctx.inputs[1].as<const float>();
  const float* bias = ctx.inputs[2].as<const float>();
  const double eps = ctx.attr_float("epsilon", 1e-5);
  const int64_t per_group = p.channels / groups;
  const int64_t span = per_group * p.plane;  // a group's elements are contiguous
  const int64_t batch = x.shape[0];
  const float* in = x.as<const float>();
  float* out = ctx.outputs[0].as<float>();
  parallel_for(batch * groups, threads_for(ctx, x.count()), [&](int64_t begin, int64_t end) {
    for (int64_t ng = begin; ng < end; ++ng) {
      const int64_t g = ng % groups;
      const float* xs = in + ng * span;
      float* ys = out + ng * span;
      const Moments m = moments(xs, span);
      const double inv = 1.0 / std::sqrt(m.var + eps);
      for (int64_t k = 0; k < per_group; ++k) {
        const int64_t at = per_channel ? g * per_group + k : g;
        const double a = inv * scale[at], b = bias[at];
        for (int64_t i = k * p.plane; i < (k + 1) * p.plane; ++i) {
          ys[i] = static_cast<float>((xs[i] - m.mean) * a + b);
        }
      }
    }
  });
}

// ---------------------------------------------------------------------------
// LRN: y = x / (bias + alpha / size * sum of x^2 over the channels
// [c - floor((size-1)/2), c + ceil((size-1)/2)]) ^ beta.

void lrn_kernel(const KernelContext& ctx) {
  const Buffer& x = ctx.inputs[0];
  const Planes p = planes_of(x);
  const int64_t size = ctx.attr_int("size", 0);
  if (size <= 0) corrupt("LRN's size is not positive");
  expect_count(ctx.outputs[0], x.count(), "LRN's output");
  const double alpha = ctx.attr_float("alpha", 1e-4), beta = ctx.attr_float("beta", 0.75);
  const double bias = ctx.attr_float("bias", 1.0);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const float* in = x.as<const float>();
  float* out = ctx.outputs[0].as<float>();
  parallel_for(p.count, threads_for(ctx, x.count()), [&](int64_t begin, int64_t end) {
    for (int64_t nc = begin; nc < end; ++nc) {
      const int64_t c = nc % p.channels, n0 = nc - c;
      const int64_t lo = std::max<int64_t>(0, c - before);
      const int64_t hi = std::min(p.channels - 1, c + after);
      for (int64_t i = 0; i < p.plane; ++i) {
        double sq = 0;
        for (int64_t k = lo; k <= hi; ++k) {
          const double v = in[(n0 + k) * p.plane + i];
          sq += v * v;
        }
        const double denom = std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
        out[nc * p.plane + i] = static_cast<float>(in[nc * p.plane + i] / denom);
      }
    }
  });
}

// ---------------------------------------------------------------------------
// Lowering checks

// Inputs [first, last] that are present are float32 and hold `count`
// elements each.
std::optional<std::string> float_params(const sdk::NodeView& node, const sdk::GraphView& g,
                                        size_t first, size_t last, int64_t count) {
  for (size_t i = first; i <= last; ++i) {
    if (node.input(i).empty()) continue;
    const auto v = g.value(node.input(i));
    if (!v || v->dtype() != ENP_DTYPE_FLOAT32) {
      return "input " + std::to_string(i) + " must be float32";
    }
    if (count >= 0 && v->element_count() != count) {
      return "input " + std::to_string(i) + " must hold " + std::to_string(count) +
             " elements (one per channel)";
    }
  }
  return std::nullopt;
}

std::optional<std::string> channels_check(const sdk::NodeView& node, const sdk::GraphView& g,
                                          size_t last_param) {
  const auto x = shape_of(g, node.input(0));
  if (x.size() < 2) return "X must have rank >= 2 (N, C, ...)";
  for (size_t i = 1; i <= last_param; ++i) {
    if (node.input(i).empty()) return "input " + std::to_string(i) + " is required";
  }
  return float_params(node, g, 1, last_param, x[1]);
}

std::optional<std::string> batchnorm_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (node.attr_int("training_mode", 0) != 0) {
    return "training_mode=1 is not supported (cpu_ref runs inference)";
  }
  for (size_t i = 1; i < node.output_count(); ++i) {
    if (!node.output(i).empty()) {
      return "training outputs (running or saved mean and variance) are not supported";
    }
  }
  if (node.attr_int("spatial", 1) == 0) return "spatial=0 is not supported";
  return channels_check(node, g, 4);
}

std::optional<std::string> instancenorm_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  return channels_check(node, g, 2);
}

std::optional<std::string> layernorm_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const auto x = shape_of(g, node.input(0));
  const auto rank = static_cast<int64_t>(x.size());
  const int64_t axis = node.attr_int("axis", -1);
  if (axis < -rank || axis >= rank) {
    return "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank);
  }
  const std::vector<int64_t> norm_dims(x.begin() + (axis < 0 ? axis + rank : axis), x.end());
  if (auto why = float_params(node, g, 1, 2, -1)) return why;
  for (size_t i = 1; i <= 2; ++i) {
    if (!node.input(i).empty() && !broadcasts_to(shape_of(g, node.input(i)), norm_dims)) {
      return "input " + std::to_string(i) + " " + sdk::shape_string(shape_of(g, node.input(i))) +
             " does not broadcast to the normalized dims " + sdk::shape_string(norm_dims);
    }
  }
  for (size_t i = 1; i < node.output_count() && i < 3; ++i) {
    const auto v = node.output(i).empty() ? std::nullopt : g.value(node.output(i));
    if (v && v->dtype() != ENP_DTYPE_FLOAT32) return "Mean and InvStdDev must be float32";
  }
  return std::nullopt;
}

std::optional<std::string> lpnorm_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const auto rank = static_cast<int64_t>(shape_of(g, node.input(0)).size());
  const int64_t axis = node.attr_int("axis", -1);
  if (axis < -rank || axis >= rank) {
    return "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank);
  }
  const int64_t p = node.attr_int("p", 2);
  if (p != 1 && p != 2) return "p=" + std::to_string(p) + " is not 1 or 2";
  return std::nullopt;
}

std::optional<std::string> mvn_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const auto rank = static_cast<int64_t>(shape_of(g, node.input(0)).size());
  for (int64_t axis : node.attr_ints("axes", {0, 2, 3})) {
    if (axis < -rank || axis >= rank) {
      return "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank);
    }
  }
  return std::nullopt;
}

std::optional<std::string> groupnorm_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const auto x = shape_of(g, node.input(0));
  if (x.size() < 2) return "X must have rank >= 2 (N, C, ...)";
  const enp_attribute_t* attr = node.find_attribute("num_groups");
  if (!attr || attr->type != ENP_ATTR_INT) return "num_groups is required";
  const int64_t groups = attr->i;
  if (groups <= 0 || x[1] % groups != 0) {
    return "num_groups " + std::to_string(groups) + " does not divide the " + std::to_string(x[1]) +
           " channels";
  }
  for (size_t i = 1; i <= 2; ++i) {
    if (node.input(i).empty()) return "input " + std::to_string(i) + " is required";
  }
  // Opset 21 changed scale and bias from one per group to one per channel.
  return float_params(node, g, 1, 2, g.opset("") >= 21 ? x[1] : groups);
}

std::optional<std::string> lrn_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (shape_of(g, node.input(0)).size() < 2) return "X must have rank >= 2 (N, C, ...)";
  const enp_attribute_t* attr = node.find_attribute("size");
  if (!attr || attr->type != ENP_ATTR_INT) return "size is required";
  if (attr->i <= 0) return "size " + std::to_string(attr->i) + " is not positive";
  return std::nullopt;
}

}  // namespace

std::vector<OpEntry> norm_ops() {
  return {
      {"BatchNormalization", 7, 0, kF32,
       "inference only (stored mean and variance), spatial=1, float32 parameters", &batchnorm_check,
       &batchnorm_kernel},
      {"GroupNormalization", 18, 20, kF32, "float32 scale and bias, one per group",
       &groupnorm_check, &groupnorm_kernel},
      {"GroupNormalization", 21, 0, kF32, "float32 scale and bias, one per channel",
       &groupnorm_check, &groupnorm_kernel},
      {"InstanceNormalization", 6, 0, kF32, "float32 scale and B", &instancenorm_check,
       &instancenorm_kernel},
      {"LayerNormalization", 17, 0, kF32, "Scale and B broadcast; Mean and InvStdDev float32",
       &layernorm_check, &layernorm_kernel},
      {"LRN", 1, 0, kF32, "any rank >= 2; float64 window sums", &lrn_check, &lrn_kernel},
      {"LpNormalization", 1, 0, kF32, "p = 1 or 2", &lpnorm_check, &lpnorm_kernel},
      {"MeanVarianceNormalization", 9, 0, kF32, "any axes", &mvn_check, &mvn_kernel},
  };
}

}  // namespace eulernpu::kit
