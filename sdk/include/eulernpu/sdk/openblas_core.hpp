// The OpenBLAS kernels (OPENBLAS_CORETYPE) this CPU's features call for.
//
// OpenBLAS picks its kernels once, when the library loads, from the CPU's
// family and model numbers. A model newer than the library (Debian 12's
// OpenBLAS 0.3.21 does not know Emerald Rapids, family 6 model 207) or a
// hypervisor's generic CPU gets its SSE3 "Prescott" kernels: on such an
// AVX-512 Xeon, sgemm ran 2.3 to 4.6 times slower than with the AVX-512
// ones. A program that sets OPENBLAS_CORETYPE to this name before OpenBLAS
// loads (the host before its first plugin, the benchmark programs by
// starting again) gets the kernels the features allow.
#pragma once

namespace eulernpu::sdk {

// "SkylakeX" with AVX-512 F/CD/BW/DQ/VL, "Haswell" with AVX2 and FMA,
// else (and off x86) nullptr: OpenBLAS's own choice stands.
// __builtin_cpu_supports also checks that the OS saves the wider registers
// (XGETBV), so a kernel named here can run.
inline const char* openblas_core_for_cpu() {
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl")) {
    return "SkylakeX";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return nullptr;
}

}  // namespace eulernpu::sdk
