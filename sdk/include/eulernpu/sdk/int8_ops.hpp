// The int8 operator set every part of eulernpu agrees on, written once: the
// ops of domain `ai.eulernpu` that the quantizer writes, the host checks,
// and every backend runs (docs/quantization.md, "The quantized graph"), and
// the ONNX ops that only move int8 codes. The host's shape rules, the
// quantizer's rewrite, cpu_ref's op table, npu_sim's graph conversion and
// the docs read this list; tests/unit/int8_ops_test.cpp fails when an op
// lacks its rule, kernel or doc entry.
#pragma once

#include <cstdint>
#include <string_view>

namespace eulernpu::sdk::int8_ops {

// The operator domain and the one version of it that exists.
inline constexpr std::string_view kDomain = "ai.eulernpu";
inline constexpr int64_t kOpsetVersion = 1;

enum class Family {
  kMatrix,       // int32 accumulation over weights or a second operand
  kElementwise,  // per element, numpy broadcasting
  kPooling,      // windows or whole planes summed and rescaled
  kConcat,       // inputs rescaled into one output
  kTable,        // 256-entry lookup
  kSoftmax,      // exp table along one axis
};

struct Op {
  std::string_view name;
  Family family;
  // Whether a constant input is data streamed like an activation (a bias
  // map, anchors) rather than weights loaded once.
  bool streams_constants;
  // Inputs, all required; max_inputs -1: any number from min_inputs. Every
  // op has one output.
  int min_inputs, max_inputs;
};

inline constexpr Op kOps[] = {
    {"QConv", Family::kMatrix, false, 5, 5},
    {"QConvTranspose", Family::kMatrix, false, 5, 5},
    {"QGemm", Family::kMatrix, false, 5, 5},
    {"QMatMul", Family::kMatrix, false, 2, 2},
    {"QAdd", Family::kElementwise, true, 2, 2},
    {"QSub", Family::kElementwise, true, 2, 2},
    {"QMul", Family::kElementwise, true, 2, 2},
    {"QAveragePool", Family::kPooling, false, 3, 3},
    {"QGlobalAveragePool", Family::kPooling, false, 1, 1},
    {"QConcat", Family::kConcat, true, 1, -1},
    {"QLookup", Family::kTable, false, 2, 2},
    {"QSoftmax", Family::kSoftmax, false, 2, 2},
};

// The op of `kDomain` named `name`, or null.
constexpr const Op* find(std::string_view name) {
  for (const Op& op : kOps) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

// ONNX ops (default domain) that only move or select int8 codes: the same
// bytes on every backend whatever the scales, so int8 flows through them
// with the input's scale and zero point (docs/quantization.md). Resize
// only in mode nearest, Pad with the zero point as its constant.
inline constexpr std::string_view kMovementOps[] = {
    "Reshape",  "Flatten", "Transpose", "Squeeze", "Unsqueeze",    "Slice",
    "Split",    "Gather",  "Expand",    "Tile",    "DepthToSpace", "SpaceToDepth",
    "Identity", "MaxPool", "Resize",    "Pad"};

constexpr bool is_movement_op(std::string_view op_type) {
  for (std::string_view m : kMovementOps) {
    if (m == op_type) return true;
  }
  return false;
}

}  // namespace eulernpu::sdk::int8_ops
