// The signal ops: DFT, STFT, the window functions and MelWeightMatrix.
// Transforms are direct sums in float64, rounded once; lengths and axes read
// at run time are checked against the compiled output shape ("input tensor
// value out of range"), never used to index outside a buffer.
#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "eulernpu/kit/errors.hpp"
#include "kernel_util.hpp"
#include "operands.hpp"
#include "run_time_inputs.hpp"

namespace eulernpu::kit {
namespace {

using namespace run_time_inputs;  // NOLINT(google-build-using-namespace)

// Where this file's corrupt-artifact errors are located.
constexpr std::string_view kScope = "cpu_ref";

using Dims = std::vector<int64_t>;

// --- DFT and STFT -----------------------------------------------------------

// cos and sin of 2*pi*j/n for j in [0, n): the exact angle for every
// frequency-time product (taken mod n).
struct Twiddles {
  std::vector<double> cos, sin;
  explicit Twiddles(int64_t n) : cos(static_cast<size_t>(n)), sin(static_cast<size_t>(n)) {
    for (int64_t j = 0; j < n; ++j) {
      const double a = 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(n);
      cos[static_cast<size_t>(j)] = std::cos(a);
      sin[static_cast<size_t>(j)] = std::sin(a);
    }
  }
};

struct Complex {
  double re = 0, im = 0;
};

// X[f] = sum_k x[k] e^(-+2 pi i f k / n) for f < out_len, over the first
// min(len, n) entries of x (the rest count as zero).
void dft_line(const std::vector<Complex>& x, int64_t n, int64_t out_len, bool inverse,
              const Twiddles& tw, std::vector<Complex>& out) {
  const int64_t len = std::min<int64_t>(static_cast<int64_t>(x.size()), n);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t f = 0; f < out_len; ++f) {
    Complex acc;
    for (int64_t k = 0; k < len; ++k) {
      const auto j = static_cast<size_t>(f * k % n);
      const Complex v = x[static_cast<size_t>(k)];
      acc.re += v.re * tw.cos[j] - sign * v.im * tw.sin[j];
      acc.im += v.im * tw.cos[j] + sign * v.re * tw.sin[j];
    }
    out[static_cast<size_t>(f)] = acc;
  }
}

// numpy's irfft: the n real samples whose spectrum's first n/2 + 1 bins are
// x (the imaginary parts of the DC and Nyquist bins are ignored).
void inverse_real_line(const std::vector<Complex>& x, int64_t n, const Twiddles& tw,
                       std::vector<Complex>& out) {
  const auto len = static_cast<int64_t>(x.size());
  for (int64_t t = 0; t < n; ++t) {
    double acc = len > 0 ? x[0].re : 0.0;
    for (int64_t k = 1; k < len && 2 * k < n; ++k) {
      const auto j = static_cast<size_t>(k * t % n);
      const Complex v = x[static_cast<size_t>(k)];
      acc += 2.0 * (v.re * tw.cos[j] - v.im * tw.sin[j]);
    }
    if (n % 2 == 0 && n / 2 < len) acc += x[static_cast<size_t>(n / 2)].re * (t % 2 ? -1.0 : 1.0);
    out[static_cast<size_t>(t)] = {acc / static_cast<double>(n), 0.0};
  }
}

struct DftPlan {
  int64_t axis = 1, n = 0, out_len = 0;
  bool inverse = false, onesided = false;
};

DftPlan dft_plan(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const auto rank = static_cast<int64_t>(in.shape.size());
  require(kScope, rank >= 2 && (in.shape.back() == 1 || in.shape.back() == 2),
          "DFT: the input's last dim must be 1 (real) or 2 (complex)");
  DftPlan p;
  p.inverse = ctx.attr_int("inverse", 0) != 0;
  p.onesided = ctx.attr_int("onesided", 0) != 0;
  // Opset 20 moved axis from an attribute (default 1) to input 2 (-2).
  int64_t axis = ctx.opset >= 20 ? -2 : ctx.attr_int("axis", 1);
  if (ctx.opset >= 20 && ctx.has_input(2)) axis = read_scalar(ctx.inputs[2], "DFT: axis");
  p.axis = normalize_axis(axis, rank, "DFT");
  if (p.axis == rank - 1) value_out_of_range("DFT: the axis may not be the last (complex) dim");
  const int64_t len = in.shape[static_cast<size_t>(p.axis)];
  const bool real_out = p.inverse && p.onesided;
  p.n = real_out ? 2 * (len - 1) : len;
  if (ctx.has_input(1)) p.n = read_scalar(ctx.inputs[1], "DFT: dft_length");
  if (p.n <= 0) value_out_of_range("DFT: dft_length must be positive, not " + std::to_string(p.n));
  p.out_len = real_out || !p.onesided ? p.n : p.n / 2 + 1;
  Dims expected = in.shape;
  expected[static_cast<size_t>(p.axis)] = p.out_len;
  expected.back() = real_out ? 1 : 2;
  if (expected != ctx.outputs[0].shape) {
    value_out_of_range("DFT: the transform gives " + dims_string(expected) + ", not the compiled " +
                       dims_string(ctx.outputs[0].shape));
  }
  return p;
}

void dft(const KernelContext& ctx) {
  const DftPlan p = dft_plan(ctx);
  const Buffer& in = ctx.inputs[0];
  const Dims& s = in.shape;
  const auto axis = static_cast<size_t>(p.axis);
  const int64_t len = s[axis], c_in = s.back(), c_out = ctx.outputs[0].shape.back();
  const int64_t inner = product(s.begin() + static_cast<std::ptrdiff_t>(axis) + 1, s.end() - 1);
  const int64_t outer = product(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(axis));
  const Twiddles tw(p.n);
  const bool real_out = p.inverse && p.onesided;
  const double scale = p.inverse ? 1.0 / static_cast<double>(p.n) : 1.0;
  dispatch_float(in.dtype, [&]<typename T>() {
    const T* x = in.as<const T>();
    T* y = ctx.outputs[0].as<T>();
    parallel_for(
        outer * inner, threads_for(ctx, outer * inner * p.n * len), [&](int64_t b, int64_t e) {
          std::vector<Complex> line(static_cast<size_t>(len)), res(static_cast<size_t>(p.out_len));
          for (int64_t l = b; l < e; ++l) {
            const int64_t o = l / inner, i = l % inner;
            for (int64_t k = 0; k < len; ++k) {
              const T* v = x + ((o * len + k) * inner + i) * c_in;
              line[static_cast<size_t>(k)] = {static_cast<double>(v[0]),
                                              c_in == 2 ? static_cast<double>(v[1]) : 0.0};
            }
            if (real_out) {
              inverse_real_line(line, p.n, tw, res);
            } else {
              dft_line(line, p.n, p.out_len, p.inverse, tw, res);
            }
            for (int64_t f = 0; f < p.out_len; ++f) {
              T* v = y + ((o * p.out_len + f) * inner + i) * c_out;
              const Complex r = res[static_cast<size_t>(f)];
              v[0] = static_cast<T>(real_out ? r.re : r.re * scale);
              if (c_out == 2) v[1] = static_cast<T>(r.im * scale);
            }
          }
        });
  });
}

// Frames of `frame_length` samples every `frame_step`, each weighted by the
// window and transformed: out[b, frame, bin] = sum_t w[t] x[b, frame * step
// + t] e^(-2 pi i bin t / frame_length).
void stft(const KernelContext& ctx) {
  const Buffer& sig = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  require(kScope, sig.shape.size() == 3 && (sig.shape[2] == 1 || sig.shape[2] == 2),
          "STFT: the signal must be (batch, length, 1 or 2)");
  const int64_t batch = sig.shape[0], length = sig.shape[1], c_in = sig.shape[2];
  const int64_t step = read_scalar(ctx.inputs[1], "STFT: frame_step");
  const bool has_window = ctx.has_input(2);
  int64_t frame = has_window ? ctx.inputs[2].count() : length;
  if (ctx.has_input(3)) frame = read_scalar(ctx.inputs[3], "STFT: frame_length");
  if (step <= 0 || frame <= 0 || frame > length || (has_window && ctx.inputs[2].count() != frame)) {
    value_out_of_range("STFT: frame_step " + std::to_string(step) + " and frame_length " +
                       std::to_string(frame) + " do not fit the signal and window");
  }
  const int64_t frames = 1 + (length - frame) / step;
  const int64_t bins = ctx.attr_int("onesided", 1) != 0 ? frame / 2 + 1 : frame;
  if (out.shape != Dims{batch, frames, bins, 2}) {
    value_out_of_range("STFT: the frames give " + dims_string({batch, frames, bins, 2}) +
                       ", not the compiled " + dims_string(out.shape));
  }
  const Twiddles tw(frame);
  dispatch_float(sig.dtype, [&]<typename T>() {
    const T* x = sig.as<const T>();
    const T* w = has_window ? ctx.inputs[2].as<const T>() : nullptr;
    T* y = out.as<T>();
    parallel_for(
        batch * frames, threads_for(ctx, batch * frames * bins * frame), [&](int64_t b, int64_t e) {
          std::vector<Complex> line(static_cast<size_t>(frame)), res(static_cast<size_t>(bins));
          for (int64_t bf = b; bf < e; ++bf) {
            const T* src = x + (bf / frames * length + bf % frames * step) * c_in;
            for (int64_t t = 0; t < frame; ++t) {
              const double wt = w ? static_cast<double>(w[t]) : 1.0;
              line[static_cast<size_t>(t)] = {
                  wt * static_cast<double>(src[t * c_in]),
                  c_in == 2 ? wt * static_cast<double>(src[t * c_in + 1]) : 0.0};
            }
            dft_line(line, frame, bins, false, tw, res);
            for (int64_t k = 0; k < bins; ++k) {
              y[(bf * bins + k) * 2] = static_cast<T>(res[static_cast<size_t>(k)].re);
              y[(bf * bins + k) * 2 + 1] = static_cast<T>(res[static_cast<size_t>(k)].im);
            }
          }
        });
  });
}

// --- window functions and MelWeightMatrix -----------------------------------

enum class Window { kHann, kHamming, kBlackman };

// The window's value at n of a period of `period` samples.
template <Window W>
double window_value(double n, double period) {
  const double a = 2.0 * std::numbers::pi * n / period;
  if constexpr (W == Window::kHann) {
    const double s = std::sin(std::numbers::pi * n / period);
    return s * s;
  } else if constexpr (W == Window::kHamming) {
    constexpr double alpha = 25.0 / 46.0;
    return alpha - (1.0 - alpha) * std::cos(a);
  } else {
    return 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2.0 * a);
  }
}

