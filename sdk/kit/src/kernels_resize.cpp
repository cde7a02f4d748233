// Resize (opset 10+) and Upsample (opsets 7-9): nearest, n-linear and cubic
// interpolation with every coordinate transformation mode, antialiasing,
// exclude_outside and tf_crop_and_resize extrapolation.
//
// Interpolation is separable, so each resized axis is one pass: every
// output position along the axis gets a list of (input index, weight) taps
// computed once, following ONNX's reference implementation (its edge
// padding becomes index clamping). Passes over axes that do not change are
// skipped, and shrinking axes go first so later passes touch less data.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "eulernpu/kernels/movement.hpp"
#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/simd_clones.hpp"
#include "eulernpu/sdk/status.hpp"
#include "kernel_util.hpp"

namespace eulernpu::kit {
namespace {

// Where this file's corrupt-artifact errors are located.
constexpr std::string_view kScope = "cpu_ref Resize";

constexpr uint32_t kF64 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT64);
// Bound on the taps of one axis (antialiasing at a tiny scale widens them).
constexpr int64_t kMaxTaps = int64_t{1} << 27;

[[noreturn]] void bad_input(const std::string& what) {
  throw sdk::Error(ENP_INVALID_ARGUMENT, "invalid Resize input", "cpu_ref Resize: " + what,
                   "pass scales/sizes that match the model the artifact was compiled for");
}

enum class Kind { kNearest, kLinear, kCubic };

struct Mode {
  Kind kind = Kind::kNearest;
  std::string coord = "half_pixel";            // coordinate_transformation_mode
  std::string nearest = "round_prefer_floor";  // "simple" before opset 11
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0.0;
};

// Resize-10 and Upsample map coordinates asymmetrically and round nearest
// the way onnxruntime's "simple" mode does.
bool legacy(const KernelContext& ctx, bool upsample) { return upsample || ctx.opset < 11; }

Mode read_mode(const KernelContext& ctx, bool upsample) {
  Mode m;
  const std::string mode = ctx.attr_string("mode", "nearest");
  m.kind = mode == "nearest" ? Kind::kNearest : mode == "cubic" ? Kind::kCubic : Kind::kLinear;
  if (legacy(ctx, upsample)) {
    m.coord = "asymmetric";
    m.nearest = "simple";
    return m;
  }
  m.coord = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
  m.nearest = ctx.attr_string("nearest_mode", "round_prefer_floor");
  m.cubic_a = ctx.attr_float("cubic_coeff_a", -0.75);
  m.exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
  m.antialias = ctx.attr_int("antialias", 0) != 0 && m.kind != Kind::kNearest;
  m.extrapolation = ctx.attr_float("extrapolation_value", 0.0);
  return m;
}

// Reads a float or double tensor as doubles.
std::vector<double> read_floats(const Buffer& b) {
  std::vector<double> out(static_cast<size_t>(b.count()));
  for (size_t i = 0; i < out.size(); ++i) {
    if (b.dtype == ENP_DTYPE_FLOAT32) {
      out[i] = b.as<float>()[i];
    } else if (b.dtype == ENP_DTYPE_FLOAT64) {
      out[i] = b.as<double>()[i];
    } else {
      corrupt(kScope, "scales and roi must be float32 or float64");
    }
  }
  return out;
}

std::vector<size_t> read_axes(const KernelContext& ctx, size_t rank) {
  std::vector<size_t> axes;
  for (int64_t a : ctx.attr_ints("axes")) {
    const int64_t r = static_cast<int64_t>(rank);
    if (a < -r || a >= r) corrupt(kScope, "axes entry out of range");
    axes.push_back(static_cast<size_t>(a < 0 ? a + r : a));
  }
  if (axes.empty()) {
    for (size_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  return axes;
}

// Per-axis scale over the full rank: from scales, else from sizes (with
// keep_aspect_ratio_policy), else the output shape's ratio.
std::vector<double> axis_scales(const KernelContext& ctx, bool upsample,
                                const std::vector<size_t>& axes, const std::vector<int64_t>& in,
                                const std::vector<int64_t>& out) {
  std::vector<double> scale(in.size(), 1.0);
  std::vector<double> given;
  if (upsample && ctx.has_attr("scales")) {
    given = ctx.attr_floats("scales");
  } else if (const size_t at = legacy(ctx, upsample) ? 1 : 2;
             ctx.has_input(at) && ctx.inputs[at].count() > 0) {
    given = read_floats(ctx.inputs[at]);
  }
  if (!given.empty()) {
    if (given.size() != axes.size()) bad_input("scales must have one entry per axis");
    for (size_t i = 0; i < axes.size(); ++i) scale[axes[i]] = given[i];
    return scale;
  }
  std::vector<int64_t> sizes;
  if (!legacy(ctx, upsample) && ctx.has_input(3) && ctx.inputs[3].count() > 0) {
    if (ctx.inputs[3].dtype != ENP_DTYPE_INT64) corrupt(kScope, "sizes must be int64");
    const Buffer& s = ctx.inputs[3];
    sizes.assign(s.as<int64_t>(), s.as<int64_t>() + s.count());
    if (sizes.size() != axes.size()) bad_input("sizes must have one entry per axis");
  } else {
    for (size_t a : axes) sizes.push_back(out[a]);
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    scale[axes[i]] = static_cast<double>(sizes[i]) / static_cast<double>(in[axes[i]]);
  }
  const std::string policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy == "not_larger" || policy == "not_smaller") {
    double s = scale[axes[0]];
    for (size_t a : axes)
      s = policy == "not_larger" ? std::min(s, scale[a]) : std::max(s, scale[a]);
    for (size_t a : axes) scale[a] = s;
  }
  return scale;
}

// tf_crop_and_resize's region per axis, as (start, end) fractions.
std::vector<std::pair<double, double>> axis_roi(const KernelContext& ctx, const Mode& m,
                                                const std::vector<size_t>& axes, size_t rank) {
  std::vector<std::pair<double, double>> roi(rank, {0.0, 1.0});
  if (m.coord != "tf_crop_and_resize" || !ctx.has_input(1)) return roi;
  const std::vector<double> r = read_floats(ctx.inputs[1]);
  if (r.size() != 2 * axes.size()) bad_input("roi must have two entries per axis");
  for (size_t i = 0; i < axes.size(); ++i) roi[axes[i]] = {r[i], r[i + axes.size()]};
  return roi;
}

// Input coordinate of output position x, as ONNX's reference computes it
// (with the unrounded output length scale * in).
double source_coordinate(const Mode& m, int64_t x_int, double scale, int64_t in, int64_t out,
                         std::pair<double, double> roi) {
  const double x = static_cast<double>(x_int), len = static_cast<double>(in);
  const double out_len = scale * len;
  if (m.coord == "asymmetric") return x / scale;
  if (m.coord == "align_corners") return out_len == 1 ? 0.0 : x * (len - 1) / (out_len - 1);
  if (m.coord == "pytorch_half_pixel") return out_len == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (m.coord == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (m.coord == "half_pixel_symmetric") {
    const double offset = len / 2 * (1 - static_cast<double>(out) / out_len);
    return offset + (x + 0.5) / scale - 0.5;
  }
  if (m.coord == "tf_crop_and_resize") {
    const double span = (roi.second - roi.first) * (len - 1);
    return (out_len == 1 ? span / 2 : x * span / (out_len - 1)) + roi.first * (len - 1);
  }
  return (x + 0.5) / scale - 0.5;  // half_pixel
}

bool nearest_takes_upper(const std::string& mode, double ratio, double scale) {
  if (ratio == 1.0) return true;  // on a sample: take it
  if (mode == "round_prefer_ceil") return ratio >= 0.5;
  if (mode == "floor") return false;
  if (mode == "ceil") return true;
  if (mode == "simple") return scale < 1.0;  // onnxruntime: ceil down, floor up
  return ratio > 0.5;                        // round_prefer_floor
}

double cubic_kernel(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// Weights of taps base + first .. base + first + n - 1 for a coordinate at
// `ratio` in (0, 1] past `base`.
int64_t coefficients(const Mode& m, double ratio, double scale, std::vector<double>& w) {
  w.clear();
  if (m.kind == Kind::kNearest) {
    const bool upper = nearest_takes_upper(m.nearest, ratio, scale);
    w = {upper ? 0.0 : 1.0, upper ? 1.0 : 0.0};
    return 0;
  }
  const bool wide = m.antialias && scale < 1.0;
  const double s = wide ? scale : 1.0;
  const double support = m.kind == Kind::kLinear ? 1.0 : 2.0;
  // Antialiasing stretches the kernel by 1 / scale.
  const int64_t first =
      wide ? static_cast<int64_t>(std::floor(-support / s)) + 1 : 1 - static_cast<int64_t>(support);
  const int64_t n = 2 - 2 * first;
  if (n > kMaxTaps) bad_input("antialiasing scale too small");
  double sum = 0;
  for (int64_t i = first; i < first + n; ++i) {
    const double t = s * (static_cast<double>(i) - ratio);
    w.push_back(m.kind == Kind::kLinear ? std::max(0.0, 1 - std::fabs(t))
                                        : cubic_kernel(t, m.cubic_a));
    sum += w.back();
  }
  if (wide && sum != 0) {
    for (double& v : w) v /= sum;
  }
  return first;
}

// Taps of every output position along one axis.
struct Taps {
  int64_t n = 1;                 // taps per output position
  std::vector<int64_t> index;    // out * n, clamped into [0, in)
  std::vector<double> weight;    // out * n
  std::vector<uint8_t> outside;  // tf_crop_and_resize: writes extrapolation_value
  bool identity = false;
};

// Drops to one tap per position when every position has a single unit
// weight (nearest, or an axis that is not resized).
void collapse(Taps& t, int64_t in) {
  const size_t out = t.outside.size();
  std::vector<int64_t> single(out);
  for (size_t j = 0; j < out; ++j) {
    int64_t found = -1, nonzero = 0;
    for (int64_t k = 0; k < t.n; ++k) {
      const double w = t.weight[j * static_cast<size_t>(t.n) + static_cast<size_t>(k)];
      if (w != 0.0) {
        ++nonzero;
        found = w == 1.0 ? t.index[j * static_cast<size_t>(t.n) + static_cast<size_t>(k)] : -1;
      }
    }
    if (nonzero != 1 || found < 0) return;
    single[j] = found;
  }
  t.n = 1;
  t.index = single;
  t.weight.assign(out, 1.0);
  t.identity = static_cast<int64_t>(out) == in;
  for (size_t j = 0; j < out && t.identity; ++j) {
    t.identity = single[j] == static_cast<int64_t>(j) && !t.outside[j];
  }
}

Taps axis_taps(const Mode& m, double scale, int64_t in, int64_t out,
               std::pair<double, double> roi) {
  if (!(scale > 0) || !std::isfinite(scale)) bad_input("scales must be positive and finite");
  Taps t;
  std::vector<double> w;
  for (int64_t x = 0; x < out; ++x) {
    const double src = source_coordinate(m, x, scale, in, out, roi);
    const bool outside =
        m.coord == "tf_crop_and_resize" && (src < 0 || src > static_cast<double>(in - 1));
    // Clamped so the integer conversion is defined; far outside, every tap
    // clamps to the edge anyway.
    const double c = std::isnan(src) ? 0.0 : std::clamp(src, -1e12, 1e12);
    const int64_t base = static_cast<int64_t>(std::ceil(c)) - 1;
    const int64_t first = coefficients(m, c - static_cast<double>(base), scale, w);
    const auto n = static_cast<int64_t>(w.size());
    if (x == 0) t.n = n;
    if (n != t.n || n * out > kMaxTaps) bad_input("too many interpolation taps");
    if (m.exclude_outside) {
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t idx = base + first + k;
        if (idx < 0 || idx >= in) w[static_cast<size_t>(k)] = 0;
        sum += w[static_cast<size_t>(k)];
      }
      if (sum != 0) {
        for (double& v : w) v /= sum;
      }
    }
    for (int64_t k = 0; k < n; ++k) {
      t.index.push_back(std::clamp<int64_t>(base + first + k, 0, in - 1));
      t.weight.push_back(w[static_cast<size_t>(k)]);
    }
    t.outside.push_back(outside ? 1 : 0);
  }
  collapse(t, in);
  return t;
}

// Two taps per output and none outside (a linear Resize), float32: the
// loops of resize_axis below compiled for each ISA (simd_clones.hpp), the
// last axis's taps read by gathers with AVX-512. Each output is the same
// two products and one add (w0·x0 + w1·x1, each rounded), so every clone
// gives the bytes of the generic loops.
EULERNPU_SIMD_CLONES
void two_tap_last_axis(const float* src, float* dst, int64_t rows, int64_t in_len, int64_t out_len,
                       const int32_t* idx, const float* w) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * in_len;
    float* d = dst + r * out_len;
    for (int64_t j = 0; j < out_len; ++j) {
      d[j] = w[2 * j] * s[idx[2 * j]] + w[2 * j + 1] * s[idx[2 * j + 1]];
    }
  }
}

// 16 outputs of a two-tap pass along the last axis whose taps all lie in
// one window of 16 inputs (upsampling, or a mild downsampling): a load of
// the window and two permutes instead of two gathers. The same products
// and add as two_tap_last_axis, so the same bytes.
using Lanes = float __attribute__((vector_size(64)));
using LaneIndex = int32_t __attribute__((vector_size(64)));
constexpr int64_t kLanes = 16;

// Plain arrays, copied into vectors where used: a 64-byte vector member's
// alignment differs between the baseline build and the AVX-512 clone.
struct Window {
  int32_t tap0[kLanes], tap1[kLanes];  // each output's taps, less `base`
  float w0[kLanes], w1[kLanes];
  int64_t base = 0, first = 0;  // the window's first input; the first output
};

// The windows of every 16 outputs of a row (the last ones overlapping the
// ones before), or none where some 16 outputs' taps spread wider.
std::vector<Window> windows_of(const std::vector<int32_t>& idx, const std::vector<float>& w,
                               int64_t in_len, int64_t out_len) {
  std::vector<Window> out;
  if (in_len < kLanes || out_len < kLanes) return out;
  for (int64_t j = 0; j < out_len; j += kLanes) {
    Window win;
    win.first = std::min(j, out_len - kLanes);
    int32_t lo = INT32_MAX;
    for (int64_t l = 0; l < kLanes; ++l) {
      const size_t at = static_cast<size_t>(2 * (win.first + l));
      lo = std::min({lo, idx[at], idx[at + 1]});
    }
    win.base = std::min<int64_t>(lo, in_len - kLanes);
    for (int64_t l = 0; l < kLanes; ++l) {
      const size_t at = static_cast<size_t>(2 * (win.first + l));
      const int64_t t0 = idx[at] - win.base, t1 = idx[at + 1] - win.base;
      if (t0 < 0 || t0 >= kLanes || t1 < 0 || t1 >= kLanes) return {};
      win.tap0[l] = static_cast<int32_t>(t0);
      win.tap1[l] = static_cast<int32_t>(t1);
      win.w0[l] = w[at];
      win.w1[l] = w[at + 1];
    }
    out.push_back(win);
  }
  return out;
}

EULERNPU_SIMD_CLONES
void two_tap_windows(const float* src, float* dst, int64_t rows, int64_t in_len, int64_t out_len,
                     const Window* win, size_t count) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * in_len;
    float* d = dst + r * out_len;
    for (size_t b = 0; b < count; ++b) {
      Lanes x, w0, w1;
      LaneIndex t0, t1;
      std::memcpy(&x, s + win[b].base, sizeof x);
      std::memcpy(&w0, win[b].w0, sizeof w0);
      std::memcpy(&w1, win[b].w1, sizeof w1);
      std::memcpy(&t0, win[b].tap0, sizeof t0);
      std::memcpy(&t1, win[b].tap1, sizeof t1);
#if defined(__clang__)
      // clang has no variable shuffle of generic vectors: lane by lane.
      Lanes x0, x1;
      for (int64_t l = 0; l < kLanes; ++l) {
        x0[l] = x[t0[l]];
        x1[l] = x[t1[l]];
      }
#else
      const Lanes x0 = __builtin_shuffle(x, t0), x1 = __builtin_shuffle(x, t1);
#endif
      const Lanes y = w0 * x0 + w1 * x1;
      std::memcpy(d + win[b].first, &y, sizeof y);
    }
  }
}

