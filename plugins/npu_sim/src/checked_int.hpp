// Overflow-checked int64 arithmetic for the models: sizes and cycle counts
// of absurd layers must become an error, never a wrapped number.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace eulernpu::npu_sim {

// a · b; throws std::overflow_error "<context>: <what> does not fit in int64".
inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* context,
                                const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw std::overflow_error(std::string(context) + ": " + what + " does not fit in int64");
  }
  return r;
}

inline std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* context,
                                const char* what) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    throw std::overflow_error(std::string(context) + ": " + what + " does not fit in int64");
  }
  return r;
}

// For a >= 0, b > 0: cannot overflow.
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

}  // namespace eulernpu::npu_sim