// Periodic windows span `size` samples, symmetric ones size - 1; a
// one-sample symmetric window is 1 (as PyTorch defines it).
template <Window W>
void window_kernel(const KernelContext& ctx) {
  const Buffer& out = ctx.outputs[0];
  const int64_t size = read_scalar(ctx.inputs[0], "window size");
  if (out.shape != Dims{size}) {
    value_out_of_range("window size " + std::to_string(size) + " differs from the compiled " +
                       dims_string(out.shape));
  }
  const bool periodic = ctx.attr_int("periodic", 1) != 0;
  const auto period = static_cast<double>(periodic ? size : size - 1);
  dispatch_float(out.dtype, [&]<typename T>() {
    T* y = out.as<T>();
    for (int64_t n = 0; n < size; ++n) {
      y[n] = static_cast<T>(period == 0 ? 1.0 : window_value<W>(static_cast<double>(n), period));
    }
  });
}

double read_float_scalar(const Buffer& b, const char* what) {
  if (b.count() != 1) value_out_of_range(std::string(what) + " must hold one value");
  if (b.dtype == ENP_DTYPE_FLOAT32) return b.as<const float>()[0];
  require(kScope, b.dtype == ENP_DTYPE_FLOAT64, std::string(what) + " must be float32 or float64");
  return b.as<const double>()[0];
}

