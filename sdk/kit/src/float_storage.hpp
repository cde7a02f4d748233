// Element storage for kernels that compute in float64 and store float32,
// float64 or float16: load() widens exactly, store() rounds once to
// nearest, ties to even, and dispatch_float picks the storage type.
#pragma once

#include <string>

#include "eulernpu/kit/errors.hpp"
#include "float16.hpp"
#include "kernel_util.hpp"

namespace eulernpu::kit {

inline double load(float v) { return v; }
inline double load(double v) { return v; }
inline double load(Half h) { return half_to_double(h.bits); }

template <typename S>
S store(double v);
template <>
inline float store<float>(double v) {
  return narrow_to_float(v);
}
template <>
inline double store<double>(double v) {
  return v;
}
template <>
inline Half store<Half>(double v) {
  return Half{half_from_double(v)};
}

// v rounded to S and widened back: an intermediate an op's function body
// keeps in the input type.
template <typename S>
double round_to(double v) {
  return load(store<S>(v));
}

// Calls f.template operator()<S>() with S the storage type of a float dtype;
// any other dtype means lowering let through what it should not have.
template <typename F>
void dispatch_float(int32_t dtype, F&& f) {
  if (!dispatch_among<float, double, Half>(dtype, f)) {
    corrupt(std::string("a kernel got a tensor of dtype ") + sdk::dtype_name(dtype));
  }
}

}  // namespace eulernpu::kit
