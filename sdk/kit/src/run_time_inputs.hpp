// Helpers of the ops that take sizes, lengths, axes or scalars as input
// tensors (kernels_misc.cpp, kernels_signal.cpp): reading them at run time,
// where a bad value is "input tensor value out of range" rather than a read
// outside a buffer, and the lowering checks of their dtypes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/graph.hpp"
#include "int_values.hpp"
#include "kernel_util.hpp"

namespace eulernpu::kit::run_time_inputs {

inline constexpr uint32_t kFloats = kF32 | ENP_DTYPE_BIT(ENP_DTYPE_FLOAT64);
inline constexpr uint32_t kIndex = ENP_DTYPE_BIT(ENP_DTYPE_INT32) | ENP_DTYPE_BIT(ENP_DTYPE_INT64);

inline std::string dims_string(const std::vector<int64_t>& d) { return sdk::shape_string(d); }

// The one value of an integer input tensor.
inline int64_t read_scalar(const Buffer& b, const std::string& what) {
  const std::vector<int64_t> v = read_ints(b);
  if (v.size() != 1) {
    value_out_of_range(what + " must hold one value, not " + std::to_string(v.size()));
  }
  return v[0];
}

inline int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    value_out_of_range(what + ": axis " + std::to_string(axis) + " is out of range for rank " +
                       std::to_string(rank));
  }
  return a;
}

// Calls f.template operator()<T>() with T float or double.
template <typename F>
void dispatch_float(int32_t dtype, F&& f) {
  if (!dispatch_among<float, double>(dtype, f)) {
    corrupt("cpu_ref", std::string("unsupported dtype ") + sdk::dtype_name(dtype));
  }
}

// Input i, when given, must be one of `mask`'s dtypes.
inline std::optional<std::string> input_dtype(const sdk::NodeView& node, const sdk::GraphView& g,
                                              size_t i, uint32_t mask, const char* allowed) {
  if (node.input(i).empty()) return std::nullopt;
  const int32_t d = dtype_of(g, node.input(i));
  if (mask & ENP_DTYPE_BIT(d)) return std::nullopt;
  return "input " + std::to_string(i) + " is " + sdk::dtype_name(d) + " (" + allowed + " only)";
}

inline std::optional<std::string> index_input(const sdk::NodeView& node, const sdk::GraphView& g,
                                              size_t i) {
  return input_dtype(node, g, i, kIndex, "int32, int64");
}

inline std::optional<std::string> output_float(const sdk::NodeView& node, const sdk::GraphView& g) {
  const int32_t d = dtype_of(g, node.output(0));
  if (kFloats & ENP_DTYPE_BIT(d)) return std::nullopt;
  return std::string("output dtype ") + sdk::dtype_name(d) +
         " is not supported (float32, float64 only)";
}

}  // namespace eulernpu::kit::run_time_inputs
