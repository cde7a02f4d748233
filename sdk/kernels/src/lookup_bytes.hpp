// y[i] = table[x[i] + 128] for a run of int8 codes: the one byte-table
// loop of QLookup and QConcat's rescale (internal to the kernel library).
// With AVX-512 VBMI (lookup_bytes_vbmi.cpp), 64 codes at a time: the table's
// halves are two pairs of registers, vpermi2b picks within each pair by a
// code's low seven bits, its top bit picks the pair. Elsewhere one byte at
// a time.
#pragma once

#include <array>
#include <cstdint>

#include "int8_gemm_variants.hpp"

namespace eulernpu::kernels::detail {

#if EULERNPU_KERNELS_HAVE_AVX512
// The first n - n % 64 codes (returns how many); only where
// cpu_has_avx512_vbmi().
int64_t lookup_bytes_vbmi(const std::array<int8_t, 256>& table, const int8_t* x, int64_t n,
                          int8_t* y);
bool cpu_has_avx512_vbmi();
// y[i] = table[b[i] + 128][a[i] + 128] for the first n - n % 16 codes
// (returns how many), 16 gathers at a time; only where cpu_has_avx512f()
// and avx512_loops_allowed().
int64_t lookup_pairs_avx512(const std::array<std::array<int8_t, 256>, 256>& table, const int8_t* a,
                            const int8_t* b, int64_t n, int8_t* y);
#endif

inline void lookup_bytes(const std::array<int8_t, 256>& table, const int8_t* x, int64_t n,
                         int8_t* y) {
  int64_t i = 0;
#if EULERNPU_KERNELS_HAVE_AVX512
  static const bool vbmi = cpu_has_avx512_vbmi() && avx512_loops_allowed();
  if (vbmi) i = lookup_bytes_vbmi(table, x, n, y);
#endif
  // The table and the pointers as locals: a store through int8_t* may
  // alias anything the compiler cannot see is private, and it would reload
  // them for every byte (four times the loop's cost).
  const std::array<int8_t, 256> t = table;
  const int8_t* src = x;
  int8_t* dst = y;
  for (; i < n; ++i) dst[i] = t[static_cast<size_t>(src[i] + 128)];
}

}  // namespace eulernpu::kernels::detail
