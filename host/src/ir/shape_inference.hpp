// The host's IR pass over every imported model: static shape inference for
// every op with a rule, and constant folding of the shape arithmetic real
// exporters emit (Shape -> Gather -> Concat -> Reshape).
#pragma once

#include <string>

#include "onnx/onnx_pb.h"

namespace eulernpu::host::ir {

// Largest tensor constant folding creates; bigger results stay as nodes.
inline constexpr uint64_t kMaxFoldedElements = uint64_t{1} << 16;

struct InferStats {
  int folded_nodes = 0;
  int unknown_ops = 0;  // nodes without a rule (types from the model, if any)
};

// Runs inference in topological order (the graph must be sorted), folds
// constant nodes into initializers, and records every value's type in
// value_info and the outputs. Throws UserError("operator shape mismatch")
// naming the node on contradictions.
InferStats infer_shapes(onnx::ModelProto& model, const std::string& source);

}  // namespace eulernpu::host::ir
