// The kernels' serial BLAS calls (kernel_util.hpp) in standard C++, with
// NEON on aarch64: the definition an exported bundle compiles in place of
// blas_openblas.cpp, since a board has no OpenBLAS. C is scaled by beta
// once, then each block of K adds its products in a fixed order, so the
// bytes depend on the shapes alone. They differ from OpenBLAS's in the
// last bits (another summation order): float32 results agree with cpu_ref
// to the tolerance docs/backends/zynq_ps.md states, int8 never comes here.
#include <algorithm>
#include <vector>

#include "kernel_util.hpp"

// NEON on aarch64 only: its float arithmetic is IEEE, with subnormals;
// armv7-a's NEON flushes them to zero, so there the scalar loop (VFP) runs.
#if defined(__aarch64__)
#include <arm_neon.h>
#define EULERNPU_BLAS_NEON 1
#else
#define EULERNPU_BLAS_NEON 0
#endif

namespace eulernpu::kit {
namespace {

// B is packed in blocks of kKc rows by kNc columns: 64 KiB, held in the
// L2 of a Cortex-A9 (512 KiB) or A53 (1 MiB) while a row of C (1 KiB)
// stays in L1.
constexpr int64_t kKc = 64;
constexpr int64_t kNc = 256;

// c[0, n) += a * b[0, n).
inline void axpy(int64_t n, float a, const float* __restrict b, float* __restrict c) {
  int64_t j = 0;
#if EULERNPU_BLAS_NEON
  // vmlaq_n_f32: a multiply, then an add, each rounded (not fused), as the
  // scalar tail does.
  for (; j + 8 <= n; j += 8) {
    vst1q_f32(c + j, vmlaq_n_f32(vld1q_f32(c + j), vld1q_f32(b + j), a));
    vst1q_f32(c + j + 4, vmlaq_n_f32(vld1q_f32(c + j + 4), vld1q_f32(b + j + 4), a));
  }
#endif
  for (; j < n; ++j) c[j] += a * b[j];
}

}  // namespace

SerialBlas::SerialBlas() : saved_(1) {}
SerialBlas::~SerialBlas() = default;

void sgemm_f32_serial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                      const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                      float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) row[j] = beta == 0 ? 0.0f : beta * row[j];
  }
  if (k == 0) return;
  std::vector<float> packed(static_cast<size_t>(kKc * kNc));
  for (int64_t j0 = 0; j0 < n; j0 += kNc) {
    const int64_t nc = std::min(kNc, n - j0);
    for (int64_t p0 = 0; p0 < k; p0 += kKc) {
      const int64_t kc = std::min(kKc, k - p0);
      // op(B)[p0 + p][j0 + j] at packed[p * nc + j].
      for (int64_t p = 0; p < kc; ++p) {
        for (int64_t j = 0; j < nc; ++j) {
          packed[static_cast<size_t>(p * nc + j)] =
              trans_b ? b[(j0 + j) * ldb + p0 + p] : b[(p0 + p) * ldb + j0 + j];
        }
      }
      for (int64_t i = 0; i < m; ++i) {
        float* row = c + i * ldc + j0;
        for (int64_t p = 0; p < kc; ++p) {
          const float x = trans_a ? a[(p0 + p) * lda + i] : a[i * lda + p0 + p];
          axpy(nc, alpha * x, packed.data() + p * nc, row);
        }
      }
    }
  }
}

void dgemm_f64_serial(int64_t m, int64_t n, int64_t k, const double* a, const double* b,
                      double* c) {
  for (int64_t i = 0; i < m; ++i) {
    double* row = c + i * n;
    std::fill(row, row + n, 0.0);
    for (int64_t p = 0; p < k; ++p) {
      const double x = a[i * k + p];
      const double* brow = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += x * brow[j];
    }
  }
}

}  // namespace eulernpu::kit