// The spectrogram bin of each of the num_mel_bins + 2 mel band edges, as
// ONNX's reference computes them.
Dims mel_edges(int64_t mel_bins, int64_t dft_length, int64_t sample_rate, double lo, double hi) {
  const double lo_mel = 2595.0 * std::log10(1.0 + lo / 700.0);
  const double hi_mel = 2595.0 * std::log10(1.0 + hi / 700.0);
  const double step = (hi_mel - lo_mel) / static_cast<double>(mel_bins + 2);
  const int64_t spectrogram_bins = dft_length / 2 + 1;
  Dims edges;
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz =
        700.0 * (std::pow(10.0, (static_cast<double>(i) * step + lo_mel) / 2595.0) - 1.0);
    const double bin =
        std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
    // The last edge only bounds a loop; every other one is written to.
    const int64_t limit = i == mel_bins + 1 ? spectrogram_bins : spectrogram_bins - 1;
    if (!(bin >= 0 && bin <= static_cast<double>(limit))) {
      value_out_of_range("MelWeightMatrix: the band edges " + std::to_string(lo) + " to " +
                         std::to_string(hi) + " Hz fall outside the spectrogram of sample rate " +
                         std::to_string(sample_rate));
    }
    edges.push_back(static_cast<int64_t>(bin));
  }
  return edges;
}

