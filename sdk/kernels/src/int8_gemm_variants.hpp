// The implementations behind qgemm_int8 (internal to the kernel library):
// int8_gemm_variants() lists the ones this build has.
#pragma once

#include "eulernpu/kernels/int8_gemm.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EULERNPU_KERNELS_HAVE_AVX512_VNNI 1
#define EULERNPU_KERNELS_HAVE_AVX2 1
#define EULERNPU_KERNELS_HAVE_AVX512 1
#else
#define EULERNPU_KERNELS_HAVE_AVX512_VNNI 0
#define EULERNPU_KERNELS_HAVE_AVX2 0
#define EULERNPU_KERNELS_HAVE_AVX512 0
#endif

// NEON is architectural on aarch64; an armv7-a build has it when compiled
// for it (-mfpu=neon), and then requires it of the CPU, as the
// Cortex-A9 of every Zynq-7000 has. EULERNPU_KERNELS_NO_NEON builds the
// portable code alone, the baseline benchmarks/arm_kernels.sh counts against.
#if (defined(__ARM_NEON) || defined(__ARM_NEON__)) && !defined(EULERNPU_KERNELS_NO_NEON)
#define EULERNPU_KERNELS_HAVE_NEON 1
#else
#define EULERNPU_KERNELS_HAVE_NEON 0
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

#if EULERNPU_KERNELS_HAVE_AVX2
// Only where cpu_has_avx2().
void qgemm_int8_avx2(const QGemmShape& s, const int8_t* w, const int8_t* x, const int32_t* bias,
                     const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out, int8_t* y);
bool cpu_has_avx2();
#endif

// Whether the AVX-512 loops outside the GEMM (requantize_row_avx512.cpp,
// lookup_bytes_vbmi.cpp) may run where the CPU has them: not when
// EULERNPU_CPU_REF_ISA names "scalar" or "avx2", so that those settings run
// the code a CPU without AVX-512 runs (its SIMD clones aside). Read once.
bool avx512_loops_allowed();

// The packed GEMM's portable loop and NEON kernel (int8_gemm_packed.hpp).
void qgemm_int8_packed_scalar(const QGemmShape& s, const int8_t* packed, const int8_t* x,
                              const int32_t* offset, const sdk::qmath::FixedMultiplier* m,
                              const QGemmOutput& out, int8_t* y);

#if EULERNPU_KERNELS_HAVE_NEON
void qgemm_int8_packed_neon(const QGemmShape& s, const int8_t* packed, const int8_t* x,
                            const int32_t* offset, const sdk::qmath::FixedMultiplier* m,
                            const QGemmOutput& out, int8_t* y);
void qgemm_int8_neon(const QGemmShape& s, const int8_t* w, const int8_t* x, const int32_t* bias,
                     const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out, int8_t* y);
#endif

}  // namespace eulernpu::kernels::detail
