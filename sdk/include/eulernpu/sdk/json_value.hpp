// Reading optional fields of JSON that someone may have edited (artifact
// manifests, plans, reports): nlohmann's value() throws a type error when
// the field is there with another type, which would escape as an internal
// error. value_or returns the fallback then, and the reader's own checks
// say what is wrong with it.
#pragma once

#include <string>
#include <type_traits>

namespace eulernpu::sdk {

// j[key] if `j` is an object holding `key` with T's JSON type, else
// `fallback`. T is std::string, bool, an integer or a floating-point type.
template <typename T, typename Json>
T value_or(const Json& j, const char* key, T fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->template get<std::string>() : fallback;
  } else if constexpr (std::is_same_v<T, bool>) {
    return it->is_boolean() ? it->template get<bool>() : fallback;
  } else if constexpr (std::is_integral_v<T>) {
    return it->is_number_integer() ? it->template get<T>() : fallback;
  } else {
    static_assert(std::is_floating_point_v<T>, "value_or reads strings, bools and numbers");
    return it->is_number() ? it->template get<T>() : fallback;
  }
}

}  // namespace eulernpu::sdk
