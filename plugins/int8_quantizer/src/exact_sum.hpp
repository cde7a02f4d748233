// A sum of float64 values kept exactly: a two's-complement fixed-point
// number with a bit for every power of two a double holds (2^-1074 up to
// 2^1023) and 64 bits of headroom above. Every addition is exact, so the
// sum of a set of values does not depend on their order, nor on how they
// were split into parts that were summed apart and merged. That is what
// lets calibration statistics summed in float64 (a sample's squared
// errors, a channel's mean) be computed in shards on several machines and
// merged into the very bits one machine computes (docs/scale-out.md).
//
// Infinities and NaN are not summed but remembered, so value() gives what
// IEEE addition of the same values gives in any order: +inf, -inf or NaN.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace eulernpu::int8_quantizer {

class ExactSum {
 public:
  static constexpr int kWords = 34;  // 2176 bits: 2098 for every double, the rest headroom

  void add(double x);
  void merge(const ExactSum& other);
  // The sum rounded to a double: the same exact sum always gives the same
  // double (and a sum a double holds exactly gives that double).
  double value() const;

  bool operator==(const ExactSum& other) const = default;

  // The state as bytes (kWords little-endian words, then the flags) and
  // back; decode throws std::invalid_argument for bytes that are not one.
  std::string encode() const;
  static ExactSum decode(std::string_view bytes);
  static constexpr size_t kEncodedSize = kWords * 8 + 1;

 private:
  // Adds (or, with `negative`, subtracts) `bits` shifted left by `shift`.
  void add_shifted(uint64_t bits, int shift, bool negative);

  std::array<uint64_t, kWords> words_{};  // least significant first
  uint8_t special_ = 0;                   // kPosInf | kNegInf | kNaN
  static constexpr uint8_t kPosInf = 1, kNegInf = 2, kNaN = 4;
};

}  // namespace eulernpu::int8_quantizer