EULERNPU_SIMD_CLONES
void two_tap_rows(const float* s0, const float* s1, float w0, float w1, int64_t inner, float* d) {
  for (int64_t i = 0; i < inner; ++i) d[i] = w0 * s0[i] + w1 * s1[i];
}

// One pass: (outer, in_len, inner) -> (outer, out_len, inner) along an axis.
template <typename T>
void resize_axis(const T* src, T* dst, int64_t outer, int64_t in_len, int64_t inner, const Taps& t,
                 T extrapolation, int threads) {
  const auto out_len = static_cast<int64_t>(t.outside.size());
  if constexpr (std::is_same_v<T, float>) {
    if (t.n == 2 && in_len <= INT32_MAX &&
        std::find(t.outside.begin(), t.outside.end(), 1) == t.outside.end()) {
      std::vector<float> w(t.weight.size());
      for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(t.weight[i]);
      if (inner == 1) {
        const std::vector<int32_t> idx(t.index.begin(), t.index.end());
        const std::vector<Window> win = windows_of(idx, w, in_len, out_len);
        if (!win.empty()) {
          parallel_for(outer, threads, [&](int64_t begin, int64_t end) {
            two_tap_windows(src + begin * in_len, dst + begin * out_len, end - begin, in_len,
                            out_len, win.data(), win.size());
          });
          return;
        }
        parallel_for(outer, threads, [&](int64_t begin, int64_t end) {
          two_tap_last_axis(src + begin * in_len, dst + begin * out_len, end - begin, in_len,
                            out_len, idx.data(), w.data());
        });
      } else {
        parallel_for(outer * out_len, threads, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t o = r / out_len, j = r % out_len;
            const float* s = src + o * in_len * inner;
            const int64_t* idx = t.index.data() + 2 * j;
            two_tap_rows(s + idx[0] * inner, s + idx[1] * inner, w[static_cast<size_t>(2 * j)],
                         w[static_cast<size_t>(2 * j + 1)], inner, dst + r * inner);
          }
        });
      }
      return;
    }
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (inner == 1 && t.n > 1) {
      // Along the last axis: a row at a time, each output's taps summed in
      // a register in the same order (the per-output loop below costs
      // several times the arithmetic when each output is one element).
      std::vector<T> wt(t.weight.size());
      for (size_t i = 0; i < wt.size(); ++i) wt[i] = static_cast<T>(t.weight[i]);
      parallel_for(outer, threads, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          const T* s = src + o * in_len;
          T* d = dst + o * out_len;
          for (int64_t j = 0; j < out_len; ++j) {
            if (t.outside[static_cast<size_t>(j)]) {
              d[j] = extrapolation;
              continue;
            }
            const int64_t* idx = t.index.data() + j * t.n;
            const T* w = wt.data() + j * t.n;
            T acc = w[0] * s[idx[0]];
            for (int64_t k = 1; k < t.n; ++k) acc += w[k] * s[idx[k]];
            d[j] = acc;
          }
        }
      });
      return;
    }
  }
  parallel_for(outer * out_len, threads, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r / out_len, j = r % out_len;
      T* d = dst + r * inner;
      const T* s = src + o * in_len * inner;
      const int64_t* idx = t.index.data() + j * t.n;
      const double* w = t.weight.data() + j * t.n;
      if (t.outside[static_cast<size_t>(j)]) {
        std::fill(d, d + inner, extrapolation);
      } else if (t.n == 1) {
        std::copy(s + idx[0] * inner, s + (idx[0] + 1) * inner, d);
      } else if constexpr (std::is_floating_point_v<T>) {
        // Taps sum in a fixed order, whatever the thread count.
        for (int64_t i = 0; i < inner; ++i) d[i] = static_cast<T>(w[0]) * s[idx[0] * inner + i];
        for (int64_t k = 1; k < t.n; ++k) {
          const T wk = static_cast<T>(w[k]);
          const T* sk = s + idx[k] * inner;
          for (int64_t i = 0; i < inner; ++i) d[i] += wk * sk[i];
        }
      }
    }
  });
}

