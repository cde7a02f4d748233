// QConcat of domain ai.eulernpu (docs/quantization.md): each input's codes
// rescaled into the output's scale, then placed along the axis.
#pragma once

#include <cstddef>
#include <cstdint>

#include "eulernpu/sdk/qmath.hpp"

namespace eulernpu::kernels {

struct ConcatInput {
  const int8_t* data = nullptr;
  int64_t axis_dim = 0;  // its extent along the axis
  int32_t zero_point = 0;
  sdk::qmath::FixedMultiplier multiplier{};
};

// Y is (outer, Σ axis_dim, inner) in row-major order.
struct ConcatParams {
  int64_t outer = 1, inner = 1;
  int32_t y_zero_point = 0;
};

void qconcat(const ConcatParams& p, const ConcatInput* inputs, size_t count, int8_t* y);

}  // namespace eulernpu::kernels
