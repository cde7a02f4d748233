// Linear-algebra kernels: Det of a batch of square matrices.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/status.hpp"
#include "float16.hpp"
#include "float_storage.hpp"
#include "kernel_util.hpp"

namespace eulernpu::kit {
namespace {

constexpr uint32_t kF16 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT16);
constexpr uint32_t kF64 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT64);

// det(A) of an n x n row-major matrix by LU decomposition with partial
// pivoting (Doolittle, as LAPACK's getrf): the product of U's diagonal,
// negated once per row swap. `a` is overwritten. A zero pivot column makes
// the matrix singular: the result is 0.
double lu_determinant(std::vector<double>& a, int64_t n) {
  double det = 1.0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t pivot = k;
    for (int64_t r = k + 1; r < n; ++r) {
      if (std::fabs(a[static_cast<size_t>(r * n + k)]) >
          std::fabs(a[static_cast<size_t>(pivot * n + k)])) {
        pivot = r;
      }
    }
    const double p = a[static_cast<size_t>(pivot * n + k)];
    if (p == 0.0) return 0.0;
    if (pivot != k) {
      for (int64_t c = 0; c < n; ++c) {
        std::swap(a[static_cast<size_t>(k * n + c)], a[static_cast<size_t>(pivot * n + c)]);
      }
      det = -det;
    }
    det *= p;
    for (int64_t r = k + 1; r < n; ++r) {
      const double f = a[static_cast<size_t>(r * n + k)] / p;
      if (f == 0.0) continue;
      for (int64_t c = k + 1; c < n; ++c) {
        a[static_cast<size_t>(r * n + c)] -= f * a[static_cast<size_t>(k * n + c)];
      }
    }
  }
  return det;
}

template <typename T>
void det_typed(const KernelContext& ctx) {
  const Buffer& x = ctx.inputs[0];
  Buffer& y = ctx.outputs[0];
  const size_t rank = x.shape.size();
  if (rank < 2 || x.shape[rank - 1] != x.shape[rank - 2] ||
      y.count() * x.shape[rank - 1] * x.shape[rank - 1] != x.count()) {
    corrupt("cpu_ref", "Det needs (..., M, M) input and (...) output");
  }
  const int64_t n = x.shape[rank - 1], mats = y.count();
  const T* xd = x.as<T>();
  T* yd = y.as<T>();
  parallel_for(mats, ctx.threads, [&](int64_t begin, int64_t end) {
    std::vector<double> a(static_cast<size_t>(n * n));
    for (int64_t m = begin; m < end; ++m) {
      for (int64_t i = 0; i < n * n; ++i) a[static_cast<size_t>(i)] = load(xd[m * n * n + i]);
      yd[m] = store<T>(lu_determinant(a, n));
    }
  });
}

void det_kernel(const KernelContext& ctx) {
  if (!dispatch_among<float, double, Half>(ctx.inputs[0].dtype,
                                           [&]<typename T>() { det_typed<T>(ctx); })) {
    corrupt("cpu_ref", "Det of an unexpected element type");
  }
}

}  // namespace

std::vector<OpEntry> linalg_ops() {
  return {
      {"Det", 11, 0, kF32 | kF16 | kF64, "(..., M, M); LU with partial pivoting in double", nullptr,
       &det_kernel},
  };
}

}  // namespace eulernpu::kit
