#include "core/limits.hpp"

#include <cstdlib>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace eulernpu::host {

uint64_t limit(const LimitSpec& spec) {
  const char* text = std::getenv(spec.env);
  if (!text || !*text) return spec.default_value;
  const std::string s = text;
  uint64_t value = 0;
  size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    const auto digit = static_cast<uint64_t>(s[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
      value = 0;
      i = 0;
      break;
    }
    value = value * 10 + digit;
  }
  int shift = -1;
  if (i > 0 && i + 1 == s.size()) {
    const std::string units = "KMGT";
    if (const auto at = units.find(s[i]); at != std::string::npos) {
      shift = 10 * static_cast<int>(at + 1);
    }
  } else if (i > 0 && i == s.size()) {
    shift = 0;
  }
  if (shift < 0 || value == 0 || value > (std::numeric_limits<uint64_t>::max() >> shift)) {
    throw UserError("invalid limit setting",
                    std::string(spec.env) + "='" + s + "' is not a positive number",
                    "set it to a positive integer, optionally with K, M, G or T (powers of "
                    "1024), e.g. " +
                        std::string(spec.env) + "=" +
                        std::to_string(spec.default_value >> 30 ? 2 * (spec.default_value >> 30)
                                                                : 2 * spec.default_value) +
                        (spec.default_value >> 30 ? "G" : ""));
  }
  return value << shift;
}

}  // namespace eulernpu::host
