#include "core/tensor.hpp"

#include "eulernpu/sdk/graph.hpp"

namespace eulernpu::host {

// DType's values are the ABI's dtype codes, so the SDK's tables serve.
size_t dtype_size(DType dtype) { return sdk::dtype_size(static_cast<int32_t>(dtype)); }

// Every DType but kUndefined has a size; any other code (the ABI's string
// dtype among them) is no DType and gets no name.
const char* dtype_name(DType dtype) {
  return dtype_size(dtype) == 0 ? "undefined" : sdk::dtype_name(static_cast<int32_t>(dtype));
}

DType dtype_from_name(const std::string& name) {
  return static_cast<DType>(sdk::dtype_from_name(name));
}

uint64_t Tensor::element_count() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

std::string shape_string(const std::vector<int64_t>& shape) { return sdk::shape_string(shape); }

}  // namespace eulernpu::host
