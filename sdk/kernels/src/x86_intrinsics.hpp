// <immintrin.h> for the x86 ISA files (int8_gemm_avx512_vnni.cpp,
// int8_gemm_avx2.cpp, requantize_row_avx512.cpp, lookup_bytes_vbmi.cpp),
// included once here: GCC 12's intrinsics seed their pass-through operand
// with `__Y = __Y`, which -Wmaybe-uninitialized reports wherever they
// inline (GCC bug 105593); clang has neither the bug nor the warning. Each
// such file must include this before anything else includes <immintrin.h>,
// which is why they build outside the unity batches (sdk/CMakeLists.txt).
#pragma once

#if defined(__x86_64__)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif
