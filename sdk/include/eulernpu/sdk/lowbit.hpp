// The low-precision element types of abi.h (float8 in four flavours,
// float4e2m1, float8e8m0, int4, uint4, int2, uint2): their one-byte
// in-memory codes, ONNX's packing of the 4- and 2-bit types, and exact
// conversions to and from double.
//
// Header-only and standard C++ only, so that the host, every frontend and
// every backend agree on each bit. Thread-safe: every function is pure.
//
// Conversions follow ONNX's reference implementation (onnx.reference with
// ml_dtypes), checked against the ONNX conformance data:
//  - float8/float4: round to nearest, ties to even, from the exact value.
//    Out of range (and +-inf) with saturation gives +-max; without it
//    +-inf where the type has one (e5m2), else NaN. float4e2m1 has neither
//    inf nor NaN and always saturates; NaN becomes 0x8 as ml_dtypes makes it.
//  - float8e8m0 (a power of two, unsigned): from float32's exponent bits with
//    round_mode up (default), down or nearest; see encode_e8m0.
//  - int4/uint4/int2/uint2 as Cast targets wrap (keep the low bits of the
//    integer, as numpy's astype between integer types does); QuantizeLinear
//    saturates itself before storing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "eulernpu/sdk/abi.h"

namespace eulernpu::sdk::lowbit {

// One of the types this header is about.
inline bool is_lowbit(int32_t dtype) {
  return dtype >= ENP_DTYPE_FLOAT8E4M3FN && dtype <= ENP_DTYPE_INT2;
}

// int4, uint4, int2, uint2: their codes are integers.
inline bool is_integer(int32_t dtype) {
  return dtype == ENP_DTYPE_INT4 || dtype == ENP_DTYPE_UINT4 || dtype == ENP_DTYPE_INT2 ||
         dtype == ENP_DTYPE_UINT2;
}

// Bits per element where ONNX packs them (4 or 2), 0 for unpacked types.
inline int packed_bits(int32_t dtype) {
  switch (dtype) {
    case ENP_DTYPE_INT4:
    case ENP_DTYPE_UINT4:
    case ENP_DTYPE_FLOAT4E2M1:
      return 4;
    case ENP_DTYPE_INT2:
    case ENP_DTYPE_UINT2:
      return 2;
    default:
      return 0;
  }
}

// Bytes a TensorProto holds for `count` packed elements (the last byte
// padded with zero bits).
inline uint64_t packed_size(int32_t dtype, uint64_t count) {
  const int bits = packed_bits(dtype);
  return bits == 0 ? count : (count * static_cast<uint64_t>(bits) + 7) / 8;
}

// The plain type .npy files store the codes as: int8 for int4/int2 (the
// value), uint8 for the others (the bit pattern, or the uint4/uint2 value).
inline int32_t storage_dtype(int32_t dtype) {
  return dtype == ENP_DTYPE_INT4 || dtype == ENP_DTYPE_INT2 ? ENP_DTYPE_INT8 : ENP_DTYPE_UINT8;
}

// The in-memory code of a `bits`-wide field: sign-extended for int4/int2,
// else as is.
inline uint8_t code_from_field(int32_t dtype, unsigned field) {
  const int bits = packed_bits(dtype);
  if (dtype == ENP_DTYPE_INT4 || dtype == ENP_DTYPE_INT2) {
    const int shift = 8 - bits;
    return static_cast<uint8_t>(static_cast<int8_t>(static_cast<uint8_t>(field << shift)) >> shift);
  }
  return static_cast<uint8_t>(field);
}

// One byte per element from ONNX's packed layout (element 0 in the lowest
// bits of byte 0). `packed` must hold packed_size(dtype, count) bytes.
inline std::vector<uint8_t> unpack(int32_t dtype, const uint8_t* packed, uint64_t count) {
  const int bits = packed_bits(dtype);
  if (bits == 0) return std::vector<uint8_t>(packed, packed + count);
  std::vector<uint8_t> out(count);
  const auto per_byte = static_cast<uint64_t>(8 / bits);
  const unsigned mask = (1u << bits) - 1;
  for (uint64_t i = 0; i < count; ++i) {
    const unsigned shift = static_cast<unsigned>((i % per_byte) * static_cast<uint64_t>(bits));
    out[i] = code_from_field(dtype, (packed[i / per_byte] >> shift) & mask);
  }
  return out;
}

// Inverse of unpack: packed_size(dtype, count) bytes, padding bits zero.
inline std::vector<uint8_t> pack(int32_t dtype, const uint8_t* codes, uint64_t count) {
  const int bits = packed_bits(dtype);
  if (bits == 0) return std::vector<uint8_t>(codes, codes + count);
  std::vector<uint8_t> out(packed_size(dtype, count), 0);
  const auto per_byte = static_cast<uint64_t>(8 / bits);
  const unsigned mask = (1u << bits) - 1;
  for (uint64_t i = 0; i < count; ++i) {
    const unsigned shift = static_cast<unsigned>((i % per_byte) * static_cast<uint64_t>(bits));
    out[i / per_byte] = static_cast<uint8_t>(out[i / per_byte] | ((codes[i] & mask) << shift));
  }
  return out;
}

// --- small floats ---------------------------------------------------------

// A sign-exponent-mantissa format of `width` bits. Encoding and value:
//   exponent field 0:  mantissa * 2^(1 - bias - mantissa_bits) (subnormal)
//   otherwise:         (2^mantissa_bits + mantissa) * 2^(exponent - bias - mantissa_bits)
// except for the special codes the flags name.
struct FloatFormat {
  int width;          // 8 or 4
  int mantissa_bits;  // 3, 2 or 1
  int bias;
  uint8_t max_code;  // largest finite magnitude's code
  bool has_inf;      // e5m2: exponent all ones, mantissa 0
  bool fn;           // e4m3fn: S.1111.111 is NaN, no inf
  bool uz;           // *fnuz: 0x80 is NaN, no inf, no negative zero
};

inline std::optional<FloatFormat> float_format(int32_t dtype) {
  switch (dtype) {
    case ENP_DTYPE_FLOAT8E4M3FN:
      return FloatFormat{8, 3, 7, 0x7e, false, true, false};
    case ENP_DTYPE_FLOAT8E4M3FNUZ:
      return FloatFormat{8, 3, 8, 0x7f, false, false, true};
    case ENP_DTYPE_FLOAT8E5M2:
      return FloatFormat{8, 2, 15, 0x7b, true, false, false};
    case ENP_DTYPE_FLOAT8E5M2FNUZ:
      return FloatFormat{8, 2, 16, 0x7f, false, false, true};
    case ENP_DTYPE_FLOAT4E2M1:
      return FloatFormat{4, 1, 1, 0x7, false, false, false};
    default:
      return std::nullopt;
  }
}

// The finite or infinite magnitude of `code` (sign bit clear), ignoring
// special codes.
inline double magnitude_of(const FloatFormat& f, unsigned code) {
  const unsigned exponent = code >> f.mantissa_bits;
  const unsigned mantissa = code & ((1u << f.mantissa_bits) - 1);
  if (exponent == 0) return std::ldexp(mantissa, 1 - f.bias - f.mantissa_bits);
  return std::ldexp(mantissa + (1u << f.mantissa_bits),
                    static_cast<int>(exponent) - f.bias - f.mantissa_bits);
}

inline double decode_float(const FloatFormat& f, uint8_t code) {
  const unsigned sign_bit = 1u << (f.width - 1);
  const unsigned magnitude_code = code & (sign_bit - 1);
  const bool negative = (code & sign_bit) != 0;
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (f.uz && code == sign_bit) return kNaN;
  if (f.fn && magnitude_code == sign_bit - 1) return negative ? -kNaN : kNaN;
  if (f.has_inf && (magnitude_code >> f.mantissa_bits) == (sign_bit - 1) >> f.mantissa_bits) {
    const bool is_inf = (magnitude_code & ((1u << f.mantissa_bits) - 1)) == 0;
    const double v = is_inf ? std::numeric_limits<double>::infinity() : kNaN;
    return negative ? -v : v;
  }
  const double m = magnitude_of(f, magnitude_code);
  return negative ? -m : m;
}

// x rounded to the nearest value of `f`, ties to even, saturating or not
// (see the top of this file).
inline uint8_t encode_float(const FloatFormat& f, double x, bool saturate) {
  const unsigned sign_bit = 1u << (f.width - 1);
  const unsigned sign = std::signbit(x) ? sign_bit : 0u;
  const unsigned nan_code = f.uz        ? sign_bit
                            : f.fn      ? sign | (sign_bit - 1)
                            : f.has_inf ? sign | 0x7eu
                                        : sign_bit;
  if (std::isnan(x)) return static_cast<uint8_t>(nan_code);
  // float4e2m1 has no code to overflow to.
  const bool saturating = saturate || (!f.has_inf && !f.fn && !f.uz);
  const unsigned overflow = saturating  ? sign | f.max_code
                            : f.has_inf ? sign | (f.max_code + 1u)
                                        : nan_code;
  const double a = std::fabs(x);
  const double max = magnitude_of(f, f.max_code);
  if (a >= 2 * max) return static_cast<uint8_t>(overflow);
  if (a == 0) return static_cast<uint8_t>(f.uz ? 0u : sign);
  // Counting in units of the result's last mantissa bit, the code is
  // ((ulp_exp - min_ulp_exp) << mantissa_bits) + units with the implicit
  // one inside `units`; a carry out of the mantissa lands in the exponent.
  int e = 0;
  std::frexp(a, &e);
  const int min_ulp_exp = 1 - f.bias - f.mantissa_bits;
  const int ulp_exp = std::max(e - 1 - f.mantissa_bits, min_ulp_exp);
  const double scaled = std::ldexp(a, -ulp_exp);  // exact: a power-of-two scaling
  double units = std::floor(scaled);
  const double rest = scaled - units;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(units, 2.0) != 0)) units += 1;
  const auto code = (static_cast<unsigned>(ulp_exp - min_ulp_exp) << f.mantissa_bits) +
                    static_cast<unsigned>(units);
  if (code > f.max_code) return static_cast<uint8_t>(overflow);
  if (code == 0) return static_cast<uint8_t>(f.uz ? 0u : sign);
  return static_cast<uint8_t>(sign | code);
}

