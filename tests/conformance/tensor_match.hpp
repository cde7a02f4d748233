// Upstream's comparison of a result with an expected tensor (numpy's
// assert_allclose as onnx/backend/test/runner uses it).
#pragma once

#include <optional>
#include <string>

#include "core/tensor.hpp"

namespace eulernpu::conformance {

// |got - expected| <= atol + rtol * |expected|, elementwise; upstream's
// defaults.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// Why `got` does not match `expected`, or nullopt if it does. dtype and
// shape must be equal; floating-point elements within `tolerance` (NaN
// matches NaN, an infinity only itself); integer and bool elements exactly.
std::optional<std::string> mismatch(const host::Tensor& got, const host::Tensor& expected,
                                    const Tolerance& tolerance);

}  // namespace eulernpu::conformance
