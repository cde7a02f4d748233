// requantize_row's AVX-512 loop (x86-64 builds only; elsewhere the file is
// empty): qmath::requantize on eight outputs per step, the 32 × 32-bit
// product as one vpmuldq. The loop requantize_row.cpp compiles for its
// AVX-512 clone from vector extensions forms the same product from three
// unsigned multiplies (AVX-512F has no 64-bit multiply of its own), half
// this loop's speed. As in int8_gemm_avx512_vnni.cpp, only the function
// marked EULERNPU_AVX512 uses the instructions, and the file is compiled
// without -m flags.
#include "requantize_row.hpp"

#if EULERNPU_KERNELS_HAVE_AVX512
#include "x86_intrinsics.hpp"

namespace eulernpu::kernels::detail {

#define EULERNPU_AVX512 __attribute__((target("avx512f")))

bool cpu_has_avx512f() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}

// The same integers as requantize_row.cpp's vector loop, step for step:
// acc + offset in int32 (the caller proved it fits), the exact product, the
// rounding term, the arithmetic shift, the zero point, the clamp; the int32
// saturation is left out for the reason given there.
EULERNPU_AVX512 int64_t requantize_avx512(const int32_t* acc, int64_t n, int32_t offset,
                                          const sdk::qmath::FixedMultiplier& m, int32_t zero_point,
                                          int32_t qmin, int32_t qmax, int8_t* y) {
  const __m256i off = _mm256_set1_epi32(offset);
  const __m512i mult = _mm512_set1_epi64(m.multiplier);
  const __m512i round = _mm512_set1_epi64(int64_t{1} << (m.shift - 1));
  const __m128i shift = _mm_cvtsi32_si128(m.shift);
  const __m512i zp = _mm512_set1_epi64(zero_point);
  const __m512i lo = _mm512_set1_epi64(qmin), hi = _mm512_set1_epi64(qmax);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i a =
        _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i)), off);
    // vpmuldq reads each lane's low 32 bits as signed: the sign-extended
    // sums, times the multiplier.
    __m512i v = _mm512_mul_epi32(_mm512_cvtepi32_epi64(a), mult);
    v = _mm512_add_epi64(_mm512_sra_epi64(_mm512_add_epi64(v, round), shift), zp);
    v = _mm512_min_epi64(_mm512_max_epi64(v, lo), hi);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), _mm512_cvtepi64_epi8(v));
  }
  return i;
}

}  // namespace eulernpu::kernels::detail

#endif  // EULERNPU_KERNELS_HAVE_AVX512