// --- float8e8m0 -------------------------------------------------------------

// Cast's round_mode (opset 24): how a value between two powers of two
// becomes one.
enum class E8M0Rounding { kUp, kDown, kNearest };

inline std::optional<E8M0Rounding> e8m0_rounding(std::string_view name) {
  if (name == "up") return E8M0Rounding::kUp;
  if (name == "down") return E8M0Rounding::kDown;
  if (name == "nearest") return E8M0Rounding::kNearest;
  return std::nullopt;
}

inline double decode_e8m0(uint8_t code) {
  if (code == 0xff) return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, static_cast<int>(code) - 127);
}

// ONNX's to_float8e8m0, bit for bit: the result is float32's biased
// exponent of |x| (sign ignored; zero and float32 subnormals have exponent
// 0), moved up by one when `up` sees any mantissa bit, or when `nearest`
// sees the mantissa's top bit and either another one or a normal number
// (ties away from zero, except among subnormals). NaN and inf give 0xFF
// (NaN); a round-up from 0xFE saturates or gives NaN.
inline uint8_t encode_e8m0(float x, bool saturate, E8M0Rounding rounding) {
  uint32_t bits = 0;
  std::memcpy(&bits, &x, 4);
  unsigned exponent = (bits >> 23) & 0xffu;
  if (exponent == 0xffu) return 0xff;
  bool up = false;
  switch (rounding) {
    case E8M0Rounding::kUp:
      up = (bits & 0x7fffffu) != 0;
      break;
    case E8M0Rounding::kDown:
      break;
    case E8M0Rounding::kNearest: {
      const bool guard = (bits & 0x400000u) != 0;
      const bool round = (bits & 0x200000u) != 0;
      const bool sticky = (bits & 0x1fffffu) != 0;
      up = guard && (round || sticky || exponent > 0);
      break;
    }
  }
  if (up && !(saturate && exponent == 0xfeu)) ++exponent;
  return static_cast<uint8_t>(exponent);
}

