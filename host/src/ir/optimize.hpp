// Graph rewrites before quantization, as ONNX Runtime and TensorRT apply
// them: exported graphs keep BatchNormalization beside its Conv, divide by
// constants, and spell activations as chains of elementwise ops, each of
// which would otherwise become its own float island (or an extra int8
// rounding step) in the quantized graph. docs/optimization.md lists every
// rewrite with an example.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "onnx/onnx_pb.h"

namespace eulernpu::host::ir {

// The lowest default-domain opset the quantized graph is written at:
// QuantizeLinear/DequantizeLinear exist from opset 10, and int8 inputs of
// the ops that move int8 codes (MaxPool, Resize, Pad, Clip, ...) are valid
// ONNX from 11 to 13. Models below it are converted first, as ONNX
// Runtime's quantizer does.
inline constexpr int64_t kQuantizedGraphMinOpset = 13;

struct AppliedRewrite {
  std::string pass;    // "fold-batchnorm", "div-to-mul", ...
  std::string node;    // the node rewritten (its name in the source graph)
  std::string detail;  // what became what
};

// Runs a graph of constant nodes and returns its outputs, in order (the
// host runs it on cpu_ref). The graph is finalized and has no inputs.
using ConstantEvaluator = std::function<std::vector<Tensor>(const onnx::ModelProto&)>;

struct OptimizeOptions {
  bool raise_opset = true;
  bool fold_constants = true;
  bool fold_batchnorm = true;
  bool arithmetic = true;   // Div/Sub by constants
  bool activations = true;  // HardSigmoid, HardSwish
  bool fold_pads = true;    // a zero Pad into the Conv after it
  bool equalize = false;    // cross-layer equalization (opt_equalize.cpp)
};

// `model` is finalized; so is the result. Every failure is a UserError.
// `evaluate` may be empty: constant folding then keeps what the shape pass
// did not fold.
std::vector<AppliedRewrite> optimize_for_quantization(onnx::ModelProto& model,
                                                      const std::string& source,
                                                      const ConstantEvaluator& evaluate,
                                                      const OptimizeOptions& options = {});

// "12 rewrites (div-to-mul 2, fold-batchnorm 10)": the count per pass, by pass name.
std::string rewrite_counts(const std::vector<AppliedRewrite>& rewrites);

// --- the passes (one file each); each returns what it rewrote -------------
class GraphEdit;
std::vector<AppliedRewrite> raise_opset(onnx::ModelProto& model, const std::string& source,
                                        int64_t target);
std::vector<AppliedRewrite> fold_constants(GraphEdit& edit, const onnx::ModelProto& model,
                                           const std::string& source,
                                           const ConstantEvaluator& evaluate);
std::vector<AppliedRewrite> fold_batchnorm(GraphEdit& edit);
std::vector<AppliedRewrite> constant_arithmetic(GraphEdit& edit);
std::vector<AppliedRewrite> fuse_activations(GraphEdit& edit);
std::vector<AppliedRewrite> fold_pads(GraphEdit& edit);
std::vector<AppliedRewrite> equalize_layers(GraphEdit& edit);

}  // namespace eulernpu::host::ir
