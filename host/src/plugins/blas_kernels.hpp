// Which of OpenBLAS's kernels the plugins that link it will use.
#pragma once

namespace eulernpu::host {

// OpenBLAS picks its kernels once, when the library loads, from the CPU's
// family and model numbers. A model newer than the library (Debian 12's
// OpenBLAS 0.3.21 does not know Emerald Rapids, family 6 model 207) or a
// hypervisor's generic CPU gets its SSE3 "Prescott" kernels: on such an
// AVX-512 Xeon, sgemm ran 2.3 to 4.6 times slower than with the AVX-512
// ones. Before the first plugin brings OpenBLAS in, this names the core
// from the CPU's features instead (OPENBLAS_CORETYPE: SkylakeX with
// AVX-512 F/CD/BW/DQ/VL, Haswell with AVX2 and FMA). A user's own
// OPENBLAS_CORETYPE is left as it is. Returns the core it set, or nullptr.
const char* choose_blas_kernels();

}  // namespace eulernpu::host
