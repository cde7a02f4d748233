// How a limit is set: its default, and the environment variable that
// changes it for one command (docs/errors.md, "Limits"). One definition for
// the host and every plugin, so `EULERNPU_MAX_...=8G` means the same in
// each. Header-only.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace eulernpu::sdk {

struct LimitSpec {
  const char* env;  // e.g. "EULERNPU_MAX_NPZ_MEMBER_BYTES"
  uint64_t default_value;
};

// A limit setting's value: a positive integer, optionally with a K, M, G or
// T suffix for powers of 1024. Nothing for anything else (zero, a sign, a
// fraction, overflow).
inline std::optional<uint64_t> parse_limit_setting(std::string_view s) {
  uint64_t value = 0;
  size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    const auto digit = static_cast<uint64_t>(s[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  int shift = -1;
  if (i > 0 && i + 1 == s.size()) {
    const std::string_view units = "KMGT";
    if (const auto at = units.find(s[i]); at != std::string_view::npos) {
      shift = 10 * static_cast<int>(at + 1);
    }
  } else if (i > 0 && i == s.size()) {
    shift = 0;
  }
  if (shift < 0 || value == 0 || value > (std::numeric_limits<uint64_t>::max() >> shift)) {
    return std::nullopt;
  }
  return value << shift;
}

// The error parts of "invalid limit setting" for a bad value of `spec`.
struct LimitSettingProblem {
  std::string where, fix;
};

inline LimitSettingProblem limit_setting_problem(const LimitSpec& spec, std::string_view text) {
  const bool bytes = spec.default_value >> 30;
  const std::string example =
      std::string(spec.env) + "=" +
      std::to_string(bytes ? 2 * (spec.default_value >> 30) : 2 * spec.default_value) +
      (bytes ? "G" : "");
  return {std::string(spec.env) + "='" + std::string(text) + "' is not a positive number",
          "set it to a positive integer, optionally with K, M, G or T (powers of 1024), e.g. " +
              example};
}

// The limit's value from the environment, or its default when unset.
// `fail` is called (and must throw) for a value that does not parse: the
// host throws its own error type, a plugin an sdk::Error.
template <typename Fail>
uint64_t limit_value(const LimitSpec& spec, Fail&& fail) {
  const char* text = std::getenv(spec.env);
  if (!text || !*text) return spec.default_value;
  if (auto v = parse_limit_setting(text)) return *v;
  fail(limit_setting_problem(spec, text));
  return spec.default_value;  // not reached: fail throws
}

}  // namespace eulernpu::sdk
