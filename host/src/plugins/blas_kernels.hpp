// Which of OpenBLAS's kernels the plugins that link it will use.
#pragma once

namespace eulernpu::host {

// Before the first plugin brings OpenBLAS in, names OpenBLAS's kernels from
// the CPU's features (OPENBLAS_CORETYPE, sdk::openblas_core_for_cpu: the
// library's own choice by model number gives a CPU newer than it SSE3
// kernels). A user's own OPENBLAS_CORETYPE is left as it is. Returns the
// core it set, or nullptr.
const char* choose_blas_kernels();

// Before the first plugin brings OpenBLAS in: OpenBLAS starts one thread
// (OPENBLAS_NUM_THREADS=1) instead of a worker per core, whose spinning
// after every call took a quarter of a small model's calibrating compile
// and made `--threads 1` use more than one core. A run that asks for more
// threads gets them (the backend kit sets the count before each run, and
// OpenBLAS starts the workers then). A user's own OPENBLAS_NUM_THREADS,
// GOTO_NUM_THREADS or OMP_NUM_THREADS is left as it is.
void start_blas_with_one_thread();

}  // namespace eulernpu::host
