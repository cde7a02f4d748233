// Describes an ONNX graph to the host through the SDK's GraphBuilder.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "eulernpu/sdk/frontend.hpp"
#include "onnx/onnx_pb.h"

namespace eulernpu::onnx_frontend {

// Input name -> the dims it is fixed to (from --input-shape).
using ShapeOverrides = std::map<std::string, std::vector<int64_t>>;

// Parses the request's "input_shape.NAME" = "D0,D1,..." options.
ShapeOverrides parse_shape_overrides(const sdk::Options& options);

// Emits inputs (overrides applied), outputs, initializers, Constant nodes as
// initializers, and every other node. `model_path` names errors.
void emit_graph(const onnx::ModelProto& model, const ShapeOverrides& overrides,
                const std::string& model_path, sdk::GraphBuilder& out);

}  // namespace eulernpu::onnx_frontend