// Triangular filters rising from edge i to i + 1 and falling to i + 2.
void mel_weight_matrix(const KernelContext& ctx) {
  const int64_t mel_bins = read_scalar(ctx.inputs[0], "MelWeightMatrix: num_mel_bins");
  const int64_t dft_length = read_scalar(ctx.inputs[1], "MelWeightMatrix: dft_length");
  const int64_t sample_rate = read_scalar(ctx.inputs[2], "MelWeightMatrix: sample_rate");
  const double lo = read_float_scalar(ctx.inputs[3], "lower_edge_hertz");
  const double hi = read_float_scalar(ctx.inputs[4], "upper_edge_hertz");
  const Buffer& out = ctx.outputs[0];
  if (mel_bins < 0 || dft_length <= 0 || sample_rate <= 0 ||
      out.shape != Dims{dft_length / 2 + 1, mel_bins}) {
    value_out_of_range("MelWeightMatrix: num_mel_bins " + std::to_string(mel_bins) +
                       ", dft_length " + std::to_string(dft_length) + " and sample_rate " +
                       std::to_string(sample_rate) + " do not fit the compiled " +
                       dims_string(out.shape));
  }
  const Dims e = mel_edges(mel_bins, dft_length, sample_rate, lo, hi);
  std::vector<double> w(static_cast<size_t>(out.count()), 0.0);
  auto at = [&](int64_t row, int64_t col) -> double& {
    return w[static_cast<size_t>(row * mel_bins + col)];
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t l = e[static_cast<size_t>(i)], c = e[static_cast<size_t>(i) + 1],
                  h = e[static_cast<size_t>(i) + 2];
    if (c == l) at(c, i) = 1.0;
    for (int64_t j = l; c > l && j <= c; ++j) {
      at(j, i) = static_cast<double>(j - l) / static_cast<double>(c - l);
    }
    for (int64_t j = c; j < h; ++j)
      at(j, i) = static_cast<double>(h - j) / static_cast<double>(h - c);
  }
  dispatch_float(out.dtype, [&]<typename T>() {
    std::transform(w.begin(), w.end(), out.as<T>(), [](double v) { return static_cast<T>(v); });
  });
}

// --- lowering checks --------------------------------------------------------

std::optional<std::string> dft_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const Dims x = shape_of(g, node.input(0));
  if (x.size() < 2 || (x.back() != 1 && x.back() != 2)) {
    return "input " + sdk::shape_string(x) + " must end in a dim of 1 (real) or 2 (complex)";
  }
  if (auto why = index_input(node, g, 1)) return why;
  return index_input(node, g, 2);
}

std::optional<std::string> stft_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const Dims x = shape_of(g, node.input(0));
  if (x.size() != 3 || (x.back() != 1 && x.back() != 2)) {
    return "signal " + sdk::shape_string(x) + " must be (batch, length, 1 or 2)";
  }
  if (!node.input(2).empty() && dtype_of(g, node.input(2)) != dtype_of(g, node.input(0))) {
    return "the window's dtype differs from the signal's";
  }
  if (auto why = index_input(node, g, 1)) return why;
  return index_input(node, g, 3);
}

std::optional<std::string> mel_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (auto why = index_input(node, g, i)) return why;
  }
  for (size_t i : {size_t{3}, size_t{4}}) {
    if (auto why = input_dtype(node, g, i, kFloats, "float32, float64")) return why;
  }
  return output_float(node, g);
}

}  // namespace

std::vector<OpEntry> signal_ops() {
  constexpr const char* kWindow = "periodic or symmetric; float32/float64 output";
  return {
      {"BlackmanWindow", 17, 0, kIndex, kWindow, &output_float, &window_kernel<Window::kBlackman>},
      {"DFT", 17, 0, kFloats,
       "real or complex input, onesided, inverse (onesided inverse gives real output), "
       "dft_length; direct O(n^2) transform in float64",
       &dft_check, &dft},
      {"HammingWindow", 17, 0, kIndex, kWindow, &output_float, &window_kernel<Window::kHamming>},
      {"HannWindow", 17, 0, kIndex, kWindow, &output_float, &window_kernel<Window::kHann>},
      {"MelWeightMatrix", 17, 0, kIndex, "float32/float64 output", &mel_check, &mel_weight_matrix},
      {"STFT", 17, 0, kFloats, "real or complex signal, optional window; direct transform",
       &stft_check, &stft},
  };
}

}  // namespace eulernpu::kit
