#include "tensor.hpp"

#include "eulernpu/sdk/graph.hpp"

namespace eulernpu::host {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 4;
    case DType::kUInt8:
      return 1;
    case DType::kInt8:
      return 1;
    case DType::kInt16:
    case DType::kUInt16:
      return 2;
    case DType::kUInt32:
      return 4;
    case DType::kUInt64:
      return 8;
    case DType::kInt32:
      return 4;
    case DType::kInt64:
      return 8;
    case DType::kBool:
      return 1;
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kFloat64:
      return 8;
    case DType::kUndefined:
      return 0;
    // --- low-precision types
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
    case DType::kUInt2:
    case DType::kInt2:
      return sdk::dtype_size(static_cast<int32_t>(dtype));
      // --- end of low-precision types
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kUInt8:
      return "uint8";
    case DType::kInt8:
      return "int8";
    case DType::kInt16:
      return "int16";
    case DType::kUInt16:
      return "uint16";
    case DType::kUInt32:
      return "uint32";
    case DType::kUInt64:
      return "uint64";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kBool:
      return "bool";
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kFloat64:
      return "float64";
    case DType::kUndefined:
      return "undefined";
    // --- low-precision types
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
    case DType::kUInt2:
    case DType::kInt2:
      return sdk::dtype_name(static_cast<int32_t>(dtype));
      // --- end of low-precision types
  }
  return "undefined";
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
