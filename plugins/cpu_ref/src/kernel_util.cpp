#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& shape, size_t rank) {
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const size_t src = shape.size() - 1 - i;
    const size_t dst = rank - 1 - i;
    strides[dst] = shape[src] == 1 ? 0 : stride;
    stride *= shape[src];
  }
  return strides;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

}  // namespace eulernpu::cpu_ref
