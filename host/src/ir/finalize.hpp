// A model as the IR holds it: checked, sorted, shape-inferred
// onnx::ModelProto, and the edits made to it before lowering.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "onnx/onnx_pb.h"

namespace eulernpu::host {

// Sorts nodes topologically, fills defaults (IR version, producer), runs
// ONNX's checker and strict shape inference. Every failure is a UserError
// naming the node. `source` names the model in messages.
void finalize_model(onnx::ModelProto& model, const std::string& source);

// --freeze-input: each named graph input becomes a constant with the
// given values (text, comma-separated; as many as its static shape holds),
// so what depends on it alone folds at compile time, an If on it included
// (a sample rate, a mode flag). Then finalize_model(). Throws "frozen input
// does not fit" for an unknown input, a dynamic shape, a dtype without a
// text form or the wrong number of values.
void freeze_inputs(onnx::ModelProto& model,
                   const std::vector<std::pair<std::string, std::string>>& values,
                   const std::string& source);

// Replaces Constant nodes by initializers of the same name.
void constants_to_initializers(onnx::ModelProto& model, const std::string& source);

// The largest value (input or node output) a model may have: the largest
// arena a backend plans.
inline constexpr uint64_t kMaxValueBytes = uint64_t{64} << 30;

// Throws unless every input and every node output has a fully known shape:
// "dynamic input shape" names the input and the --input-shape to add;
// "dynamic dimension left unfixed" names the node and its op; "model
// tensor exceeds a size limit" one larger than kMaxValueBytes.
void require_static_shapes(const onnx::ModelProto& model, const std::string& source);

// Number of components recorded by the frontend (0 if it has none).
size_t component_count(const onnx::ModelProto& model);

}  // namespace eulernpu::host
