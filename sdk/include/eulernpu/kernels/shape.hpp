// Shapes as the reference kernels take them: row-major dims, and the
// strides numpy broadcasting reads them with.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace eulernpu::kernels {

using Dims = std::vector<int64_t>;
// 1 to 3 spatial dims, normalized to (D, H, W) with leading unit dims.
using Dims3 = std::array<int64_t, 3>;

// The product of the dims in [begin, end), 1 when empty: an element count.
template <typename It>
int64_t product(It begin, It end) {
  int64_t n = 1;
  for (It i = begin; i != end; ++i) n *= *i;
  return n;
}
inline int64_t product(const Dims& d) { return product(d.begin(), d.end()); }

// Strides of `shape` right-aligned to `rank` dims, 0 where it broadcasts.
inline Dims broadcast_strides(const Dims& shape, size_t rank) {
  Dims strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const size_t src = shape.size() - 1 - i, dst = rank - 1 - i;
    strides[dst] = shape[src] == 1 ? 0 : stride;
    stride *= shape[src];
  }
  return strides;
}

// `n` values of `v` from `first`, right-aligned in three dims, `fill` before.
inline Dims3 to3(const Dims& v, size_t first, size_t n, int64_t fill) {
  Dims3 d{fill, fill, fill};
  for (size_t i = 0; i < n; ++i) d[3 - n + i] = v[first + i];
  return d;
}

}  // namespace eulernpu::kernels
