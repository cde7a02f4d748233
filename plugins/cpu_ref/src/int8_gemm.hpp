// The int8 GEMM under cpu_ref's quantized Conv, Gemm and MatMul: integer
// products, int32 accumulation, one requantization per output (the
// arithmetic of docs/quantization.md, through eulernpu/sdk/qmath.hpp).
#pragma once

#include <cstdint>

#include "eulernpu/sdk/qmath.hpp"

namespace eulernpu::cpu_ref {

struct QGemmShape {
  int64_t rows = 0;     // O: output channels
  int64_t depth = 0;    // K: terms per output
  int64_t columns = 0;  // P: output positions
};

struct QGemmOutput {
  int32_t x_zero_point = 0;
  int32_t y_zero_point = 0;
  int32_t qmin = -128, qmax = 127;  // a fused Relu/Clip narrows these
};

// y[o, p] = clamp(rounding_multiply(Σ_k w[o, k] · (x[k, p] − x_zp) + bias[o],
//                                   m[o]) + y_zp, qmin, qmax)
// w: rows × depth, x: depth × columns, y: rows × columns, all row-major;
// bias may be null (0). The quantizer has proven
// depth · 255 · max|w[o]| + |bias[o]| < 2^31 for every row, so the int32
// accumulators are exact; the zero point is applied through the row sums of
// w, which keeps the inner loop a plain multiply-add.
void qgemm_int8(const QGemmShape& s, const int8_t* w, const int8_t* x, const int32_t* bias,
                const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out, int8_t* y);

}  // namespace eulernpu::cpu_ref
