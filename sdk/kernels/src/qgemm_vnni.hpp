// QGemm with AVX-512 VNNI over W packed once (qgemm_vnni.cpp; internal to
// the kernel library): 16 output channels to a register, so that a row of
// A is one broadcast per four terms and its outputs come out in Y's order
// (no transposes, no padding of a batch-1 row to 16 columns, which was
// fifteen sixteenths of the work of a fully connected layer).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "eulernpu/kernels/matmul.hpp"
#include "int8_gemm_variants.hpp"

namespace eulernpu::kernels {

struct QGemmPrepared {
  // What it was prepared for (qgemm runs it only for the same).
  int64_t n = 0, k = 0;
  int32_t a_zero_point = 0;
  int64_t quads = 0;   // ceil(k / 4)
  int64_t blocks = 0;  // ceil(n / 16)
  // Per block of 16 output channels and quad of terms, 16 words: each
  // channel's four weights (0 past n or k).
  std::vector<int32_t> w;
  // Per output channel (blocks · 16; past n, 0 and a valid requantization
  // whose bytes are never stored): bias − (128 + a_zero_point) · Σ W
  // modulo 2^32 in channel order, and the requantization's multiplier,
  // rounding term and shift as int64 lanes, per block its even channels
  // then its odd ones (requantize_lanes's two halves).
  std::vector<int32_t> offset;
  std::vector<int64_t> multiplier, round, shift;
};

namespace detail {

#if EULERNPU_KERNELS_HAVE_AVX512_VNNI
// Null where the kernel does not run (no VNNI, or `p.isa` names another
// GEMM).
std::shared_ptr<const QGemmPrepared> qgemm_vnni_prepare(const QGemmParams& p, const int8_t* w,
                                                        const int32_t* bias,
                                                        const sdk::qmath::FixedMultiplier* m);
// Whether `prepared` is for p: n, k and a_zero_point, and p.isa resolving
// to the VNNI GEMM.
bool qgemm_vnni_fits(const QGemmPrepared& prepared, const QGemmParams& p);
void qgemm_vnni(const QGemmParams& p, const QGemmPrepared& prepared, const int8_t* a, int8_t* y,
                const TaskRunner& r);
#endif

}  // namespace detail
}  // namespace eulernpu::kernels