// --- integers ---------------------------------------------------------------

struct IntRange {
  int64_t lo, hi;
};

inline IntRange int_range(int32_t dtype) {
  switch (dtype) {
    case ENP_DTYPE_INT4:
      return {-8, 7};
    case ENP_DTYPE_UINT4:
      return {0, 15};
    case ENP_DTYPE_INT2:
      return {-2, 1};
    case ENP_DTYPE_UINT2:
      return {0, 3};
    default:
      return {0, 0};
  }
}

// The low bits of v, as the in-memory code (wrapping).
inline uint8_t encode_int_wrapping(int32_t dtype, int64_t v) {
  const int bits = packed_bits(dtype);
  return code_from_field(dtype,
                         static_cast<unsigned>(static_cast<uint64_t>(v) & ((1u << bits) - 1)));
}

// The value of an int4/uint4/int2/uint2 code.
inline int64_t decode_int(int32_t dtype, uint8_t code) {
  return dtype == ENP_DTYPE_INT4 || dtype == ENP_DTYPE_INT2 ? static_cast<int8_t>(code) : code;
}

// --- any low-bit type -------------------------------------------------------

// The exact value of a code of any type of this header (NaN where the code
// is NaN).
inline double decode(int32_t dtype, uint8_t code) {
  if (is_integer(dtype)) return static_cast<double>(decode_int(dtype, code));
  if (dtype == ENP_DTYPE_FLOAT8E8M0) return decode_e8m0(code);
  if (const auto f = float_format(dtype)) return decode_float(*f, code);
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace eulernpu::sdk::lowbit
