// Reading the int32/int64 tensors that carry shapes, axes, lengths and
// indices at run time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/kit/op_table.hpp"

namespace eulernpu::kit {

// The values of an int32 or int64 tensor, widened to int64. Lowering admits
// only those dtypes, so another one means a damaged artifact.
inline std::vector<int64_t> read_ints(const Buffer& b) {
  require("cpu_ref", b.dtype == ENP_DTYPE_INT32 || b.dtype == ENP_DTYPE_INT64,
          std::string("an index input is ") + sdk::dtype_name(b.dtype));
  std::vector<int64_t> v(static_cast<size_t>(b.count()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = b.dtype == ENP_DTYPE_INT32 ? b.as<const int32_t>()[i] : b.as<const int64_t>()[i];
  }
  return v;
}

}  // namespace eulernpu::kit
