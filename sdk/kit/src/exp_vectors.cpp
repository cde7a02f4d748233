#include "exp_vectors.hpp"

#include <cmath>
#include <cstring>

#include "eulernpu/sdk/simd_clones.hpp"

namespace eulernpu::kit::exp_vectors {

namespace {

// 8 doubles: one AVX-512 register, two AVX2 ones, four SSE ones.
using D8 = double __attribute__((vector_size(64)));
using I8 = int64_t __attribute__((vector_size(64)));
constexpr int64_t kLanes = 8;

// exp(v) for v in [-708, 708]: v = k ln2 + r with k = round(v / ln2) (the
// 1.5 · 2^52 shifter rounds to nearest) and |r| <= ln2 / 2, ln2 split so
// that k · ln2_hi is exact; exp(r) by its Taylor series to r^13 / 13!
// (the first term left out is below 2^-60); then 2^k put into the exponent.
[[gnu::always_inline]] inline void exp_lanes(D8 v, D8& out) {
  constexpr double kShifter = 6755399441055744.0;  // 1.5 · 2^52
  constexpr double kLog2e = 1.4426950408889634;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  const D8 t = v * kLog2e + kShifter;
  const D8 k = t - kShifter;
  const D8 r = (v - k * kLn2Hi) - k * kLn2Lo;
  D8 p = r * (1.0 / 6227020800.0) + (1.0 / 479001600.0);  // 1/13!, 1/12!
  p = p * r + (1.0 / 39916800.0);
  p = p * r + (1.0 / 3628800.0);
  p = p * r + (1.0 / 362880.0);
  p = p * r + (1.0 / 40320.0);
  p = p * r + (1.0 / 5040.0);
  p = p * r + (1.0 / 720.0);
  p = p * r + (1.0 / 120.0);
  p = p * r + (1.0 / 24.0);
  p = p * r + (1.0 / 6.0);
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const I8 bits = (__builtin_convertvector(k, I8) + 1023) << 52;
  D8 scale;
  std::memcpy(&scale, &bits, sizeof scale);
  out = p * scale;
}

}  // namespace

// Lanes [0, 8) of v in x[j..] - max, the ones below -708 (or -inf) given
// 0 for the polynomial and flagged in `low`.
using F8 = float __attribute__((vector_size(32)));

[[gnu::always_inline]] inline void shifted(const float* x, double max, bool checked, D8& v,
                                           D8& in_range, bool& low) {
  F8 xf;
  std::memcpy(&xf, x, sizeof xf);
  v = __builtin_convertvector(xf, D8) - max;
  in_range = v;
  low = false;
  if (!checked) return;
  for (int64_t l = 0; l < kLanes; ++l) {
    low = low || !(v[l] >= -708.0);
    in_range[l] = v[l] >= -708.0 ? v[l] : 0.0;
  }
}

// out's flagged lanes from glibc's exp.
[[gnu::always_inline]] inline void fix_low(const D8& v, bool low, D8& out) {
  if (!low) return;
  for (int64_t l = 0; l < kLanes; ++l) {
    if (!(v[l] >= -708.0)) out[l] = std::exp(v[l]);
  }
}

EULERNPU_SIMD_CLONES
double exponentials(const float* x, int64_t len, double max, double min, double* e) {
  // Lanes need checking only where some element lies below -708.
  const bool checked = !(min - max >= -708.0);
  D8 lanes = {};
  int64_t j = 0;
  // Four vectors at a time: four independent polynomial chains keep the
  // multiplier and adder busy where one would wait out every step.
  constexpr int kChains = 4;
  for (; j + kChains * kLanes <= len; j += kChains * kLanes) {
    D8 v[kChains], in_range[kChains], out[kChains];
    bool low[kChains];
    for (int c = 0; c < kChains; ++c) {
      shifted(x + j + c * kLanes, max, checked, v[c], in_range[c], low[c]);
    }
    for (int c = 0; c < kChains; ++c) exp_lanes(in_range[c], out[c]);
    for (int c = 0; c < kChains; ++c) {
      fix_low(v[c], low[c], out[c]);
      std::memcpy(e + j + c * kLanes, &out[c], sizeof out[c]);
      lanes += out[c];
    }
  }
  for (; j + kLanes <= len; j += kLanes) {
    D8 v, in_range, out;
    bool low;
    shifted(x + j, max, checked, v, in_range, low);
    exp_lanes(in_range, out);
    fix_low(v, low, out);
    std::memcpy(e + j, &out, sizeof out);
    lanes += out;
  }
  // The last elements go to the lanes their j gives.
  for (int64_t l = 0; j < len; ++j, ++l) {
    const double v = static_cast<double>(x[j]) - max;
    D8 one = {}, out = {};
    one[0] = v;
    if (v >= -708.0) {
      exp_lanes(one, out);
    } else {
      out[0] = std::exp(v);
    }
    e[j] = out[0];
    lanes[l] += out[0];
  }
  for (int64_t half = kLanes / 2; half >= 1; half /= 2) {
    for (int64_t l = 0; l < half; ++l) lanes[l] += lanes[l + half];
  }
  return lanes[0];
}

// Sigmoid of N vectors at x (N independent polynomial chains); an element
// outside [-708, 708] (NaN included) takes glibc's exp.
template <int N>
[[gnu::always_inline]] inline void sigmoid_vectors(const float* x, float* y) {
  D8 v[N], in_range[N], out[N];
  bool outside[N] = {};
  for (int c = 0; c < N; ++c) {
    F8 xf;
    std::memcpy(&xf, x + c * kLanes, sizeof xf);
    v[c] = -__builtin_convertvector(xf, D8);
    in_range[c] = v[c];
    for (int64_t l = 0; l < kLanes; ++l) {
      const bool inside = v[c][l] >= -708.0 && v[c][l] <= 708.0;
      outside[c] = outside[c] || !inside;
      in_range[c][l] = inside ? v[c][l] : 0.0;
    }
  }
  for (int c = 0; c < N; ++c) exp_lanes(in_range[c], out[c]);
  for (int c = 0; c < N; ++c) {
    if (outside[c]) {
      for (int64_t l = 0; l < kLanes; ++l) {
        if (!(v[c][l] >= -708.0 && v[c][l] <= 708.0)) out[c][l] = std::exp(v[c][l]);
      }
    }
    const D8 s = 1.0 / (1.0 + out[c]);
    const F8 f = __builtin_convertvector(s, F8);
    std::memcpy(y + c * kLanes, &f, sizeof f);
  }
}

EULERNPU_SIMD_CLONES
void sigmoid(const float* x, int64_t len, float* y) {
  int64_t j = 0;
  for (; j + 4 * kLanes <= len; j += 4 * kLanes) sigmoid_vectors<4>(x + j, y + j);
  for (; j + kLanes <= len; j += kLanes) sigmoid_vectors<1>(x + j, y + j);
  if (j < len) {
    // The last elements through a vector of their own, the rest of it 0.
    float in[kLanes] = {}, out[kLanes];
    std::memcpy(in, x + j, static_cast<size_t>(len - j) * sizeof(float));
    sigmoid_vectors<1>(in, out);
    std::memcpy(y + j, out, static_cast<size_t>(len - j) * sizeof(float));
  }
}

EULERNPU_SIMD_CLONES
void divide(const double* e, int64_t len, double sum, float* y) {
  for (int64_t j = 0; j < len; ++j) y[j] = static_cast<float>(e[j] / sum);
}

}  // namespace eulernpu::kit::exp_vectors
