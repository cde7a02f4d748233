// Which of OpenBLAS's kernels the plugins that link it will use.
#pragma once

namespace eulernpu::host {

// Before the first plugin brings OpenBLAS in, names OpenBLAS's kernels from
// the CPU's features (OPENBLAS_CORETYPE, sdk::openblas_core_for_cpu: the
// library's own choice by model number gives a CPU newer than it SSE3
// kernels). A user's own OPENBLAS_CORETYPE is left as it is. Returns the
// core it set, or nullptr.
const char* choose_blas_kernels();

}  // namespace eulernpu::host
