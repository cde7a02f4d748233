// QGemm and QMatMul (eulernpu/kernels/matmul.hpp).
#include "eulernpu/kernels/matmul.hpp"

#include <algorithm>
#include <vector>

#include "requantize_row.hpp"

namespace eulernpu::kernels {

namespace qmath = sdk::qmath;

void qgemm(const QGemmParams& p, const int8_t* x, const int8_t* w, const int32_t* bias,
           const qmath::FixedMultiplier* m, int8_t* y, const TaskRunner& r) {
  const int64_t n = p.n, k = p.k, rows = p.rows;
  const QGemmOutput q{p.a_zero_point, p.y_zero_point, p.qmin, p.qmax};
  constexpr int64_t kWidth = 128;
  const int64_t blocks = (rows + kWidth - 1) / kWidth;
  for_each_task(r, blocks, threads_for(r, rows * n * k), [&](int64_t b) {
    const int64_t r0 = b * kWidth, cols = std::min(kWidth, rows - r0);
    std::vector<int8_t> xt(static_cast<size_t>(k * cols)), yt(static_cast<size_t>(n * cols));
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t i = 0; i < k; ++i) xt[static_cast<size_t>(i * cols + j)] = x[(r0 + j) * k + i];
    }
    qgemm_int8({n, k, cols}, w, xt.data(), bias, m, q, yt.data(), p.isa);
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t o = 0; o < n; ++o) y[(r0 + j) * n + o] = yt[static_cast<size_t>(o * cols + j)];
    }
  });
}

// Per output row: acc[n] = Σ_k (A − za) · (B − zb), vectorized along n.
void qmatmul(const QMatMulParams& p, const int8_t* a, const int8_t* b, int8_t* y,
             const TaskRunner& r) {
  const int64_t batches = product(p.batch);
  const Dims sa = broadcast_strides(p.a_batch, p.batch.size());
  const Dims sb = broadcast_strides(p.b_batch, p.batch.size());
  std::vector<int64_t> a_base(static_cast<size_t>(batches)), b_base(static_cast<size_t>(batches));
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rest = bi, oa = 0, ob = 0;
    for (size_t d = p.batch.size(); d-- > 0;) {
      const int64_t idx = rest % p.batch[d];
      rest /= p.batch[d];
      oa += idx * sa[d];
      ob += idx * sb[d];
    }
    a_base[static_cast<size_t>(bi)] = oa * p.m * p.k;
    b_base[static_cast<size_t>(bi)] = ob * p.k * p.n;
  }
  const int64_t rows = batches * p.m;
  for_each_range(r, rows, threads_for(r, rows * p.k * p.n), [&](int64_t begin, int64_t end) {
    std::vector<int32_t> acc(static_cast<size_t>(p.n));
    for (int64_t row = begin; row < end; ++row) {
      const auto bi = static_cast<size_t>(row / p.m);
      const int8_t* arow = a + a_base[bi] + row % p.m * p.k;
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t kk = 0; kk < p.k; ++kk) {
        const int32_t av = arow[kk] - p.a_zero_point;
        if (av == 0) continue;
        const int8_t* brow = b + b_base[bi] + kk * p.n;
        for (int64_t j = 0; j < p.n; ++j) {
          acc[static_cast<size_t>(j)] += av * (brow[j] - p.b_zero_point);
        }
      }
      detail::requantize_row(acc.data(), p.n, 0, p.multiplier, p.y_zero_point, p.qmin, p.qmax,
                             y + row * p.n);
    }
  });
}

}  // namespace eulernpu::kernels
