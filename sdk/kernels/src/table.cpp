// QLookup and QSoftmax (eulernpu/kernels/table.hpp).
#include "eulernpu/kernels/table.hpp"

#include <vector>

#include "lookup_bytes.hpp"

namespace eulernpu::kernels {

namespace qmath = sdk::qmath;

void qlookup(const std::array<int8_t, 256>& table, const int8_t* x, int64_t n, int8_t* y,
             const TaskRunner& r) {
  for_each_range(r, n, threads_for(r, n, int64_t{1} << 18), [&](int64_t begin, int64_t end) {
    detail::lookup_bytes(table, x + begin, end - begin, y + begin);
  });
}

void qsoftmax(const SoftmaxParams& p, const std::array<int32_t, 256>& exp, const int8_t* x,
              int8_t* y, const TaskRunner& r) {
  const int64_t len = p.len, inner = p.inner;
  const int64_t rows = len == 0 ? 0 : p.outer * inner;
  for_each_range(r, rows, threads_for(r, rows * len), [&](int64_t begin, int64_t end) {
    std::vector<int8_t> in(static_cast<size_t>(inner == 1 ? 0 : len));
    std::vector<int8_t> out(in.size());
    for (int64_t row = begin; row < end; ++row) {
      // Row `row`: outer index row / inner, inner index row % inner, stride inner.
      const int64_t base = row / inner * len * inner + row % inner;
      if (inner == 1) {
        qmath::softmax_row(x + base, y + base, len, exp);
        continue;
      }
      for (int64_t i = 0; i < len; ++i) in[static_cast<size_t>(i)] = x[base + i * inner];
      qmath::softmax_row(in.data(), out.data(), len, exp);
      for (int64_t i = 0; i < len; ++i) y[base + i * inner] = out[static_cast<size_t>(i)];
    }
  });
}

}  // namespace eulernpu::kernels
