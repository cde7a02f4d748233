#include "int8_gemm.hpp"

#include <vector>

namespace eulernpu::cpu_ref {

void qgemm_int8(const QGemmShape& s, const int8_t* w, const int8_t* x, const int32_t* bias,
                const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out, int8_t* y) {
  std::vector<int32_t> acc(static_cast<size_t>(s.columns));
  for (int64_t o = 0; o < s.rows; ++o) {
    const int8_t* wrow = w + o * s.depth;
    std::fill(acc.begin(), acc.end(), 0);
    int32_t row_sum = 0;
    for (int64_t k = 0; k < s.depth; ++k) {
      const int32_t wk = wrow[k];
      row_sum += wk;
      if (wk == 0) continue;
      const int8_t* xrow = x + k * s.columns;
      // Contiguous multiply-adds on int32: the compiler vectorizes this.
      for (int64_t p = 0; p < s.columns; ++p) acc[static_cast<size_t>(p)] += wk * xrow[p];
    }
    // Σ w·(x − zp) = Σ w·x − zp·Σ w; both terms and their difference stay
    // inside the bound the quantizer proved.
    const int32_t offset = (bias ? bias[o] : 0) - out.x_zero_point * row_sum;
    int8_t* yrow = y + o * s.columns;
    for (int64_t p = 0; p < s.columns; ++p) {
      yrow[p] = static_cast<int8_t>(sdk::qmath::requantize(
          acc[static_cast<size_t>(p)] + offset, m[o], out.y_zero_point, out.qmin, out.qmax));
    }
  }
}

}  // namespace eulernpu::cpu_ref
