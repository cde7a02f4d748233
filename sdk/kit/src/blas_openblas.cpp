// The kernels' serial BLAS calls (kernel_util.hpp) through OpenBLAS: the
// host's definition. An exported bundle compiles blas_portable.cpp instead.
#include <cblas.h>

#include <climits>

#include "eulernpu/sdk/status.hpp"
#include "kernel_util.hpp"

namespace eulernpu::kit {
namespace {

int blas_int(int64_t v) {
  if (v < 0 || v > INT_MAX) {
    throw sdk::Error(ENP_RESOURCE_EXHAUSTED, "tensor too large for BLAS",
                     "a GEMM dimension of " + std::to_string(v) + " exceeds the int range",
                     "split the model's tensors into smaller ones");
  }
  return static_cast<int>(v);
}

}  // namespace

SerialBlas::SerialBlas() : saved_(openblas_get_num_threads()) {
  // Nested inside another SerialBlas (or already serial): leave it alone.
  if (saved_ != 1) openblas_set_num_threads(1);
}

SerialBlas::~SerialBlas() {
  if (saved_ != 1) openblas_set_num_threads(saved_);
}

void sgemm_f32_serial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                      const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                      float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    // OpenBLAS may skip a product with k = 0 altogether; scale C as the
    // formula says.
    for (int64_t i = 0; i < m; ++i) {
      float* row = c + i * ldc;
      for (int64_t j = 0; j < n; ++j) row[j] = beta == 0 ? 0.0f : beta * row[j];
    }
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, blas_int(m), blas_int(n), blas_int(k), alpha, a,
              blas_int(lda), b, blas_int(ldb), beta, c, blas_int(ldc));
}

void dgemm_f64_serial(int64_t m, int64_t n, int64_t k, const double* a, const double* b,
                      double* c) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(m), blas_int(n), blas_int(k), 1.0,
              a, blas_int(k), b, blas_int(n), 0.0, c, blas_int(n));
}

}  // namespace eulernpu::kit