template <typename T>
void resize_typed(const KernelContext& ctx, const std::vector<Taps>& taps,
                  const std::vector<size_t>& order, const Mode& m) {
  const Buffer& x = ctx.inputs[0];
  const Buffer& y = ctx.outputs[0];
  std::vector<int64_t> shape = x.shape;
  const T* src = x.as<T>();
  std::vector<T> ping, pong;
  if constexpr (!std::is_floating_point_v<T>) {
    for (size_t a : order) {
      if (taps[a].n != 1) corrupt(kScope, "integer tensors resize with mode nearest only");
    }
  }
  if (order.empty()) {
    std::copy(src, src + x.count(), y.as<T>());
    return;
  }
  for (size_t p = 0; p < order.size(); ++p) {
    const size_t a = order[p];
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < a; ++d) outer *= shape[d];
    for (size_t d = a + 1; d < shape.size(); ++d) inner *= shape[d];
    const int64_t in_len = shape[a];
    shape[a] = y.shape[a];
    T* dst = y.as<T>();
    if (p + 1 < order.size()) {
      ping.resize(static_cast<size_t>(outer * shape[a] * inner));
      dst = ping.data();
    }
    const Taps& t = taps[a];
    if (t.n == 1 && std::find(t.outside.begin(), t.outside.end(), 1) == t.outside.end()) {
      // One source index per position: a gather along the axis, the
      // portable kernel an int8 backend runs for a nearest Resize.
      kernels::gather({outer, in_len, inner, sizeof(T)}, t.index.data(),
                      static_cast<int64_t>(t.index.size()), src, dst, task_runner(ctx));
    } else {
      resize_axis(src, dst, outer, in_len, inner, t, static_cast<T>(m.extrapolation), ctx.threads);
    }
    std::swap(ping, pong);
    src = dst;
  }
}

