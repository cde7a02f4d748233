// The requantization of the AVX-512 VNNI kernels (int8_gemm_avx512_vnni.cpp,
// qconv_vnni.cpp): 16 int32 sums in a register, their offset added, then
// qmath::requantize in int64 lanes. Include after x86_intrinsics.hpp, in
// x86-64 builds only.
#pragma once

#include <cstdint>

#include "eulernpu/kernels/int8_gemm.hpp"
#include "eulernpu/sdk/qmath.hpp"

#define EULERNPU_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

namespace eulernpu::kernels::detail {

// requantize16's steps on the even lanes' sums, in int64 lanes.
EULERNPU_AVX512_VNNI inline __m512i requantize_even(__m512i sums,
                                                    const sdk::qmath::FixedMultiplier& m,
                                                    const QGemmOutput& out) {
  __m512i v = _mm512_mul_epi32(sums, _mm512_set1_epi64(m.multiplier));
  v = _mm512_add_epi64(v, _mm512_set1_epi64(int64_t{1} << (m.shift - 1)));
  v = _mm512_add_epi64(_mm512_sra_epi64(v, _mm_cvtsi32_si128(m.shift)),
                       _mm512_set1_epi64(out.y_zero_point));
  return _mm512_min_epi64(_mm512_max_epi64(v, _mm512_set1_epi64(out.qmin)),
                          _mm512_set1_epi64(out.qmax));
}

// Adds `offset` to the 16 sums (wrapping: the kernels fold corrections in
// modulo 2^32, and the true sum is inside the proven bound) and returns
// the 16 bytes of qmath::requantize, step for step in int64 lanes: the even
// and the odd sums each times the multiplier (vpmuldq reads a lane's low
// 32 bits as signed), the rounding term, the arithmetic shift, the zero
// point, the clamp. The int32 saturation is left out: a value past int32
// ends past [qmin, qmax] either way, so the clamp gives the same byte.
EULERNPU_AVX512_VNNI inline __m128i requantize16(__m512i acc, int32_t offset,
                                                 const sdk::qmath::FixedMultiplier& m,
                                                 const QGemmOutput& out) {
  acc = _mm512_add_epi32(acc, _mm512_set1_epi32(offset));
  const __m512i even = requantize_even(acc, m, out);
  const __m512i odd = requantize_even(_mm512_srli_epi64(acc, 32), m, out);
  // Each result in its lane's low 32 bits: the odd ones moved up a lane.
  const __m512i both = _mm512_mask_blend_epi32(__mmask16{0xAAAA}, even, _mm512_slli_epi64(odd, 32));
  return _mm512_cvtepi32_epi8(both);
}

}  // namespace eulernpu::kernels::detail
