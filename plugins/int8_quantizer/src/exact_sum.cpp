#include "exact_sum.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace eulernpu::int8_quantizer {

void ExactSum::add(double x) {
  const auto bits = std::bit_cast<uint64_t>(x);
  const bool negative = (bits >> 63) != 0;
  const auto exponent = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  if (exponent == 0x7ff) {
    special_ |= fraction != 0 ? kNaN : negative ? kNegInf : kPosInf;
    return;
  }
  if (exponent == 0 && fraction == 0) return;  // a zero of either sign
  // x = mantissa * 2^(position - 1074): a subnormal's fraction at the
  // bottom bit, a normal number's implicit bit restored.
  const uint64_t mantissa = exponent == 0 ? fraction : fraction | (uint64_t{1} << 52);
  const int position = exponent == 0 ? 0 : exponent - 1;
  add_shifted(mantissa, position, negative);
}

void ExactSum::add_shifted(uint64_t bits, int shift, bool negative) {
  const int word = shift / 64, offset = shift % 64;
  uint64_t parts[2] = {bits << offset, offset == 0 ? 0 : bits >> (64 - offset)};
  if (!negative) {
    uint64_t carry = 0;
    for (int i = word; i < kWords; ++i) {
      const uint64_t add = (i - word < 2 ? parts[i - word] : 0);
      if (i - word >= 2 && carry == 0) break;
      const uint64_t before = words_[i];
      words_[i] = before + add + carry;
      carry = (words_[i] < before || (carry && words_[i] == before)) ? 1 : 0;
    }
  } else {
    uint64_t borrow = 0;
    for (int i = word; i < kWords; ++i) {
      const uint64_t sub = (i - word < 2 ? parts[i - word] : 0);
      if (i - word >= 2 && borrow == 0) break;
      const uint64_t before = words_[i];
      words_[i] = before - sub - borrow;
      borrow = (before < sub || (borrow && before == sub)) ? 1 : 0;
    }
  }
}

void ExactSum::merge(const ExactSum& other) {
  uint64_t carry = 0;
  for (int i = 0; i < kWords; ++i) {
    const uint64_t before = words_[i];
    words_[i] = before + other.words_[i] + carry;
    carry = (words_[i] < before || (carry && words_[i] == before)) ? 1 : 0;
  }
  special_ |= other.special_;
}

double ExactSum::value() const {
  if ((special_ & kNaN) || (special_ & (kPosInf | kNegInf)) == (kPosInf | kNegInf)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (special_ & kPosInf) return std::numeric_limits<double>::infinity();
  if (special_ & kNegInf) return -std::numeric_limits<double>::infinity();
  std::array<uint64_t, kWords> w = words_;
  const bool negative = (w[kWords - 1] >> 63) != 0;
  if (negative) {  // magnitude: two's complement negated
    uint64_t carry = 1;
    for (uint64_t& v : w) {
      v = ~v + carry;
      carry = (carry && v == 0) ? 1 : 0;
    }
  }
  int top = kWords - 1;
  while (top >= 0 && w[top] == 0) --top;
  if (top < 0) return 0.0;
  // The 64 bits from the leading one down and a sticky bit for anything
  // below them, rounded once to 53 bits: the exact sum correctly rounded
  // to nearest, ties to even. (value() runs once per sum, when the
  // statistics are read: bit by bit is fast enough.)
  const int high_bit = top * 64 + 63 - std::countl_zero(w[top]);  // the leading one
  auto bit_at = [&](int pos) -> uint64_t { return pos < 0 ? 0 : (w[pos / 64] >> (pos % 64)) & 1; };
  uint64_t head = 0;  // 64 bits: the leading one and the 63 below it
  for (int k = 0; k < 64; ++k) head = (head << 1) | bit_at(high_bit - k);
  bool sticky = false;
  for (int pos = high_bit - 64; pos >= 0 && !sticky; --pos) sticky = bit_at(pos) != 0;
  const uint64_t kept = head >> 11;
  const uint64_t rest = head & 0x7ff;
  uint64_t rounded = kept;
  if (rest > 0x400 || (rest == 0x400 && (sticky || (kept & 1)))) ++rounded;
  const double magnitude = std::ldexp(static_cast<double>(rounded), high_bit - 52 - 1074);
  return negative ? -magnitude : magnitude;
}

std::string ExactSum::encode() const {
  std::string out(kEncodedSize, '\0');
  std::memcpy(out.data(), words_.data(), kWords * 8);
  out[kWords * 8] = static_cast<char>(special_);
  return out;
}

ExactSum ExactSum::decode(std::string_view bytes) {
  if (bytes.size() != kEncodedSize) {
    throw std::invalid_argument("an exact sum is " + std::to_string(kEncodedSize) + " bytes, not " +
                                std::to_string(bytes.size()));
  }
  ExactSum s;
  std::memcpy(s.words_.data(), bytes.data(), kWords * 8);
  s.special_ = static_cast<uint8_t>(bytes[kWords * 8]);
  if (s.special_ > (kPosInf | kNegInf | kNaN)) throw std::invalid_argument("unknown flags");
  return s;
}

}  // namespace eulernpu::int8_quantizer
