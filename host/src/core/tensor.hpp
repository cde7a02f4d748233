// The host's owning tensor: what npz files hold and plugins exchange.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eulernpu/sdk/abi.h"

namespace eulernpu::host {

// Element types, numbered as enp_dtype_t (and ONNX).
enum class DType : int32_t {
  kUndefined = ENP_DTYPE_UNDEFINED,
  kFloat32 = ENP_DTYPE_FLOAT32,
  kUInt8 = ENP_DTYPE_UINT8,
  kInt8 = ENP_DTYPE_INT8,
  kUInt16 = ENP_DTYPE_UINT16,
  kInt16 = ENP_DTYPE_INT16,
  kInt32 = ENP_DTYPE_INT32,
  kInt64 = ENP_DTYPE_INT64,
  kBool = ENP_DTYPE_BOOL,
  kFloat16 = ENP_DTYPE_FLOAT16,
  kFloat64 = ENP_DTYPE_FLOAT64,
  kUInt32 = ENP_DTYPE_UINT32,
  kUInt64 = ENP_DTYPE_UINT64,
  kBFloat16 = ENP_DTYPE_BFLOAT16,  // bit pattern in 2 bytes; .npy can't hold it
  // --- low-precision types: one byte per element, see abi.h and
  // eulernpu/sdk/lowbit.hpp.
  kFloat8E4M3FN = ENP_DTYPE_FLOAT8E4M3FN,
  kFloat8E4M3FNUZ = ENP_DTYPE_FLOAT8E4M3FNUZ,
  kFloat8E5M2 = ENP_DTYPE_FLOAT8E5M2,
  kFloat8E5M2FNUZ = ENP_DTYPE_FLOAT8E5M2FNUZ,
  kUInt4 = ENP_DTYPE_UINT4,
  kInt4 = ENP_DTYPE_INT4,
  kFloat4E2M1 = ENP_DTYPE_FLOAT4E2M1,
  kFloat8E8M0 = ENP_DTYPE_FLOAT8E8M0,
  kUInt2 = ENP_DTYPE_UINT2,
  kInt2 = ENP_DTYPE_INT2,
  // --- end of low-precision types
};

// Bytes per element; 0 for kUndefined.
size_t dtype_size(DType dtype);
// numpy's name: "float32", "int8", "bool", ...; ONNX's for the types numpy
// lacks ("float8e4m3fn", "int4", ...).
const char* dtype_name(DType dtype);
// Inverse of dtype_name; kUndefined if unknown.
DType dtype_from_name(const std::string& name);

struct Tensor {
  std::string name;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // little-endian, row-major

  // Product of shape (1 for a scalar).
  uint64_t element_count() const;
};

// "(1, 4)" as numpy prints shapes; "()" for a scalar, "(3,)" for rank 1.
std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace eulernpu::host
