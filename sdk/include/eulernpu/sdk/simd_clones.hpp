#pragma once
// EULERNPU_SIMD_CLONES on a function: compiled three times, for AVX-512,
// for AVX2 and for the x86-64 baseline, and the widest the CPU runs picked
// when the plugin loads (GCC's and clang's function multi-versioning). The
// kernels and the kit are built for the baseline (SSE2) so that they run on
// every x86-64; a memory-light loop (a depthwise convolution's taps, a
// requantization) gains most from wider vectors. Integer clones compute the
// same integers by construction. The kit compiles with -ffp-contract=off: no clone fuses a
// multiply and an add into one rounding, so every clone computes each
// element with the baseline's operations and gives its bytes.
//
// Only where the loader resolves clones (ELF on x86-64, glibc's IFUNC) and
// not in the sanitizer tree, whose instrumented code runs before any
// resolver could.
#if defined(__x86_64__) && defined(__linux__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(EULERNPU_NO_SIMD_CLONES)
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EULERNPU_NO_SIMD_CLONES
#endif
#endif
#endif

#if defined(__x86_64__) && defined(__linux__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(EULERNPU_NO_SIMD_CLONES)
#define EULERNPU_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define EULERNPU_SIMD_CLONES
#endif
