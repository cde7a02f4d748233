// Tensor-by-tensor comparison of a result with a golden.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace eulernpu::host {

// Every element as double (float16 widened exactly).
std::vector<double> to_doubles(const Tensor& t);

struct TensorComparison {
  std::string name;
  std::vector<int64_t> got_shape, expected_shape;
  DType got_dtype = DType::kUndefined, expected_dtype = DType::kUndefined;
  bool missing_in_got = false;       // key only in the golden
  bool missing_in_expected = false;  // key only in the result
  bool shape_mismatch = false;
  // Largest |got - expected|; NaN matches NaN, +-inf match themselves, any
  // other NaN or inf mismatch counts as infinity.
  double max_abs_diff = 0;
  uint64_t worst_index = 0;  // flat index of max_abs_diff
  double worst_got = 0, worst_expected = 0;
  bool ok = false;
};

// Golden keys in the golden's order, then result-only keys.
std::vector<TensorComparison> compare_tensors(const std::vector<Tensor>& got,
                                              const std::vector<Tensor>& expected,
                                              double tolerance);

// "0.0" for zero, else two significant digits ("3.4e-06", "0.25").
std::string format_diff(double diff);

}  // namespace eulernpu::host
