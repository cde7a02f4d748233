// Image sampling and crops: GridSample, AffineGrid, CenterCropPad, Col2Im.
//
// Floating-point results are computed in float64 and rounded once, except
// where ONNX's reference works in float32 and its rounding picks a pixel
// (GridSample's coordinates). Several of these ops take shapes or sizes as
// input tensors; the values read at run time are checked against the
// compiled output shape, and a mismatch raises "input tensor value out of
// range" instead of touching memory outside a buffer.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <type_traits>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/status.hpp"
#include "int_values.hpp"
#include "kernel_util.hpp"
#include "operands.hpp"
#include "run_time_inputs.hpp"

namespace eulernpu::kit {
namespace {

// Where this file's corrupt-artifact errors are located.
constexpr std::string_view kScope = "cpu_ref";

using Dims = std::vector<int64_t>;

using namespace run_time_inputs;  // NOLINT(google-build-using-namespace)

// --- CenterCropPad ------------------------------------------------------------

// out[i] = in[i + offset] where that lies inside `in`, else zero; any
// dtype, copied by bytes one innermost row at a time.
void copy_window(const Buffer& in, const Buffer& out, const Dims& offset) {
  const size_t w = sdk::dtype_size(in.dtype);
  auto* dst = static_cast<uint8_t*>(out.data);
  const auto* src = static_cast<const uint8_t*>(in.data);
  const int64_t total = out.count();
  if (total == 0) return;
  std::memset(dst, 0, static_cast<size_t>(total) * w);
  const size_t rank = out.shape.size();
  if (rank == 0) {
    std::memcpy(dst, src, w);
    return;
  }
  if (in.count() == 0) return;
  const int64_t len = out.shape.back(), off = offset.back();
  const int64_t lo = std::clamp<int64_t>(-off, 0, len);
  const int64_t hi = std::clamp<int64_t>(in.shape.back() - off, lo, len);
  const Dims in_strides = strides_of(in.shape);
  Dims idx(rank - 1, 0);
  for (int64_t row = 0; row < total / len; ++row) {
    int64_t base = 0;
    bool inside = hi > lo;
    for (size_t d = 0; inside && d + 1 < rank; ++d) {
      const int64_t s = idx[d] + offset[d];
      inside = s >= 0 && s < in.shape[d];
      base += s * in_strides[d];
    }
    if (inside) {
      std::memcpy(dst + static_cast<size_t>(row * len + lo) * w,
                  src + static_cast<size_t>(base + lo + off) * w, static_cast<size_t>(hi - lo) * w);
    }
    for (size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < out.shape[d]) break;
      idx[d] = 0;
    }
  }
}

void center_crop_pad(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  const auto rank = static_cast<int64_t>(in.shape.size());
  require(kScope, static_cast<int64_t>(out.shape.size()) == rank && out.dtype == in.dtype,
          "CenterCropPad: output differs from input in rank or dtype");
  const Dims shape = read_ints(ctx.inputs[1]);
  Dims axes = ctx.attr_ints("axes");
  if (!ctx.has_attr("axes")) {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (shape.size() != axes.size()) {
    value_out_of_range("CenterCropPad: shape has " + std::to_string(shape.size()) + " values for " +
                       std::to_string(axes.size()) + " axes");
  }
  Dims target = in.shape;
  for (size_t i = 0; i < axes.size(); ++i) {
    target[static_cast<size_t>(normalize_axis(axes[i], rank, "CenterCropPad"))] = shape[i];
  }
  if (target != out.shape) {
    value_out_of_range("CenterCropPad: shape " + dims_string(shape) + " gives " +
                       dims_string(target) + ", not the compiled " + dims_string(out.shape));
  }
  // Both cropping and padding put the odd leftover element at the end.
  Dims offset(in.shape.size());
  for (size_t d = 0; d < offset.size(); ++d) {
    const int64_t diff = in.shape[d] - out.shape[d];
    offset[d] = diff >= 0 ? diff / 2 : -(-diff / 2);
  }
  copy_window(in, out, offset);
}

// --- GridSample -------------------------------------------------------------

enum class Interp { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

struct GridMode {
  Interp interp = Interp::kLinear;
  Padding padding = Padding::kZeros;
  bool align = false;
};

// Opset 16 spells the modes bilinear/bicubic, opset 20 linear/cubic.
std::optional<GridMode> grid_mode(const std::string& mode, const std::string& padding,
                                  int64_t align) {
  GridMode m;
  m.align = align != 0;
  if (mode == "nearest") {
    m.interp = Interp::kNearest;
  } else if (mode == "linear" || mode == "bilinear") {
    m.interp = Interp::kLinear;
  } else if (mode == "cubic" || mode == "bicubic") {
    m.interp = Interp::kCubic;
  } else {
    return std::nullopt;
  }
  if (padding == "zeros") {
    m.padding = Padding::kZeros;
  } else if (padding == "border") {
    m.padding = Padding::kBorder;
  } else if (padding == "reflection") {
    m.padding = Padding::kReflection;
  } else {
    return std::nullopt;
  }
  return m;
}

// Mirrors x into [lo, hi] at the borders, as often as it takes (ONNX's
// reference, after PyTorch).
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x >= lo && x <= hi) return x;
  const double dx = x < lo ? lo - x : x - hi;
  const double flips = std::floor(dx / range);
  const double r = dx - flips * range;
  const bool even = std::fmod(flips, 2.0) == 0.0;
  return x < lo ? (even ? lo + r : hi - r) : (even ? hi - r : lo + r);
}

// Keys' cubic convolution weights (alpha -0.75) of the taps at -1, 0, 1, 2
// for a point t in [0, 1) past tap 0.
std::array<double, 4> cubic_weights(double t) {
  constexpr double a = -0.75;
  auto outer = [](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  auto inner = [](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  return {outer(t + 1), inner(t), inner(1 - t), outer(2 - t)};
}

// The sample positions and weights along one spatial axis; index -1 reads
// zero.
struct Taps {
  int count = 0;
  std::array<int64_t, 4> index{};
  std::array<double, 4> weight{};
};

struct AxisGeometry {
  int64_t size = 1;
  double lo = 0, hi = 0;  // where padding starts
};

int64_t pixel_index(int64_t i, const AxisGeometry& a, Padding p) {
  if (i >= 0 && i < a.size) return i;
  if (a.size <= 0) return -1;
  switch (p) {
    case Padding::kZeros:
      return -1;
    case Padding::kBorder:
      return std::clamp<int64_t>(i, 0, a.size - 1);
    case Padding::kReflection: {
      const auto r = static_cast<int64_t>(reflect(static_cast<double>(i), a.lo, a.hi));
      return std::clamp<int64_t>(r, 0, a.size - 1);
    }
  }
  return -1;
}

Taps axis_taps(double x, const AxisGeometry& a, const GridMode& m) {
  // Far outside, every tap reads padding anyway; clamping keeps the
  // integer conversions defined.
  x = std::clamp(x, -8.0, static_cast<double>(a.size) + 8.0);
  Taps t;
  if (m.interp == Interp::kNearest) {
    t.count = 1;
    t.index[0] = static_cast<int64_t>(x);  // truncates, like the reference's astype
    t.weight[0] = 1.0;
  } else {
    const double x0 = std::floor(x), frac = x - x0;
    const auto i0 = static_cast<int64_t>(x0);
    if (m.interp == Interp::kLinear) {
      t.count = 2;
      t.index = {i0, i0 + 1, 0, 0};
      t.weight = {1.0 - frac, frac, 0.0, 0.0};
    } else {
      t.count = 4;
      t.index = {i0 - 1, i0, i0 + 1, i0 + 2};
      t.weight = cubic_weights(frac);
    }
  }
  for (int k = 0; k < t.count; ++k) t.index[k] = pixel_index(t.index[k], a, m.padding);
  return t;
}

// Grid value g in [-1, 1] to a pixel coordinate, rounded for nearest and
// moved inside for border/reflection padding, in the grid's type as the
// reference computes it (float32 decides which pixel nearest picks).
template <typename G>
double grid_coordinate(G g, const AxisGeometry& a, const GridMode& m) {
  if (a.size <= 0) return 0.0;  // an empty axis: every tap reads zero
  const auto d = static_cast<G>(a.size);
  G x = m.align ? (g + 1) / 2 * (d - 1) : ((g + 1) * d - 1) / 2;
  // Half to even in every rank (ONNX's reference; PyTorch's 3-D kernel
  // rounds half away from zero instead).
  if (m.interp == Interp::kNearest) x = std::nearbyint(x);
  if (x < a.lo || x > a.hi) {
    if (m.padding == Padding::kBorder) x = std::clamp(x, G(0), d - 1);
    if (m.padding == Padding::kReflection) x = static_cast<G>(reflect(x, a.lo, a.hi));
  }
  return static_cast<double>(x);
}

struct GridShape {
  int64_t batch = 0, channels = 0, points = 0;  // points: output positions per image
  size_t rank = 0;                              // spatial dims
  std::array<AxisGeometry, 3> axes{};
  int64_t plane = 1;  // input elements per channel
};

GridShape grid_shape(const KernelContext& ctx, const GridMode& m) {
  const Buffer &x = ctx.inputs[0], &grid = ctx.inputs[1], &y = ctx.outputs[0];
  const size_t r = x.shape.size() - 2;
  require(kScope,
          x.shape.size() >= 3 && r <= 3 && grid.shape.size() == r + 2 &&
              grid.shape.back() == static_cast<int64_t>(r) && y.shape.size() == r + 2 &&
              grid.shape[0] == x.shape[0] && y.shape[0] == x.shape[0] && y.shape[1] == x.shape[1] &&
              std::equal(y.shape.begin() + 2, y.shape.end(), grid.shape.begin() + 1),
          "GridSample: X, grid and Y do not match");
  GridShape s;
  s.batch = x.shape[0];
  s.channels = x.shape[1];
  s.rank = r;
  s.points = product(grid.shape.begin() + 1, grid.shape.end() - 1);
  for (size_t i = 0; i < r; ++i) {
    AxisGeometry& a = s.axes[i];
    a.size = x.shape[i + 2];
    a.lo = m.align ? 0.0 : -0.5;
    a.hi = m.align ? static_cast<double>(a.size) - 1 : static_cast<double>(a.size) - 0.5;
    s.plane *= a.size;
  }
  return s;
}

// One output position for every channel: the taps along each axis, then
// the weighted sum over their combinations. A NaN coordinate gives NaN.
template <typename T, typename G>
void sample_point(const GridShape& s, const GridMode& m, const G* g, const T* x, T* y,
                  int64_t y_stride) {
  std::array<Taps, 3> taps{};
  bool nan = false;
  for (size_t i = 0; i < s.rank; ++i) {
    // The grid's last dim lists x (the innermost axis) first.
    const double c = grid_coordinate(g[s.rank - 1 - i], s.axes[i], m);
    nan = nan || std::isnan(c);
    if (!nan) taps[i] = axis_taps(c, s.axes[i], m);
  }
  for (int64_t ch = 0; ch < s.channels; ++ch) {
    const T* plane = x + ch * s.plane;
    double sum = 0;
    std::array<int, 3> k{0, 0, 0};
    while (!nan) {
      double w = 1.0;
      int64_t at = 0;
      for (size_t i = 0; i < s.rank; ++i) {
        const int64_t idx = taps[i].index[static_cast<size_t>(k[i])];
        w *= taps[i].weight[static_cast<size_t>(k[i])];
        at = idx < 0 || at < 0 ? -1 : at * s.axes[i].size + idx;
      }
      if (at >= 0) sum += w * static_cast<double>(plane[at]);
      size_t i = s.rank;
      while (i-- > 0 && ++k[i] == taps[i].count) k[i] = 0;
      if (i == static_cast<size_t>(-1)) break;
    }
    y[ch * y_stride] = nan ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(sum);
  }
}

void grid_sample(const KernelContext& ctx) {
  const auto m =
      grid_mode(ctx.attr_string("mode", "linear"), ctx.attr_string("padding_mode", "zeros"),
                ctx.attr_int("align_corners", 0));
  require(kScope, m.has_value(), "GridSample: unknown mode or padding_mode");
  const GridShape s = grid_shape(ctx, *m);
  const Buffer &xb = ctx.inputs[0], &gb = ctx.inputs[1];
  dispatch_float(xb.dtype, [&]<typename T>() {
    dispatch_float(gb.dtype, [&]<typename G>() {
      const T* x = xb.as<const T>();
      const G* grid = gb.as<const G>();
      T* y = ctx.outputs[0].as<T>();
      const int64_t work = s.batch * s.points;
      parallel_for(work, threads_for(ctx, work * s.channels), [&](int64_t begin, int64_t end) {
        for (int64_t np = begin; np < end; ++np) {
          const int64_t n = np / s.points, p = np % s.points;
          sample_point<T, G>(s, *m, grid + np * static_cast<int64_t>(s.rank),
                             x + n * s.channels * s.plane, y + n * s.channels * s.points + p,
                             s.points);
        }
      });
    });
  });
}

// --- AffineGrid -------------------------------------------------------------

// The normalized coordinate of pixel i of n: pixel centers (or, with
// align_corners, the corner pixels) at -1 and 1; 0 for a single pixel.
double base_coordinate(int64_t i, int64_t n, bool align) {
  if (n <= 1) return 0.0;
  const auto di = static_cast<double>(i), dn = static_cast<double>(n);
  return align ? -1.0 + 2.0 * di / (dn - 1) : (2.0 * di + 1.0) / dn - 1.0;
}

void affine_grid(const KernelContext& ctx) {
  const Buffer& theta = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  const Dims size = read_ints(ctx.inputs[1]);
  const bool align = ctx.attr_int("align_corners", 0) != 0;
  if (size.size() != 4 && size.size() != 5) {
    value_out_of_range("AffineGrid: size must hold 4 or 5 values");
  }
  const size_t r = size.size() - 2;
  require(kScope,
          theta.shape.size() == 3 && theta.shape[1] == static_cast<int64_t>(r) &&
              theta.shape[2] == static_cast<int64_t>(r) + 1,
          "AffineGrid: theta does not match size");
  Dims expected{size[0]};
  expected.insert(expected.end(), size.begin() + 2, size.end());
  expected.push_back(static_cast<int64_t>(r));
  if (size[0] != theta.shape[0] || expected != out.shape) {
    value_out_of_range("AffineGrid: size " + dims_string(size) + " does not match theta " +
                       dims_string(theta.shape) + " and the compiled grid " +
                       dims_string(out.shape));
  }
  const int64_t points = product(size.begin() + 2, size.end());
  dispatch_float(theta.dtype, [&]<typename T>() {
    const T* th = theta.as<const T>();
    T* y = out.as<T>();
    for (int64_t n = 0; n < size[0]; ++n) {
      const T* m = th + n * static_cast<int64_t>(r * (r + 1));
      for (int64_t p = 0; p < points; ++p) {
        // Homogeneous source point (x, y[, z], 1); x walks the last axis.
        std::array<double, 4> src{0, 0, 0, 1};
        for (size_t i = 0, rest = static_cast<size_t>(p); i < r; ++i) {
          const int64_t dim = size[size.size() - 1 - i];
          src[i] =
              base_coordinate(static_cast<int64_t>(rest % static_cast<size_t>(dim)), dim, align);
          rest /= static_cast<size_t>(dim);
        }
        src[r] = 1.0;
        for (size_t row = 0; row < r; ++row) {
          double v = 0;
          for (size_t c = 0; c <= r; ++c) v += static_cast<double>(m[row * (r + 1) + c]) * src[c];
          y[(n * points + p) * static_cast<int64_t>(r) + static_cast<int64_t>(row)] =
              static_cast<T>(v);
        }
      }
    }
  });
}

// --- Col2Im -----------------------------------------------------------------

struct Col2ImShape {
  Dims image, block, strides, dilations, pads, blocks;  // blocks: sliding positions per axis
  int64_t batch = 0, channels = 0, block_size = 1, columns = 1;
};

Col2ImShape col2im_shape(const KernelContext& ctx) {
  const Buffer &in = ctx.inputs[0], &out = ctx.outputs[0];
  Col2ImShape s;
  s.image = read_ints(ctx.inputs[1]);
  s.block = read_ints(ctx.inputs[2]);
  const size_t n = s.image.size();
  require(kScope, in.shape.size() == 3 && out.shape.size() == n + 2, "Col2Im: ranks do not match");
  if (s.block.size() != n || !std::equal(s.image.begin(), s.image.end(), out.shape.begin() + 2)) {
    value_out_of_range("Col2Im: image_shape " + dims_string(s.image) + " and block_shape " +
                       dims_string(s.block) + " do not match the compiled output " +
                       dims_string(out.shape));
  }
  s.strides = ctx.attr_ints("strides", Dims(n, 1));
  s.dilations = ctx.attr_ints("dilations", Dims(n, 1));
  s.pads = ctx.attr_ints("pads", Dims(2 * n, 0));
  require(kScope, s.strides.size() == n && s.dilations.size() == n && s.pads.size() == 2 * n,
          "Col2Im: attributes do not match the image rank");
  for (size_t i = 0; i < n; ++i) {
    require(kScope, s.strides[i] > 0 && s.dilations[i] > 0,
            "Col2Im: strides and dilations must be positive");
    if (s.block[i] <= 0) value_out_of_range("Col2Im: block_shape must be positive");
    const int64_t room =
        s.image[i] + s.pads[i] + s.pads[i + n] - s.dilations[i] * (s.block[i] - 1) - 1;
    if (room < 0) value_out_of_range("Col2Im: the block does not fit the padded image");
    s.blocks.push_back(room / s.strides[i] + 1);
    s.block_size *= s.block[i];
    s.columns *= s.blocks.back();
  }
  s.batch = in.shape[0];
  s.channels = out.shape[1];
  if (out.shape[0] != s.batch || in.shape[1] != s.channels * s.block_size ||
      in.shape[2] != s.columns) {
    value_out_of_range("Col2Im: input " + dims_string(in.shape) + " does not hold " +
                       std::to_string(s.channels) + " channels of " + std::to_string(s.block_size) +
                       "-element blocks at " + std::to_string(s.columns) + " positions");
  }
  return s;
}

// Coordinates of flat index i in `dims`.
Dims unravel(int64_t i, const Dims& dims) {
  Dims c(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    c[d] = i % dims[d];
    i /= dims[d];
  }
  return c;
}

// Sums every column entry into its image position; each (batch, channel)
// image is one task adding in a fixed order.
void col2im(const KernelContext& ctx) {
  const Col2ImShape s = col2im_shape(ctx);
  const size_t n = s.image.size();
  const int64_t plane = product(s.image);
  std::vector<Dims> offsets, positions;
  for (int64_t k = 0; k < s.block_size; ++k) offsets.push_back(unravel(k, s.block));
  for (int64_t c = 0; c < s.columns; ++c) positions.push_back(unravel(c, s.blocks));
  dispatch_float(ctx.inputs[0].dtype, [&]<typename T>() {
    const T* x = ctx.inputs[0].as<const T>();
    T* y = ctx.outputs[0].as<T>();
    const int64_t work = s.batch * s.channels;
    parallel_for(
        work, threads_for(ctx, work * plane * s.block_size), [&](int64_t begin, int64_t end) {
          for (int64_t nc = begin; nc < end; ++nc) {
            T* img = y + nc * plane;
            std::fill(img, img + plane, T(0));
            for (int64_t k = 0; k < s.block_size; ++k) {
              const Dims& off = offsets[static_cast<size_t>(k)];
              const T* col = x + (nc * s.block_size + k) * s.columns;
              for (int64_t c = 0; c < s.columns; ++c) {
                const Dims& pos = positions[static_cast<size_t>(c)];
                int64_t at = 0;
                bool inside = true;
                for (size_t d = 0; inside && d < n; ++d) {
                  const int64_t i = pos[d] * s.strides[d] - s.pads[d] + off[d] * s.dilations[d];
                  inside = i >= 0 && i < s.image[d];
                  at = at * s.image[d] + i;
                }
                if (inside) img[at] += col[c];
              }
            }
          }
        });
  });
}

// --- lowering checks --------------------------------------------------------

std::optional<std::string> second_index_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  return index_input(node, g, 1);
}

std::optional<std::string> grid_sample_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (!grid_mode(node.attr_string("mode", "linear"), node.attr_string("padding_mode", "zeros"),
                 0)) {
    return "mode '" + node.attr_string("mode", "linear") + "' or padding_mode '" +
           node.attr_string("padding_mode", "zeros") + "' is not supported";
  }
  const Dims x = shape_of(g, node.input(0)), grid = shape_of(g, node.input(1));
  if (x.size() < 3 || x.size() > 5) return "only 1 to 3 spatial dims are supported";
  if (grid.size() != x.size() || grid.back() != static_cast<int64_t>(x.size()) - 2) {
    return "grid " + sdk::shape_string(grid) + " does not match X " + sdk::shape_string(x);
  }
  return input_dtype(node, g, 1, kFloats, "float32, float64");
}

std::optional<std::string> affine_grid_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const Dims theta = shape_of(g, node.input(0));
  if (theta.size() != 3 ||
      !((theta[1] == 2 && theta[2] == 3) || (theta[1] == 3 && theta[2] == 4))) {
    return "theta " + sdk::shape_string(theta) + " is neither (N, 2, 3) nor (N, 3, 4)";
  }
  return index_input(node, g, 1);
}

std::optional<std::string> col2im_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (shape_of(g, node.input(0)).size() != 3) return "input must be (N, C * block, L)";
  if (auto why = index_input(node, g, 1)) return why;
  return index_input(node, g, 2);
}

}  // namespace

std::vector<OpEntry> image_ops() {
  return {
      {"AffineGrid", 20, 0, kFloats, "2-D and 3-D; size read at run time", &affine_grid_check,
       &affine_grid},
      {"CenterCropPad", 18, 0, kAnyDtype, "shape read at run time", &second_index_check,
       &center_crop_pad},
      {"Col2Im", 18, 0, kFloats, "N-D; image and block shapes read at run time", &col2im_check,
       &col2im},
      {"GridSample", 16, 0, kFloats,
       "1-3 spatial dims; nearest, linear, cubic; zeros, border, reflection padding",
       &grid_sample_check, &grid_sample},
  };
}

}  // namespace eulernpu::kit
