// The requantizing store of the AVX-512 VNNI kernels (int8_gemm_avx512_vnni.cpp,
// qconv_vnni.cpp): 16 int32 sums in a register, their offset added, then
// qmath::requantize in int64 lanes. Include after x86_intrinsics.hpp, in
// x86-64 builds only.
#pragma once

#include <cstdint>

#include "eulernpu/kernels/int8_gemm.hpp"
#include "eulernpu/sdk/qmath.hpp"

#define EULERNPU_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

namespace eulernpu::kernels::detail {

// qmath::requantize on 8 accumulators in int64 lanes, step for step: the
// int64 product, the rounding term, the arithmetic shift, the int32
// saturation, the zero point, the clamp (max then min equals std::clamp
// because qmin <= qmax). Returns the 8 results as bytes.
EULERNPU_AVX512_VNNI inline __m128i requantize8(__m512i acc64, const sdk::qmath::FixedMultiplier& m,
                                                const QGemmOutput& out) {
  __m512i v = _mm512_mul_epi32(acc64, _mm512_set1_epi64(m.multiplier));
  v = _mm512_add_epi64(v, _mm512_set1_epi64(int64_t{1} << (m.shift - 1)));
  v = _mm512_sra_epi64(v, _mm_cvtsi32_si128(m.shift));
  v = _mm512_max_epi64(v, _mm512_set1_epi64(INT32_MIN));
  v = _mm512_min_epi64(v, _mm512_set1_epi64(INT32_MAX));
  v = _mm512_add_epi64(v, _mm512_set1_epi64(out.y_zero_point));
  v = _mm512_max_epi64(v, _mm512_set1_epi64(out.qmin));
  v = _mm512_min_epi64(v, _mm512_set1_epi64(out.qmax));
  return _mm512_cvtepi64_epi8(v);
}

// Adds `offset` to the 16 sums (wrapping: the kernels fold corrections in
// modulo 2^32, and the true sum is inside the proven bound) and returns
// the 16 requantized bytes.
EULERNPU_AVX512_VNNI inline __m128i requantize16(__m512i acc, int32_t offset,
                                                 const sdk::qmath::FixedMultiplier& m,
                                                 const QGemmOutput& out) {
  acc = _mm512_add_epi32(acc, _mm512_set1_epi32(offset));
  const __m128i lo = requantize8(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(acc)), m, out);
  const __m128i hi = requantize8(_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(acc, 1)), m, out);
  return _mm_unpacklo_epi64(lo, hi);
}

}  // namespace eulernpu::kernels::detail
