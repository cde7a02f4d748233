#include "adaptive_rounding.hpp"

#include <cblas.h>

#include "conv_window.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace eulernpu::int8_quantizer {

namespace {

double finite_or_zero(float v) { return std::isfinite(v) ? static_cast<double>(v) : 0.0; }

bool within(int64_t features, int64_t groups) {
  return features > 0 && features <= InputMoments::kMaxFeatures &&
         groups * features * features <= InputMoments::kMaxDoubles;
}

}  // namespace

InputMoments::InputMoments(std::vector<int64_t> kernel, std::vector<int64_t> strides,
                           std::vector<int64_t> dilations, std::vector<int64_t> pads, int64_t group,
                           int64_t channels)
    : conv_(true),
      kernel_(std::move(kernel)),
      strides_(std::move(strides)),
      dilations_(std::move(dilations)),
      pads_(std::move(pads)),
      group_(group),
      channels_(channels) {
  const size_t r = kernel_.size();
  if (r < 1 || r > 3 || strides_.size() != r || dilations_.size() != r || pads_.size() != 2 * r ||
      group_ < 1 || channels_ < 1 || channels_ % group_ != 0) {
    throw std::invalid_argument("a Conv geometry of 1 to 3 spatial dims and a valid group");
  }
  int64_t taps = 1;
  for (int64_t k : kernel_) {
    if (k < 1) throw std::invalid_argument("a kernel size below 1");
    taps *= k;
  }
  for (size_t i = 0; i < r; ++i) {
    if (strides_[i] < 1 || dilations_[i] < 1 || pads_[i] < 0 || pads_[i + r] < 0) {
      throw std::invalid_argument("a stride, dilation or pad out of range");
    }
  }
  features_ = channels_ / group_ * taps;
  usable_ = within(features_, group_);
  if (usable_) sums_.assign(static_cast<size_t>(group_ * features_ * features_), 0.0);
}

InputMoments::InputMoments(int64_t features) : features_(features) {
  usable_ = within(features_, 1);
  if (usable_) sums_.assign(static_cast<size_t>(features_ * features_), 0.0);
}

void InputMoments::accumulate(int64_t g, const std::vector<double>& block, int64_t rows) {
  if (rows == 0) return;
  const auto f = static_cast<blasint>(features_);
  cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, f, static_cast<blasint>(rows), 1.0,
              block.data(), f, 1.0, sums_.data() + g * features_ * features_, f);
}

void InputMoments::observe(std::span<const float> values, std::span<const int64_t> dims) {
  if (!usable_) return;
  int64_t total = 1;
  for (int64_t d : dims) {
    if (d < 0) throw std::invalid_argument("a negative dimension");
    total *= d;
  }
  if (static_cast<size_t>(total) != values.size()) {
    throw std::invalid_argument("the values do not fill the shape");
  }
  std::vector<double> block;
  if (!conv_) {
    if (dims.empty() || dims.back() != features_) {
      throw std::invalid_argument("the last axis is not the features");
    }
    const int64_t rows = total / features_;
    const int64_t step = std::max<int64_t>(1, (rows + kRowsPerSample - 1) / kRowsPerSample);
    block.reserve(static_cast<size_t>((rows / step + 1) * features_));
    int64_t taken = 0;
    for (int64_t row = 0; row < rows; row += step, ++taken) {
      for (int64_t i = 0; i < features_; ++i) {
        block.push_back(finite_or_zero(values[static_cast<size_t>(row * features_ + i)]));
      }
    }
    accumulate(0, block, taken);
    rows_ += static_cast<uint64_t>(taken);
    return;
  }
  if (dims.size() != kernel_.size() + 2 || dims[1] != channels_) {
    throw std::invalid_argument("the input does not fit the Conv");
  }
  const ConvWindow win(dims, kernel_, strides_, dilations_, pads_);
  const auto &in = win.in, &k = win.k, &st = win.st, &dl = win.dl, &pd = win.pd, &out = win.out;
  const int64_t taps = win.taps();
  const int64_t per_group = channels_ / group_;
  const int64_t plane = win.plane();
  const int64_t outputs = win.outputs();
  const int64_t positions = dims[0] * outputs;
  if (positions == 0) return;
  const int64_t step = std::max<int64_t>(1, (positions + kRowsPerSample - 1) / kRowsPerSample);
  const int64_t rows = (positions + step - 1) / step;
  block.resize(static_cast<size_t>(rows * features_));
  for (int64_t g = 0; g < group_; ++g) {
    std::fill(block.begin(), block.end(), 0.0);
    int64_t row = 0;
    for (int64_t p = 0; p < positions; p += step, ++row) {
      const int64_t n = p / outputs;
      const int64_t o = p % outputs;
      const int64_t o0 = o / (out[1] * out[2]), o1 = o / out[2] % out[1], o2 = o % out[2];
      double* dst = block.data() + row * features_;
      for (int64_t c = 0; c < per_group; ++c) {
        const float* src = values.data() + (n * channels_ + g * per_group + c) * plane;
        int64_t t = c * taps;
        for (int64_t a = 0; a < k[0]; ++a) {
          const int64_t i0 = o0 * st[0] - pd[0] + a * dl[0];
          for (int64_t b = 0; b < k[1]; ++b) {
            const int64_t i1 = o1 * st[1] - pd[1] + b * dl[1];
            for (int64_t e = 0; e < k[2]; ++e, ++t) {
              const int64_t i2 = o2 * st[2] - pd[2] + e * dl[2];
              if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
              dst[t] = finite_or_zero(src[(i0 * in[1] + i1) * in[2] + i2]);
            }
          }
        }
      }
    }
    accumulate(g, block, rows);
  }
  rows_ += static_cast<uint64_t>(rows);
}

