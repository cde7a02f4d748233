// What the AVX-512 VNNI kernels share (int8_gemm_avx512_vnni.cpp,
// qconv_vnni.cpp, qgemm_vnni.cpp): the offset that folds the +128 of
// vpdpbusd's unsigned operand into the bias, the packing of four weights
// into its signed operand's word, and the requantization of 16 int32 sums
// in a register. Include after x86_intrinsics.hpp, in x86-64 builds only.
#pragma once

#include <cstdint>

#include "eulernpu/kernels/int8_gemm.hpp"
#include "eulernpu/sdk/qmath.hpp"

#define EULERNPU_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

namespace eulernpu::kernels::detail {

// bias − (128 + zero_point) · Σ w, modulo 2^32. The sums enter as x + 128,
// so Σ w·(x − zp) + bias = Σ w·(x + 128) + this. The term can leave int32
// with the bias added; the kernels add it with wrapping vpaddd, and the
// true result lies inside the proven bound, so int32 residues determine it
// exactly. (The unsigned conversion is defined modulo 2^32; GCC and Clang
// define the signed one so too.)
inline int32_t vnni_offset(int64_t bias, int32_t zero_point, int64_t weight_sum) {
  const int64_t full = bias - (128 + int64_t{zero_point}) * weight_sum;
  return static_cast<int32_t>(static_cast<uint32_t>(full));
}

// The word of up to four weights w[0], w[step], ..., in its bytes from the
// lowest; 0 past `count`.
inline int32_t weight_word(const int8_t* w, int64_t step, int64_t count) {
  uint32_t word = 0;
  for (int64_t b = 0; b < 4 && b < count; ++b) {
    word |= uint32_t{static_cast<uint8_t>(w[b * step])} << (8 * b);
  }
  return static_cast<int32_t>(word);
}

// qmath::requantize of the sums in the even int32 lanes (each lane's low
// 32 bits, read as signed by vpmuldq), step for step in int64 lanes: the
// product, the rounding term, the arithmetic shift, the zero point, the
// clamp. Multiplier, rounding term and shift per int64 lane.
EULERNPU_AVX512_VNNI inline __m512i requantize_even(__m512i sums, __m512i multiplier, __m512i round,
                                                    __m512i shift, const QGemmOutput& out) {
  __m512i v = _mm512_add_epi64(_mm512_mul_epi32(sums, multiplier), round);
  v = _mm512_add_epi64(_mm512_srav_epi64(v, shift), _mm512_set1_epi64(out.y_zero_point));
  return _mm512_min_epi64(_mm512_max_epi64(v, _mm512_set1_epi64(out.qmin)),
                          _mm512_set1_epi64(out.qmax));
}

// The 16 bytes of the even lanes' and the odd lanes' results, in lane
// order. The int32 saturation of qmath::requantize is left out: a value
// past int32 ends past [qmin, qmax] either way, so the clamp gives the
// same byte.
EULERNPU_AVX512_VNNI inline __m128i requantize_lanes(__m512i sums, const __m512i (&multiplier)[2],
                                                     const __m512i (&round)[2],
                                                     const __m512i (&shift)[2],
                                                     const QGemmOutput& out) {
  const __m512i even = requantize_even(sums, multiplier[0], round[0], shift[0], out);
  const __m512i odd =
      requantize_even(_mm512_srli_epi64(sums, 32), multiplier[1], round[1], shift[1], out);
  // Each result in its lane's low 32 bits: the odd ones moved up a lane.
  const __m512i both = _mm512_mask_blend_epi32(__mmask16{0xAAAA}, even, _mm512_slli_epi64(odd, 32));
  return _mm512_cvtepi32_epi8(both);
}

// Adds `offset` to the 16 sums (wrapping: see vnni_offset) and returns the
// 16 bytes of qmath::requantize with one multiplier for every lane.
EULERNPU_AVX512_VNNI inline __m128i requantize16(__m512i acc, int32_t offset,
                                                 const sdk::qmath::FixedMultiplier& m,
                                                 const QGemmOutput& out) {
  const __m512i multiplier = _mm512_set1_epi64(m.multiplier);
  const __m512i round = _mm512_set1_epi64(int64_t{1} << (m.shift - 1));
  const __m512i shift = _mm512_set1_epi64(m.shift);
  return requantize_lanes(_mm512_add_epi32(acc, _mm512_set1_epi32(offset)),
                          {multiplier, multiplier}, {round, round}, {shift, shift}, out);
}

}  // namespace eulernpu::kernels::detail