void resize_kernel(const KernelContext& ctx, bool upsample) {
  const Buffer& x = ctx.inputs[0];
  const Buffer& y = ctx.outputs[0];
  if (y.shape.size() != x.shape.size()) corrupt(kScope, "Y must have X's rank");
  if (y.count() == 0) return;
  if (x.count() == 0) {
    // Nothing to interpolate from: the output is all zero bytes.
    std::memset(y.data, 0, static_cast<size_t>(y.count()) * sdk::dtype_size(y.dtype));
    return;
  }
  const Mode m = read_mode(ctx, upsample);
  const std::vector<size_t> axes = read_axes(ctx, x.shape.size());
  const auto scale = axis_scales(ctx, upsample, axes, x.shape, y.shape);
  const auto roi = axis_roi(ctx, m, axes, x.shape.size());
  std::vector<Taps> taps(x.shape.size());
  std::vector<size_t> order;
  for (size_t a = 0; a < x.shape.size(); ++a) {
    taps[a] = axis_taps(m, scale[a], x.shape[a], y.shape[a], roi[a]);
    if (!taps[a].identity) order.push_back(a);
  }
  // Shrinking axes first: later passes then run on less data.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return (y.shape[a] < x.shape[a]) > (y.shape[b] < x.shape[b]);
  });
  switch (x.dtype) {
    case ENP_DTYPE_FLOAT32:
      return resize_typed<float>(ctx, taps, order, m);
    case ENP_DTYPE_FLOAT64:
      return resize_typed<double>(ctx, taps, order, m);
    default:
      dispatch_dtype(x.dtype, [&]<typename T>() {
        if constexpr (!std::is_same_v<T, bool>) resize_typed<T>(ctx, taps, order, m);
      });
  }
}

