// The operators acme_npu runs and the rules their shapes must follow. The
// same rules decide what query() accepts and what run() accepts from an
// artifact, so a file that passes them can never drive a kernel out of
// bounds.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eulernpu/sdk/abi.h"

namespace acme_npu {

using Shape = std::vector<int64_t>;

enum class Op { kGemm, kMatMul, kAdd, kRelu, kSoftmax };

// Attributes of every op in one struct: only Gemm and Softmax have any, and
// a flat struct keeps the artifact format fixed.
struct Attrs {
  double alpha = 1.0;
  double beta = 1.0;
  int64_t trans_a = 0;
  int64_t trans_b = 0;
  int64_t axis = -1;  // Softmax, normalized to rank - 1 when lowered
};

// A bound on every tensor: keeps a corrupt artifact from asking for an
// absurd allocation, and is checked at compile time too so a valid
// artifact never exceeds it.
constexpr int64_t kMaxTensorBytes = int64_t{1} << 30;
constexpr size_t kMaxRank = 8;

const char* op_name(Op op);
std::optional<Op> op_from_name(std::string_view name);

// The table the host shows in `eulernpu capabilities`: the float32 ops
// above, then the int8 ops the backend kit's reference kernels run.
const std::vector<enp_op_support_t>& op_declarations();
// Whether `op_type` at `opset` is one of ours.
std::optional<Op> find_op(std::string_view op_type, int64_t opset);

// Problem with a shape on its own (rank, negative dims, size), or nullopt.
std::optional<std::string> shape_problem(const Shape& shape);
// Bytes of a float32 tensor of a shape that passed shape_problem().
int64_t float_bytes(const Shape& shape);

// The output shape of `op` on `inputs`, or why acme_npu cannot run it.
struct ShapeResult {
  Shape shape;
  std::string problem;  // empty when `shape` is valid
};
ShapeResult infer_shape(Op op, const Attrs& attrs, std::span<const Shape> inputs);

}  // namespace acme_npu
