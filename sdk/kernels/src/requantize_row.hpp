// The requantization of a run of int32 accumulators that share one
// multiplier (an output channel's positions, a MatMul row): each output is
// qmath::requantize(acc[i] + offset, ...), written once here for the
// kernels (internal to the kernel library). With NEON (ARM builds) four
// lanes at a time, the same integers step for step: the product in 64 bits
// (vmull_s32, exact), one rounding shift (vrshl: floor((p + 2^(s-1)) / 2^s),
// computed without overflow, as qmath does), a saturating narrow to int32,
// a saturating add of the zero point (any sum past int32 is clamped to
// qmax ≤ 127 either way) and the clamp. Not vqrdmulh: that rounds twice.
#pragma once

#include <cstdint>

#include "eulernpu/sdk/qmath.hpp"
#include "int8_gemm_variants.hpp"

#if EULERNPU_KERNELS_HAVE_NEON
#include <arm_neon.h>
#endif

namespace eulernpu::kernels::detail {

#if EULERNPU_KERNELS_HAVE_NEON
// qmath::rounding_multiply on four lanes.
inline int32x4_t rounding_multiply_lanes(int32x4_t v, const sdk::qmath::FixedMultiplier& m) {
  const int32x2_t mult = vdup_n_s32(m.multiplier);
  const int64x2_t shift = vdupq_n_s64(-static_cast<int64_t>(m.shift));
  const int64x2_t lo = vrshlq_s64(vmull_s32(vget_low_s32(v), mult), shift);
  const int64x2_t hi = vrshlq_s64(vmull_s32(vget_high_s32(v), mult), shift);
  return vcombine_s32(vqmovn_s64(lo), vqmovn_s64(hi));
}

// qmath::requantize on four lanes; qmin/qmax within int8.
inline int32x4_t requantize_lanes(int32x4_t acc, const sdk::qmath::FixedMultiplier& m,
                                  int32_t zero_point, int32_t qmin, int32_t qmax) {
  const int32x4_t r = vqaddq_s32(rounding_multiply_lanes(acc, m), vdupq_n_s32(zero_point));
  return vminq_s32(vmaxq_s32(r, vdupq_n_s32(qmin)), vdupq_n_s32(qmax));
}

// Eight lanes in [qmin, qmax] ⊆ int8 as int8: the narrows are exact.
inline int8x8_t narrow_lanes(int32x4_t lo, int32x4_t hi) {
  return vmovn_s16(vcombine_s16(vmovn_s32(lo), vmovn_s32(hi)));
}
#endif

#if EULERNPU_KERNELS_HAVE_AVX512
// requantize_row_avx512.cpp: the first n - n % 8 outputs with vpmuldq
// (returns how many); only where cpu_has_avx512f().
int64_t requantize_avx512(const int32_t* acc, int64_t n, int32_t offset,
                          const sdk::qmath::FixedMultiplier& m, int32_t zero_point, int32_t qmin,
                          int32_t qmax, int8_t* y);
bool cpu_has_avx512f();
#endif

// y[i] = requantize(acc[i] + offset, m, zero_point, qmin, qmax) for i in
// [0, n). The caller has proven acc[i] + offset fits int32 (the
// accumulator bound of int8_gemm.hpp). requantize_row.cpp: NEON lanes on
// ARM, 64-bit vector lanes on x86-64, the same integers either way.
void requantize_row(const int32_t* acc, int64_t n, int32_t offset,
                    const sdk::qmath::FixedMultiplier& m, int32_t zero_point, int32_t qmin,
                    int32_t qmax, int8_t* y);

}  // namespace eulernpu::kernels::detail
