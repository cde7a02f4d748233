#include "tensor.hpp"

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
  for (DType d : {DType::kFloat32, DType::kUInt8, DType::kInt8, DType::kInt16, DType::kInt32,
                  DType::kInt64, DType::kBool, DType::kFloat16, DType::kFloat64, DType::kUInt16,
                  DType::kUInt32, DType::kUInt64, DType::kBFloat16}) {
    if (name == dtype_name(d)) return d;
  }
  // --- low-precision types
  for (int32_t d = ENP_DTYPE_FLOAT8E4M3FN; d <= ENP_DTYPE_INT2; ++d) {
    if (name == sdk::dtype_name(d)) return static_cast<DType>(d);
  }
  // --- end of low-precision types
  return DType::kUndefined;
}

uint64_t Tensor::element_count() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

}  // namespace eulernpu::host
