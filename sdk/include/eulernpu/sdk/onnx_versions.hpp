// The ONNX versions eulernpu reads, written once for every reader of ONNX
// files (the onnx frontend, the .mblt reader) and for the conformance
// suite's scope.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace eulernpu::sdk::onnx_versions {

// Opsets of the default domain ("" or "ai.onnx").
inline constexpr int64_t kMinOpset = 7;
inline constexpr int64_t kMaxOpset = 28;

// ModelProto.ir_version: 3 is the first with opset imports; 13 the newest
// any opset up to kMaxOpset is exported with. 0 means the field is unset,
// which the ONNX format does not allow.
inline constexpr int64_t kMinIrVersion = 3;
inline constexpr int64_t kMaxIrVersion = 13;

// Why a model with `ir_version` cannot be read, or nullopt.
inline std::optional<std::string> ir_version_problem(int64_t ir_version) {
  if (ir_version == 0) return "has no IR version (the ir_version field is unset)";
  if (ir_version < kMinIrVersion || ir_version > kMaxIrVersion) {
    return "has IR version " + std::to_string(ir_version) + "; eulernpu reads IR versions " +
           std::to_string(kMinIrVersion) + " to " + std::to_string(kMaxIrVersion);
  }
  return std::nullopt;
}

}  // namespace eulernpu::sdk::onnx_versions
