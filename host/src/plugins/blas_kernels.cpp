#include "plugins/blas_kernels.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>

#include "eulernpu/sdk/openblas_core.hpp"

namespace eulernpu::host {

const char* choose_blas_kernels() {
  const char* user = std::getenv("OPENBLAS_CORETYPE");
  if (user != nullptr && *user != '\0') {
    spdlog::debug("OPENBLAS_CORETYPE={} (set by the user)", user);
    return nullptr;
  }
  const char* core = sdk::openblas_core_for_cpu();
  if (core == nullptr) return nullptr;
  // Before any plugin (and any thread) starts: setenv is not thread-safe.
  setenv("OPENBLAS_CORETYPE", core, 1);
  spdlog::debug("OPENBLAS_CORETYPE={} (from the CPU's features)", core);
  return core;
}

void start_blas_with_one_thread() {
  // OpenBLAS reads these in this order; any of them set is the user's.
  for (const char* name : {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"}) {
    const char* user = std::getenv(name);
    if (user != nullptr && *user != '\0') {
      spdlog::debug("{}={} (set by the user)", name, user);
      return;
    }
  }
  setenv("OPENBLAS_NUM_THREADS", "1", 1);  // before any thread starts, as above
}

}  // namespace eulernpu::host
