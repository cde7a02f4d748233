// The graph rewrite: a float graph plus calibrated activation ranges in, the
// int8 graph of docs/quantization.md ("The quantized graph") out.
//
// Nodes are visited in topological order. A node the rewrite can express in
// integers becomes its ai.eulernpu op (or stays an ONNX op moving int8
// codes); any other node stays float32. Values cross between the two worlds
// through QuantizeLinear / DequantizeLinear, inserted lazily where a
// consumer needs the other form, so a float region costs exactly one
// boundary each way.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "adaptive_rounding.hpp"
#include "calibration.hpp"
#include "eulernpu/sdk/int8_ops.hpp"
#include "eulernpu/sdk/qmath.hpp"
#include "owned_graph.hpp"

namespace eulernpu::int8_quantizer {

// Which Conv/Gemm/MatMul-by-constant write float32 straight from their
// int32 accumulators (ConvInteger / MatMulInteger, the bias, Cast, one
// multiply by s_x · s_w) instead of rounding to int8 and back: those whose
// output only float32 nodes read (kInner), also those that are graph
// outputs (kAll), or none.
enum class FloatOutputs { kNone, kInner, kAll };

struct RewriteSettings {
  bool per_tensor_weights = false;
  FloatOutputs float_outputs = FloatOutputs::kNone;
  std::set<std::string> keep_fp32;         // node names
  std::set<std::string> per_tensor_nodes;  // node names
  std::string method;                      // recorded in the metadata
  // Bias correction: per Conv / Gemm / MatMul node, its input's means over
  // the calibration samples (per channel and tap for a Conv; empty: no
  // correction).
  std::map<std::string, std::vector<double>> input_means;
  // Adaptive rounding: per Conv / Gemm / MatMul node, its input's second
  // moments (owned by the caller, alive for the rewrite; absent: nearest).
  std::map<std::string, const InputMoments*> input_moments;
  std::string rounding = "nearest";  // recorded in the metadata
  // Method best: the candidate each value's range came from (metadata).
  std::map<std::string, std::string> value_methods;
};

// Scale and zero point of an int8 value. The scale is always a float32
// value (stored as a double), so the float32 scales QuantizeLinear and
// DequantizeLinear carry are exactly the ones the integer constants derive
// from.
struct QParams {
  double scale = 1;
  int32_t zero_point = 0;
};
QParams to_qparams(const QuantParams& p);

// Ops that only move int8 codes (docs/quantization.md lists them).
bool is_movement_op(const std::string& op_type);
// The op families with a per-op rule (Rewriter::linear, elementwise,
// pooling); with is_movement_op and the table ops, all that has an int8 form.
bool is_matrix_op(const std::string& op_type);       // Conv, ConvTranspose, Gemm, MatMul
bool is_elementwise_op(const std::string& op_type);  // Add, Sub, Mul
bool is_pooling_op(const std::string& op_type);      // AveragePool, GlobalAveragePool, Concat

// The int8-capable nodes (by index) of regions with no matrix op that
// float32 nodes enclose on every side: they stay float32
// (rewrite_islands.cpp).
std::set<size_t> enclosed_islands(const OwnedGraph& g, const RewriteSettings& settings);

// The float32 values that no int8 op would read: every reader has no int8
// form (or is kept float32), or is a code-moving op whose outputs are such
// values too; with kAll a graph output counts as such a reader
// (rewrite_islands.cpp).
std::set<std::string> float_read_values(const OwnedGraph& g, const RewriteSettings& settings);

// Explicit [begin..., end...] pads of a Conv/pool node whose input has
// spatial dims `spatial` (auto_pad resolved as ONNX defines it); nullopt if
// the shape is not known.
std::optional<std::vector<int64_t>> explicit_pads(const Node& n,
                                                  const std::vector<int64_t>& spatial,
                                                  const std::vector<int64_t>& kernel);

class Rewriter {
 public:
  // `calibrated`: per float value name, the parameters its observed range
  // gives.
  Rewriter(const OwnedGraph& source, std::map<std::string, QParams> calibrated,
           RewriteSettings settings);
  OwnedGraph run();

  // --- used by the per-op rules (rewrite_*.cpp) ------------------------------
  using Reason = std::optional<std::string>;  // nullopt: quantized

