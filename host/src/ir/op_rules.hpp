// Per-operator rules of the IR: how each op's output types follow from its
// inputs (static shape inference), and, for the ops exporters use in shape
// arithmetic, how to evaluate it on constants (constant folding).
//
// One rule set serves every frontend: the host runs it on each imported
// model, so spec files, ONNX models and future formats get the same checks
// and the same folded, fully shaped graph.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"
#include "eulernpu/sdk/int8_ops.hpp"
#include "onnx/onnx_pb.h"

namespace eulernpu::host::ir {

// A value's element type and shape. dims[i] == -1: unknown; known == false:
// nothing is known about the shape (not even the rank).
struct ValueType {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  bool known = false;

  bool is_static() const;
  uint64_t element_count() const;  // static shapes only
};

ValueType type_of_tensor(const Tensor& t);

class InferContext {
 public:
  InferContext(const onnx::NodeProto& node, int64_t opset, std::vector<const ValueType*> inputs,
               std::vector<const Tensor*> constants);

  const onnx::NodeProto& node() const { return node_; }
  int64_t opset() const { return opset_; }
  size_t input_count() const { return inputs_.size(); }
  // False for omitted optional inputs ("") and indexes past the end.
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  const ValueType& input(size_t i) const;  // fails if absent
  // The input's value if it is a constant (initializer or folded).
  const Tensor* constant(size_t i) const { return i < constants_.size() ? constants_[i] : nullptr; }
  // Constant integer input as int64 values; nullopt if not constant.
  std::optional<std::vector<int64_t>> constant_ints(size_t i) const;

  bool has_attr(std::string_view name) const;
  int64_t attr_int(std::string_view name, int64_t fallback) const;
  float attr_float(std::string_view name, float fallback) const;
  std::string attr_string(std::string_view name, std::string fallback) const;
  std::vector<int64_t> attr_ints(std::string_view name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> attr_floats(std::string_view name) const;
  const onnx::TensorProto* attr_tensor(std::string_view name) const;

  size_t output_count() const { return static_cast<size_t>(node_.output_size()); }
  void set_output(size_t i, ValueType type);
  std::vector<ValueType>& outputs() { return outputs_; }

  // Throws "operator shape mismatch" naming the node and `why`.
  [[noreturn]] void fail(const std::string& why) const;
  // Checks `cond`, else fail(why).
  void require(bool cond, const std::string& why) const {
    if (!cond) fail(why);
  }
  // Normalizes a possibly negative axis for `rank`; fails if out of range.
  int64_t axis(int64_t axis, int64_t rank, const char* what = "axis") const;

 private:
  const onnx::NodeProto& node_;
  int64_t opset_;
  std::vector<const ValueType*> inputs_;
  std::vector<const Tensor*> constants_;
  std::vector<ValueType> outputs_;
};

// Sets the outputs in the context. Unknown input shapes propagate as
// unknown; contradictions fail().
using InferFn = void (*)(InferContext& ctx);
// Evaluates the node on constant inputs (every input a constant, unless the
// op reads only shapes, like Shape). Returns nullopt to leave it unfolded.
using FoldFn = std::optional<std::vector<Tensor>> (*)(InferContext& ctx);

struct OpRule {
  const char* op_type;
  InferFn infer;
  FoldFn fold;  // may be null
};

// eulernpu's own operator domain (docs/quantization.md, "The quantized
// graph") and the one version of it that exists.
inline constexpr std::string_view kEulerNpuDomain = sdk::int8_ops::kDomain;
inline constexpr int64_t kEulerNpuOpset = sdk::int8_ops::kOpsetVersion;

// Whether `domain` names the ONNX default domain ("" or "ai.onnx").
inline bool is_onnx_domain(std::string_view domain) {
  return domain.empty() || domain == "ai.onnx";
}

// The rule for an op of the ONNX domain, or null.
const OpRule* find_rule(std::string_view op_type);
// The rule for an op of `domain` (the ONNX domain or ai.eulernpu), or null.
const OpRule* find_rule(std::string_view domain, std::string_view op_type);

// Rule groups, one per file.
std::vector<OpRule> elementwise_rules();
std::vector<OpRule> nn_rules();
std::vector<OpRule> shape_rules();
std::vector<OpRule> reduce_rules();
std::vector<OpRule> transformer_rules();
std::vector<OpRule> loss_rules();
std::vector<OpRule> misc_rules();
std::vector<OpRule> einsum_rules();
std::vector<OpRule> image_rules();
std::vector<OpRule> signal_rules();
std::vector<OpRule> quant_rules();
std::vector<OpRule> sequence_rules();
std::vector<OpRule> rnn_rules();
std::vector<OpRule> detection_rules();
std::vector<OpRule> linalg_rules();
std::vector<OpRule> text_rules();
std::vector<OpRule> reverse_rules();
// Domain ai.eulernpu (rules_eulernpu.cpp).
std::vector<OpRule> eulernpu_rules();

// numpy broadcasting of two shapes; nullopt if they do not broadcast.
// Unknown dims (-1) broadcast to unknown unless the other side decides.
std::optional<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b);

// --- helpers shared by the rule files --------------------------------------

// The rule of ops whose output has the type of input 0.
void same_as_input(InferContext& ctx);

// A type of dtype `d` whose shape, even its rank, is unknown.
inline ValueType unknown(DType d) { return ValueType{d, {}, false}; }
// A rank-`rank` type with every dim unknown.
inline ValueType unknown_dims(DType d, size_t rank) {
  return ValueType{d, std::vector<int64_t>(rank, -1), true};
}
// The single value of constant input i, if it is one.
std::optional<int64_t> constant_scalar(const InferContext& ctx, size_t i);
// The length of 1-D input i if its shape says so, else -1.
int64_t vector_length(const InferContext& ctx, size_t i);

// The first output the rule of ONNX op `op` infers for this node with
// `inputs` (indexes into this node's inputs; kAbsentInput for none) as its
// inputs: ops that extend an ONNX op share its shape logic this way.
inline constexpr size_t kAbsentInput = static_cast<size_t>(-1);
ValueType infer_as(InferContext& ctx, const char* op, const std::vector<size_t>& inputs);

// `axes` normalized for `rank` (each through InferContext::axis); fails on
// a duplicate.
std::vector<int64_t> normalize_axes(const InferContext& ctx, std::vector<int64_t> axes,
                                    int64_t rank);

// Arithmetic on dims where -1 means unknown: whether a and b can be equal,
// the known one of two, and a product or sum that is unknown if a term is.
inline bool agree(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }
inline int64_t known_of(int64_t a, int64_t b) { return a >= 0 ? a : b; }
inline int64_t times(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a * b; }
inline int64_t plus(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a + b; }

}  // namespace eulernpu::host::ir