void resize(const KernelContext& ctx) { resize_kernel(ctx, false); }
void upsample(const KernelContext& ctx) { resize_kernel(ctx, true); }

bool one_of(const std::string& v, std::initializer_list<const char*> allowed) {
  for (const char* a : allowed) {
    if (v == a) return true;
  }
  return false;
}

std::optional<std::string> dtype_problem(const sdk::NodeView& node, const sdk::GraphView& graph,
                                         size_t i, std::initializer_list<int32_t> allowed,
                                         const char* what) {
  if (node.input(i).empty()) return std::nullopt;
  const auto v = graph.value(node.input(i));
  for (int32_t d : allowed) {
    if (v && v->dtype() == d) return std::nullopt;
  }
  return std::string(what) + " has an unsupported dtype";
}

std::optional<std::string> mode_problem(const sdk::NodeView& node, const sdk::GraphView& graph) {
  const std::string mode = node.attr_string("mode", "nearest");
  if (!one_of(mode, {"nearest", "linear", "cubic"})) return "mode '" + mode + "' is unknown";
  const int32_t dtype = graph.value(node.input(0))->dtype();
  if (mode != "nearest" && dtype != ENP_DTYPE_FLOAT32 && dtype != ENP_DTYPE_FLOAT64) {
    return "mode '" + mode + "' needs float32 or float64 data";
  }
  return std::nullopt;
}

