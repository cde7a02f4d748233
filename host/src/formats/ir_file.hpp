// The IR file (.mblt): a valid ONNX ModelProto holding the parsed,
// shape-inferred, constant-folded graph, with provenance in
// metadata_props, so Netron and the onnx tools open it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/plugin_identity.hpp"
#include "onnx/onnx_pb.h"

namespace eulernpu::host {

// Upper bound on an IR file read into memory (protobuf's own limit).
inline constexpr uint64_t kMaxIrFileBytes = uint64_t{2} << 30;

struct Provenance {
  std::string source_path;  // recorded by file name only
  std::optional<PluginIdentity> frontend;
  std::vector<std::pair<std::string, std::string>> input_shapes;
};

// Adds eulernpu.* provenance keys (tool version, frontend, source file name
// and sha256, input shape overrides) to the model's metadata_props.
void add_provenance(onnx::ModelProto& model, const Provenance& p);

// Serializes deterministically and writes atomically.
void write_ir_file(const std::filesystem::path& path, const onnx::ModelProto& model);

// Reads an IR file (any ONNX model eulernpu wrote, or plain ONNX) and runs
// finalize_model on it. Throws UserError for missing, oversized or corrupt
// files.
onnx::ModelProto read_ir_file(const std::filesystem::path& path);

}  // namespace eulernpu::host