  const OwnedGraph& source() const { return src_; }
  // True if `name` is a float32 value computed at run time (not a constant).
  bool is_float_activation(const std::string& name) const;
  // Parameters `name` has (or will have) as int8: those of its int8 twin if
  // one exists, else the calibrated ones.
  std::optional<QParams> params_of(const std::string& name) const;
  // The int8 twin of float value `name`, inserting QuantizeLinear if needed.
  std::string int8_of(const std::string& name);
  // An int8 constant from a float initializer, quantized per tensor
  // (asymmetric over its own range); nullopt if `name` is not one.
  std::optional<std::pair<std::string, QParams>> int8_constant(const std::string& name);
  // Registers `float_name`'s int8 twin as produced by node `node`.
  std::string define_int8(const std::string& float_name, QParams p, const Node& node,
                          const std::string& op);
  // Adds an initializer with a unique name derived from `hint`; returns it.
  std::string add_initializer(const std::string& hint, int32_t dtype, std::vector<int64_t> dims,
                              const void* data, size_t bytes);
  std::string add_int32s(const std::string& hint, const std::vector<int32_t>& v);
  std::string add_int8s(const std::string& hint, std::vector<int64_t> dims,
                        const std::vector<int8_t>& v);
  void add_node(Node n) { out_.nodes.push_back(std::move(n)); }
  // Names of the nodes reading `value` (source graph).
  const std::vector<size_t>& consumers(const std::string& value) const;
  bool is_graph_output(const std::string& value) const;
  // A Relu or Clip right after `value` that can become the producer's clamp:
  // the only reader of a value no graph output names. Returns the fused
  // node's index and its output.
  std::optional<size_t> fusable_activation(const std::string& value) const;
  // The clamp [qmin, qmax] the fused node `index` gives at parameters `p`.
  std::pair<int32_t, int32_t> clamp_of(size_t index, QParams p) const;
  void mark_fused(size_t index, const std::string& into);
  // Whether `value` should be written in float32 by the matrix op computing
  // it (RewriteSettings::float_outputs).
  bool float_output(const std::string& value) const { return float_read_.count(value) != 0; }
  // Registers float value `name` as computed by the int8 graph (a matrix op
  // with a float32 output) and records it in the metadata.
  void define_float_output(const std::string& name, const Node& node, const std::string& how);
  bool per_tensor(const Node& n) const;
  // Bias correction's input means for node `node`, or null.
  const std::vector<double>* input_means(const std::string& node) const {
    const auto it = settings_.input_means.find(node);
    return it == settings_.input_means.end() ? nullptr : &it->second;
  }
  // Adaptive rounding's input moments for node `node`, or null.
  const InputMoments* input_moments(const std::string& node) const {
    const auto it = settings_.input_moments.find(node);
    return it == settings_.input_moments.end() ? nullptr : it->second;
  }
  // Records what adaptive rounding did to node `node` (metadata).
  void note_rounding(const std::string& node, const RoundingResult& r);

 private:
  Reason quantize_node(size_t index);
  // The pointwise region starting at node `index` as one QLookup
  // (rewrite_region.cpp); nullopt if no region of two or more nodes starts
  // there (the per-op rules then decide).
  std::optional<Reason> pointwise_region(size_t index);
  // The per-op rules; each decides before it emits anything.
  Reason linear(size_t index);       // Conv, ConvTranspose, Gemm, MatMul
  Reason elementwise(size_t index);  // Add, Sub, Mul
  Reason unary(size_t index);        // table ops, Softmax
  Reason pooling(size_t index);      // AveragePool, GlobalAveragePool, Concat
  Reason movement(size_t index);     // code-moving ONNX ops
  Reason conv(size_t index);
  Reason conv_transpose(size_t index);
  Reason gemm(size_t index);
  Reason matmul(size_t index);

  void keep_float(size_t index, const std::string& reason);
  // Method best: the last values_ entry says which candidate its range is.
  void note_method(const std::string& float_name);
  // The float form of `name`, inserting DequantizeLinear if only its int8
  // twin exists.
  std::string float_of(const std::string& name);
  std::string unique(const std::string& hint);

  const OwnedGraph& src_;
  std::map<std::string, QParams> calibrated_;
  RewriteSettings settings_;
  OwnedGraph out_;
  std::map<std::string, std::string> int8_name_;  // float name -> its int8 twin
  std::map<std::string, QParams> int8_params_;    // float name -> the twin's parameters
  std::set<std::string> float_ready_;             // float values available in out_
  std::set<std::string> used_names_;
  std::map<std::string, std::vector<size_t>> consumers_;
  std::set<std::string> graph_outputs_;
  std::set<size_t> fused_;
  std::set<size_t> islands_;
  std::set<std::string> float_read_;
  nlohmann::json float_outputs_json_ = nlohmann::json::array();
  nlohmann::json rounding_json_ = nlohmann::json::array();
  nlohmann::json values_ = nlohmann::json::array();
  nlohmann::json float_nodes_ = nlohmann::json::array();
  nlohmann::json fused_json_ = nlohmann::json::array();
  nlohmann::json region_json_ = nlohmann::json::array();
};

}  // namespace eulernpu::int8_quantizer
