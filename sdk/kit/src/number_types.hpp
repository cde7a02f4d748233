// The element types CumProd and Einsum compute in (kernels_misc.cpp,
// kernels_einsum.cpp): float32/64 and the 32- and 64-bit integers.
#pragma once

#include <cstdint>
#include <type_traits>

namespace eulernpu::kit {

template <typename T>
constexpr bool is_number =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> ||
    std::is_same_v<T, int64_t> || std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>;

}  // namespace eulernpu::kit
