// IEEE half precision, bfloat16 and float narrowing, exactly and
// independent of the FPU rounding mode: shared by every kernel that stores
// float16 or bfloat16 or rounds a double result into float, and by the
// host's comparison of outputs.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace eulernpu::sdk::float16 {

// A float16 element as stored (kernels widen it with half_to_*).
struct Half {
  uint16_t bits;
};

inline double half_to_double(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  double magnitude = 0;
  if (exponent == 0x1f) {
    magnitude = mantissa != 0 ? std::numeric_limits<double>::quiet_NaN()
                              : std::numeric_limits<double>::infinity();
  } else if (exponent == 0) {
    magnitude = std::ldexp(mantissa, -24);  // subnormal
  } else {
    magnitude = std::ldexp(mantissa + 1024, exponent - 25);
  }
  return (h & 0x8000) != 0 ? -magnitude : magnitude;
}

// Exact: every half is a float.
inline float half_to_float(uint16_t h) { return static_cast<float>(half_to_double(h)); }

// Round half to even; x - floor(x) is exact in binary floating point.
template <typename T>
T round_half_even(T x) {
  T r = std::floor(x);
  const T diff = x - r;
  if (diff > T(0.5) || (diff == T(0.5) && std::fmod(r, T(2)) != 0)) r += 1;
  return r;
}

// Rounds straight from double (no double rounding through float).
inline uint16_t half_from_double(double x) {
  const auto sign = static_cast<uint16_t>(std::signbit(x) ? 0x8000u : 0u);
  const double a = std::fabs(x);
  if (std::isnan(x)) return static_cast<uint16_t>(sign | 0x7e00u);
  if (a >= 65520.0) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to infinity
  if (a == 0.0) return sign;
  int e = 0;
  std::frexp(a, &e);
  // Counting in units of the result's last mantissa bit (2^-24 for
  // subnormals), the encoding is ((ulp_exp + 24) << 10) + units, and a carry
  // out of the mantissa lands in the exponent as it should.
  const int ulp_exp = std::max(e - 11, -24);
  const double units = round_half_even(std::ldexp(a, -ulp_exp));
  const auto bits = static_cast<uint32_t>((ulp_exp + 24) << 10) + static_cast<uint32_t>(units);
  return static_cast<uint16_t>(sign | bits);
}

// A bfloat16 element as stored: the upper 16 bits of a float32 (sign, 8-bit
// exponent, 7-bit mantissa).
struct BFloat16 {
  uint16_t bits;
};

// Exact: every bfloat16 is a float.
inline float bfloat16_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// Rounds to nearest, ties to even, straight from double (no double rounding
// through float), as ONNX's Cast: NaN becomes the quiet NaN 0x7FC0 (as
// onnx.helper.float32_to_bfloat16), magnitudes from the midpoint between the
// largest finite value and 2^128 become infinity, tiny ones subnormal or 0.
inline uint16_t bfloat16_from_double(double x) {
  if (std::isnan(x)) return 0x7fc0;
  const auto sign = static_cast<uint16_t>(std::signbit(x) ? 0x8000u : 0u);
  const double a = std::fabs(x);
  if (a >= 0x1.ffp127) return static_cast<uint16_t>(sign | 0x7f80u);  // rounds to infinity
  if (a == 0.0) return sign;
  int e = 0;
  std::frexp(a, &e);
  // As half_from_double: in units of the result's last mantissa bit (2^-133
  // for subnormals) the encoding is ((ulp_exp + 133) << 7) + units.
  const int ulp_exp = std::max(e - 8, -133);
  const double units = round_half_even(std::ldexp(a, -ulp_exp));
  const auto bits = static_cast<uint32_t>((ulp_exp + 133) << 7) + static_cast<uint32_t>(units);
  return static_cast<uint16_t>(sign | bits);
}

// C++ leaves a double beyond float's range undefined; this rounds it as
// IEEE does (to the largest float or to infinity).
inline float narrow_to_float(double v) {
  const double a = std::fabs(v);
  if (!(a > std::numeric_limits<float>::max()) || std::isinf(v)) return static_cast<float>(v);
  const float magnitude = a >= 0x1.ffffffp127 ? std::numeric_limits<float>::infinity()
                                              : std::numeric_limits<float>::max();
  return std::signbit(v) ? -magnitude : magnitude;
}

}  // namespace eulernpu::sdk::float16
