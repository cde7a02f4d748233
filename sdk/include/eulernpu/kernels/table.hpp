// QLookup and QSoftmax of domain ai.eulernpu (docs/quantization.md): the
// ops that read a 256-entry table of the input code.
#pragma once

#include <array>
#include <cstdint>

#include "eulernpu/kernels/runner.hpp"
#include "eulernpu/sdk/qmath.hpp"

namespace eulernpu::kernels {

// y[i] = table[x[i] + 128].
void qlookup(const std::array<int8_t, 256>& table, const int8_t* x, int64_t n, int8_t* y,
             const TaskRunner& r = kSerial);

// X viewed as (outer, len, inner): qmath::softmax_row along len.
struct SoftmaxParams {
  int64_t outer = 1, len = 0, inner = 1;
};

// exp: qmath::softmax_row's table (e[0] = 2^20, entries in [0, 2^20]).
void qsoftmax(const SoftmaxParams& p, const std::array<int32_t, 256>& exp, const int8_t* x,
              int8_t* y, const TaskRunner& r = kSerial);

}  // namespace eulernpu::kernels