std::optional<std::string> resize_check(const sdk::NodeView& node, const sdk::GraphView& graph) {
  if (auto p = mode_problem(node, graph)) return p;
  const std::string coord = node.attr_string("coordinate_transformation_mode", "half_pixel");
  if (!one_of(coord, {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                      "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"})) {
    return "coordinate_transformation_mode '" + coord + "' is unknown";
  }
  const std::string nearest = node.attr_string("nearest_mode", "round_prefer_floor");
  if (!one_of(nearest, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})) {
    return "nearest_mode '" + nearest + "' is unknown";
  }
  const std::string policy = node.attr_string("keep_aspect_ratio_policy", "stretch");
  if (!one_of(policy, {"stretch", "not_larger", "not_smaller"})) {
    return "keep_aspect_ratio_policy '" + policy + "' is unknown";
  }
  const bool old = graph.opset("") < 11;
  const int32_t f32 = ENP_DTYPE_FLOAT32, f64 = ENP_DTYPE_FLOAT64;
  if (auto p = dtype_problem(node, graph, old ? 1 : 2, {f32, f64}, "scales")) return p;
  if (old) return std::nullopt;
  if (auto p = dtype_problem(node, graph, 1, {f32, f64}, "roi")) return p;
  return dtype_problem(node, graph, 3, {ENP_DTYPE_INT64}, "sizes");
}

std::optional<std::string> upsample_check(const sdk::NodeView& node, const sdk::GraphView& graph) {
  if (auto p = mode_problem(node, graph)) return p;
  if (node.input_count() < 2 && !node.find_attribute("scales")) return "scales are missing";
  return dtype_problem(node, graph, 1, {ENP_DTYPE_FLOAT32, ENP_DTYPE_FLOAT64}, "scales");
}

}  // namespace

std::vector<OpEntry> resize_ops() {
  return {
      {"Resize", 10, 0, kF32 | kF64 | kInts,
       "nearest/linear/cubic, every coordinate mode, antialias; integer data nearest only",
       &resize_check, &resize},
      {"Upsample", 7, 9, kF32 | kF64 | kInts, "nearest/linear; integer data nearest only",
       &upsample_check, &upsample},
  };
}

}  // namespace eulernpu::kit
