// lookup_bytes with AVX-512 VBMI (x86-64 builds only; elsewhere the file is
// empty). As in int8_gemm_avx512_vnni.cpp, only the function marked
// EULERNPU_AVX512_VBMI uses the instructions, and the file is compiled
// without -m flags.
#include "lookup_bytes.hpp"

#if EULERNPU_KERNELS_HAVE_AVX512
#include "x86_intrinsics.hpp"

namespace eulernpu::kernels::detail {

#define EULERNPU_AVX512_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))

bool cpu_has_avx512_vbmi() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vbmi");
}

EULERNPU_AVX512_VBMI int64_t lookup_bytes_vbmi(const std::array<int8_t, 256>& table,
                                               const int8_t* x, int64_t n, int8_t* y) {
  // Entry q + 128 for code q: codes -128..-1 are entries 0..127 (t0, t1),
  // codes 0..127 entries 128..255 (t2, t3). vpermi2b reads an index's low
  // seven bits, the same for q and q + 128's entry; a code's sign bit set
  // means the first half.
  const __m512i t0 = _mm512_loadu_si512(table.data());
  const __m512i t1 = _mm512_loadu_si512(table.data() + 64);
  const __m512i t2 = _mm512_loadu_si512(table.data() + 128);
  const __m512i t3 = _mm512_loadu_si512(table.data() + 192);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i q = _mm512_loadu_si512(x + i);
    const __m512i negative = _mm512_permutex2var_epi8(t0, q, t1);
    const __m512i positive = _mm512_permutex2var_epi8(t2, q, t3);
    const __mmask64 sign = _mm512_movepi8_mask(q);
    _mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(sign, positive, negative));
  }
  return i;
}

#define EULERNPU_AVX512 __attribute__((target("avx512f")))

EULERNPU_AVX512 int64_t lookup_pairs_avx512(const std::array<std::array<int8_t, 256>, 256>& table,
                                            const int8_t* a, const int8_t* b, int64_t n,
                                            int8_t* y) {
  // Entry (b + 128) · 256 + a + 128, gathered as the aligned dword that
  // holds it (never past the table's end), then shifted down to it.
  const auto* words = reinterpret_cast<const int*>(table.data());
  const __m512i bias = _mm512_set1_epi32(128);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i va = _mm512_add_epi32(
        _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i))), bias);
    const __m512i vb = _mm512_add_epi32(
        _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i))), bias);
    const __m512i index = _mm512_or_si512(_mm512_slli_epi32(vb, 8), va);
    const __m512i word = _mm512_i32gather_epi32(_mm512_srli_epi32(index, 2), words, 4);
    const __m512i shift = _mm512_slli_epi32(_mm512_and_si512(index, _mm512_set1_epi32(3)), 3);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm512_cvtepi32_epi8(_mm512_srlv_epi32(word, shift)));
  }
  return i;
}

}  // namespace eulernpu::kernels::detail

#endif  // EULERNPU_KERNELS_HAVE_AVX512
