// The implementations behind qgemm_int8 (internal to the kernel library):
// int8_gemm_variants() lists the ones this build has.
#pragma once

#include "eulernpu/kernels/int8_gemm.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EULERNPU_KERNELS_HAVE_AVX512_VNNI 1
#else
#define EULERNPU_KERNELS_HAVE_AVX512_VNNI 0
#endif

namespace eulernpu::kernels::detail {

void qgemm_int8_scalar(const QGemmShape& s, const int8_t* w, const int8_t* x, const int32_t* bias,
                       const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out, int8_t* y);

#if EULERNPU_KERNELS_HAVE_AVX512_VNNI
// Only where cpu_has_avx512_vnni().
void qgemm_int8_avx512_vnni(const QGemmShape& s, const int8_t* w, const int8_t* x,
                            const int32_t* bias, const sdk::qmath::FixedMultiplier* m,
                            const QGemmOutput& out, int8_t* y);
bool cpu_has_avx512_vnni();
#endif

}  // namespace eulernpu::kernels::detail