std::vector<double> InputMoments::moments(int64_t g) const {
  if (!usable_ || rows_ == 0 || g < 0 || g >= group_) return {};
  const int64_t f = features_;
  std::vector<double> h(sums_.begin() + g * f * f, sums_.begin() + (g + 1) * f * f);
  const double inv = 1.0 / static_cast<double>(rows_);
  for (int64_t i = 0; i < f; ++i) {
    for (int64_t j = i; j < f; ++j) {
      const double v = h[static_cast<size_t>(i * f + j)] * inv;
      h[static_cast<size_t>(i * f + j)] = v;
      h[static_cast<size_t>(j * f + i)] = v;
    }
  }
  return h;
}

std::optional<RoundingResult> adaptive_round(QuantizedWeights& q, std::span<const float> w,
                                             const InputMoments& moments) {
  const int64_t k = moments.features();
  if (k <= 0 || q.values.size() != w.size() || q.values.size() % static_cast<size_t>(k) != 0) {
    throw std::invalid_argument("the weights do not fit the input moments");
  }
  const auto channels = static_cast<int64_t>(q.values.size()) / k;
  const int64_t groups = moments.groups();
  if (channels % groups != 0 || (q.scales.size() != 1 && q.scales.size() != size_t(channels))) {
    throw std::invalid_argument("the output channels do not fit the groups or the scales");
  }
  if (!moments.usable() || moments.rows() == 0) return std::nullopt;
  RoundingResult result;
  const int64_t per_group = channels / groups;
  // A flip must lower the error by more than rounding noise in the sums.
  constexpr double kMinGain = 1e-12;
  constexpr int kMaxSweeps = 32;
  std::vector<double> e(static_cast<size_t>(per_group * k)), grad(e.size());
  std::vector<double> lo(static_cast<size_t>(k));
  for (int64_t g = 0; g < groups; ++g) {
    const std::vector<double> h = moments.moments(g);
    const int64_t first = g * per_group;
    for (int64_t o = 0; o < per_group; ++o) {
      const double s = q.scales.size() == 1 ? q.scales[0] : q.scales[size_t(first + o)];
      for (int64_t i = 0; i < k; ++i) {
        const auto at = static_cast<size_t>((first + o) * k + i);
        e[size_t(o * k + i)] = s > 0 ? q.values[at] - static_cast<double>(w[at]) / s : 0.0;
      }
    }
    // grad = e · H for every channel of the group at once (H symmetric).
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(per_group),
                static_cast<blasint>(k), static_cast<blasint>(k), 1.0, e.data(),
                static_cast<blasint>(k), h.data(), static_cast<blasint>(k), 0.0, grad.data(),
                static_cast<blasint>(k));
    for (int64_t o = 0; o < per_group; ++o) {
      const double s = q.scales.size() == 1 ? q.scales[0] : q.scales[size_t(first + o)];
      if (!(s > 0)) continue;
      double* eo = e.data() + o * k;
      double* go = grad.data() + o * k;
      int8_t* codes = q.values.data() + (first + o) * k;
      double before = 0;
      for (int64_t i = 0; i < k; ++i) {
        before += eo[i] * go[i];
        lo[size_t(i)] = std::floor(static_cast<double>(w[size_t((first + o) * k + i)]) / s);
      }
      result.nearest_error += s * s * before;
      for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
        bool changed = false;
        for (int64_t i = 0; i < k; ++i) {
          const double hii = h[size_t(i * k + i)];
          if (!(hii > 0)) continue;
          const double alt = codes[i] == lo[size_t(i)] ? lo[size_t(i)] + 1 : lo[size_t(i)];
          if (alt < -127 || alt > 127) continue;
          const double d = alt - codes[i];
          // The error's change, eᵀHe → (e + d·u_i)ᵀH(e + d·u_i).
          if (2 * d * go[i] + d * d * hii >= -kMinGain * hii) continue;
          codes[i] = static_cast<int8_t>(alt);
          eo[i] += d;
          const double* hi = h.data() + i * k;
          for (int64_t j = 0; j < k; ++j) go[j] += d * hi[j];
          changed = true;
        }
        if (!changed) break;
      }
      double after = 0;
      for (int64_t i = 0; i < k; ++i) {
        after += eo[i] * go[i];
        const double t = static_cast<double>(w[size_t((first + o) * k + i)]) / s;
        if (static_cast<double>(codes[i]) != std::clamp(std::nearbyint(t), -127.0, 127.0)) {
          ++result.flipped;
        }
      }
      result.adaptive_error += s * s * after;
    }
  }
  return result;
}

}  // namespace eulernpu::int8_quantizer
