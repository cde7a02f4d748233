#include "plugins/blas_kernels.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>

namespace eulernpu::host {

const char* choose_blas_kernels() {
#if defined(__x86_64__) || defined(__i386__)
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  if (user != nullptr && *user != '\0') {
    spdlog::debug("OPENBLAS_CORETYPE={} (set by the user)", user);
    return nullptr;
  }
  // __builtin_cpu_supports also checks that the OS saves the wider
  // registers (XGETBV), so a kernel named here can run.
  const char* core = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl")) {
    core = "SkylakeX";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    core = "Haswell";
  }
  if (core == nullptr) return nullptr;
  // Before any plugin (and any thread) starts: setenv is not thread-safe.
  setenv("OPENBLAS_CORETYPE", core, 1);
  spdlog::debug("OPENBLAS_CORETYPE={} (from the CPU's features)", core);
  return core;
#else
  return nullptr;
#endif
}

}  // namespace eulernpu::host
