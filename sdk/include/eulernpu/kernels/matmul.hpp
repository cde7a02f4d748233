// QGemm and QMatMul of domain ai.eulernpu (docs/quantization.md): int8
// products, int32 accumulation, one requantization per output.
#pragma once

#include <cstdint>
#include <memory>

#include "eulernpu/kernels/int8_gemm.hpp"
#include "eulernpu/kernels/runner.hpp"
#include "eulernpu/kernels/shape.hpp"
#include "eulernpu/sdk/qmath.hpp"

namespace eulernpu::kernels {

// Y (rows, n) = A (rows, k) · Wᵀ, W (n, k) constant weights.
struct QGemmParams {
  int64_t rows = 0, n = 0, k = 0;
  int32_t a_zero_point = 0, y_zero_point = 0;
  int32_t qmin = -128, qmax = 127;
  Int8GemmIsa isa = Int8GemmIsa::kAuto;
};

// Rows of A in blocks of a fixed width: each block is transposed to
// k × width, multiplied by W in qgemm_int8 and transposed back. bias and m
// hold n values; the accumulator bound (k terms, max|W| per row) fits int32.
//
// With AVX-512 VNNI, a kernel over W prepared by qgemm_prepare runs
// instead (16 output channels to a register; the same bytes): pass
// `prepared` to do that once per layer rather than once per call.
struct QGemmPrepared;
void qgemm(const QGemmParams& p, const int8_t* a, const int8_t* w, const int32_t* bias,
           const sdk::qmath::FixedMultiplier* m, int8_t* y, const TaskRunner& r = kSerial,
           const QGemmPrepared* prepared = nullptr);

// W, bias and m of a QGemm with parameters p (its rows aside), prepared
// for the VNNI kernel; null where qgemm runs another. A result is for qgemm
// calls with the same n, k, a_zero_point, isa, w, bias and m.
std::shared_ptr<const QGemmPrepared> qgemm_prepare(const QGemmParams& p, const int8_t* w,
                                                   const int32_t* bias,
                                                   const sdk::qmath::FixedMultiplier* m);

// qgemm over W packed by pack_qgemm_weights (int8_gemm_packed.hpp) with
// a_zero_point folded into `offset`; the same blocks, the same bytes.
void qgemm_packed(const QGemmParams& p, const int8_t* a, const int8_t* packed,
                  const int32_t* offset, const sdk::qmath::FixedMultiplier* m, int8_t* y,
                  const TaskRunner& r = kSerial);

// Y = (A − za) · (B − zb), numpy batch broadcasting: A (a_batch..., m, k),
// B (b_batch..., k, n), Y (batch..., m, n) with batch the broadcast of the
// two (1-D operands already given their unit dim).
struct QMatMulParams {
  Dims batch, a_batch, b_batch;
  int64_t m = 0, k = 0, n = 0;
  int32_t a_zero_point = 0, b_zero_point = 0, y_zero_point = 0;
  int32_t qmin = -128, qmax = 127;
  sdk::qmath::FixedMultiplier multiplier{};
};

void qmatmul(const QMatMulParams& p, const int8_t* a, const int8_t* b, int8_t* y,
             const TaskRunner& r = kSerial);

}  // namespace eulernpu::kernels
