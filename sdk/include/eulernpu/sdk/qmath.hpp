// eulernpu's integer arithmetic, written once: every backend (ours and
// vendors') runs int8 graphs with these functions, so their outputs are
// byte-identical. docs/quantization.md states the same rules in prose.
//
// Two kinds of function live here:
//  - compile time (names start with `encode_`/`build_`/`quantize_`): float64
//    in, integers out. Only the quantizer calls them; the integers they
//    return are stored in the artifact, so no backend recomputes a
//    float-derived constant.
//  - run time: integer in, integer out, no floating point, no undefined
//    behaviour for any input (every intermediate is bounded below).
//
// Header-only, no dependencies beyond the standard library. All functions
// are pure and thread-safe.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

namespace eulernpu::sdk::qmath {

// --- rounding and saturation ------------------------------------------------

// Clamps v to [lo, hi].
constexpr int32_t saturate(int64_t v, int32_t lo, int32_t hi) {
  return static_cast<int32_t>(std::clamp<int64_t>(v, lo, hi));
}

constexpr int32_t saturate_int32(int64_t v) {
  return saturate(v, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
}

// Rounds to the nearest integer, ties to even (numpy's round, ONNX
// QuantizeLinear). Compile time only; independent of the FPU rounding mode.
inline double round_half_even(double x) {
  const double f = std::floor(x);
  const double diff = x - f;
  if (diff > 0.5) return f + 1.0;
  if (diff < 0.5) return f;
  return std::fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

// floor((num + den / 2) / den) for den > 0: the quotient rounded to nearest,
// ties toward +infinity — the same rounding as rounding_multiply. Exact for
// every num in int64 that leaves room for the addition (|num| < 2^62).
constexpr int64_t rounding_divide(int64_t num, int64_t den) {
  // 2*num + den and 2*den stay in range for |num|, den < 2^62.
  const int64_t n2 = 2 * num + den, d2 = 2 * den;
  const int64_t q = n2 / d2;
  return (n2 % d2 != 0 && n2 < 0) ? q - 1 : q;  // C++ truncates; we floor
}

// --- fixed-point multipliers --------------------------------------------------

// A positive real r encoded as r ≈ multiplier · 2^-shift with multiplier in
// [2^30, 2^31) (Q31, 31 significant bits) and shift in [1, 62]; r too small
// for that range (r < 2^-32: no int32 input can reach 0.5 after scaling) is
// {0, 1}, which maps everything to 0.
struct FixedMultiplier {
  int32_t multiplier = 0;
  int32_t shift = 1;
};

// True if (m, s) is a FixedMultiplier encode_multiplier can produce: m in
// [2^30, 2^31) with s in [min_shift, 62], or m = 0 (zero, whatever s in
// [1, 62]). An op whose ratio must stay below 2^(31 - min_shift) passes
// min_shift; zero always satisfies that bound, so its shift is not narrowed.
constexpr bool is_valid_multiplier(int64_t m, int64_t s, int64_t min_shift = 1) {
  if (m == 0) return s >= 1 && s <= 62;
  return m >= (int64_t{1} << 30) && m < (int64_t{1} << 31) && s >= min_shift && s <= 62;
}

// Compile time. Throws std::invalid_argument for r < 0, NaN, infinity or
// r >= 2^30 (no int8 scale ratio is that large; a graph asking for it is
// broken). Built without exceptions (the reference kernels on a board,
// which never encode), it aborts instead.
inline FixedMultiplier encode_multiplier(double r) {
  if (!(r >= 0.0) || !std::isfinite(r) || r >= 1073741824.0) {
#if defined(__cpp_exceptions)
    throw std::invalid_argument("fixed-point multiplier out of range: " + std::to_string(r));
#else
    std::abort();
#endif
  }
  if (r < 0x1p-32) return {};
  int e = 0;
  const double m = std::frexp(r, &e);  // r = m · 2^e, m in [0.5, 1)
  auto q = static_cast<int64_t>(round_half_even(std::ldexp(m, 31)));
  if (q == (int64_t{1} << 31)) {  // m rounded up to 1.0: renormalize
    q = int64_t{1} << 30;
    ++e;
  }
  const int shift = 31 - e;
  if (shift > 62) return {};  // only r in [2^-32·(1 - 2^-32), 2^-32) gets here
  return {static_cast<int32_t>(q), shift};
}

// round_half_up(value · multiplier · 2^-shift), saturated to int32: one
// product in int64, one rounding (ties toward +infinity), one saturation.
// The TOSA RESCALE with double_round = false; on Arm the same result as
// SQRDMULH followed by a rounding shift only when no double rounding occurs,
// which is why we do not use that pair. |value · multiplier| < 2^62 and the
// rounding term is at most 2^61, so nothing overflows.
constexpr int32_t rounding_multiply(int32_t value, FixedMultiplier m) {
  const int64_t product = static_cast<int64_t>(value) * m.multiplier;
  const int64_t round = int64_t{1} << (m.shift - 1);
  return saturate_int32((product + round) >> m.shift);  // >> floors (C++20)
}

// The requantization of every int32 accumulator (Conv, Gemm, MatMul, pooling
// sums, rescales): rounding_multiply, then the output zero point, then the
// clamp to [qmin, qmax] — the int8 range, narrowed by a fused Relu/Clip.
constexpr int32_t requantize(int32_t acc, FixedMultiplier m, int32_t zero_point, int32_t qmin,
                             int32_t qmax) {
  return saturate(static_cast<int64_t>(rounding_multiply(acc, m)) + zero_point, qmin, qmax);
}

// --- compile-time quantization of constants ----------------------------------

// A weight at `scale` (symmetric): round half even, clamped to [-127, 127]
// so that -w never overflows and the range is symmetric.
inline int8_t quantize_weight(double w, double scale) {
  const double q = round_half_even(w / scale);
  return static_cast<int8_t>(std::clamp(q, -127.0, 127.0));
}

// A bias at scale s_x · s_w, round half even, saturated to int32.
inline int32_t quantize_bias(double b, double input_scale, double weight_scale) {
  const double q = round_half_even(b / (input_scale * weight_scale));
  return static_cast<int32_t>(std::clamp(q, -2147483648.0, 2147483647.0));
}

// The largest |accumulator| a dot product of `k` terms can reach, with
// inputs of magnitude <= max_x (|q - zero_point| <= 255 for int8) and
// weights <= max_w, plus the bias. The quantizer refuses a layer whose bound
// is 2^31 or more, so int32 accumulation is proven safe before any run.
constexpr int64_t accumulator_bound(int64_t k, int64_t max_x, int64_t max_w, int64_t max_bias) {
  return k * max_x * max_w + max_bias;
}

constexpr bool accumulator_fits_int32(int64_t k, int64_t max_x, int64_t max_w, int64_t max_bias) {
  // k is bounded by tensor sizes (< 2^40), max_x·max_w by 2^16: no overflow.
  return accumulator_bound(k, max_x, max_w, max_bias) <= std::numeric_limits<int32_t>::max();
}

// --- elementwise Add / Sub (TFLite's left-shift-20 scheme) -------------------

// Both inputs are brought to a common scale 2·max(s_a, s_b) / 2^20 with 20
// bits of headroom, added in int32, then rescaled to the output.
struct AddParams {
  int32_t a_zero_point = 0, b_zero_point = 0, out_zero_point = 0;
  FixedMultiplier a, b, out;
  int32_t qmin = -128, qmax = 127;
};

inline constexpr int kAddLeftShift = 20;

// Compile time.
inline AddParams encode_add(double a_scale, int32_t a_zp, double b_scale, int32_t b_zp,
                            double out_scale, int32_t out_zp, int32_t qmin = -128,
                            int32_t qmax = 127) {
  const double twice_max = 2.0 * std::max(a_scale, b_scale);
  AddParams p;
  p.a_zero_point = a_zp;
  p.b_zero_point = b_zp;
  p.out_zero_point = out_zp;
  p.a = encode_multiplier(a_scale / twice_max);
  p.b = encode_multiplier(b_scale / twice_max);
  p.out = encode_multiplier(twice_max / (std::ldexp(1.0, kAddLeftShift) * out_scale));
  p.qmin = qmin;
  p.qmax = qmax;
  return p;
}

// a + b (or a - b), each int8 code within [-128, 255] as its type allows.
// (q - zp) is within ±511 (uint8 zero points included), << 20 stays below
// 2^30, each rescaled term within ±2^29, their sum within int32.
// One input's term of the sum: code q at the common scale.
constexpr int32_t add_term(int32_t q, int32_t zero_point, FixedMultiplier m) {
  return rounding_multiply((q - zero_point) * (1 << kAddLeftShift), m);
}

constexpr int32_t add(int32_t a, int32_t b, const AddParams& p, bool subtract = false) {
  const int32_t sa = add_term(a, p.a_zero_point, p.a);
  const int32_t sb = add_term(b, p.b_zero_point, p.b);
  const int32_t sum = subtract ? sa - sb : sa + sb;
  return requantize(sum, p.out, p.out_zero_point, p.qmin, p.qmax);
}

// --- lookup tables for non-linear ops ----------------------------------------

// out[q + 128] for every int8 code q: f evaluated in float64 on the
// dequantized input, quantized to the output scale with round half even and
// saturation. Compile time; the 256 bytes go into the artifact.
template <typename F>
std::array<int8_t, 256> build_table(F f, double in_scale, int32_t in_zp, double out_scale,
                                    int32_t out_zp) {
  std::array<int8_t, 256> t{};
  for (int q = -128; q <= 127; ++q) {
    const double y = f(in_scale * static_cast<double>(q - in_zp));
    const double v = round_half_even(y / out_scale) + out_zp;
    t[static_cast<size_t>(q + 128)] = static_cast<int8_t>(std::clamp(v, -128.0, 127.0));
  }
  return t;
}

constexpr int8_t lookup(const std::array<int8_t, 256>& table, int8_t q) {
  return table[static_cast<size_t>(q + 128)];
}

// --- softmax ------------------------------------------------------------------

// Integer softmax along a row of int8 codes. The output scale is fixed at
// 1/256 with zero point -128 (the whole int8 range covers [0, 1)), so the
// result needs no float at run time:
//   e[d] = round_half_even(2^20 · exp(-s_in · d)), d = max - q in [0, 255]
//   out  = rounding_divide(256 · e[max - q], Σ e[max - q_j]) - 128,
//          saturated to [-128, 127].
// e[0] = 2^20, so the sum is never 0; 256 · e <= 2^28 and the sum <= n·2^20
// stay far inside int64 for any row length.
inline constexpr double kSoftmaxOutputScale = 1.0 / 256.0;
inline constexpr int32_t kSoftmaxOutputZeroPoint = -128;

inline std::array<int32_t, 256> build_softmax_exp_table(double in_scale) {
  std::array<int32_t, 256> t{};
  for (int d = 0; d < 256; ++d) {
    t[static_cast<size_t>(d)] =
        static_cast<int32_t>(round_half_even(std::ldexp(std::exp(-in_scale * d), 20)));
  }
  return t;
}

// `row` of n codes in, n codes out (may alias).
inline void softmax_row(const int8_t* row, int8_t* out, int64_t n,
                        const std::array<int32_t, 256>& exp_table) {
  int32_t max = -128;
  for (int64_t i = 0; i < n; ++i) max = std::max<int32_t>(max, row[i]);
  int64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += exp_table[static_cast<size_t>(max - row[i])];
  for (int64_t i = 0; i < n; ++i) {
    const int64_t e = exp_table[static_cast<size_t>(max - row[i])];
    out[i] = static_cast<int8_t>(
        saturate(rounding_divide(256 * e, sum) + kSoftmaxOutputZeroPoint, -128, 127));
  }
}

}  // namespace eulernpu::sdk::qmath
