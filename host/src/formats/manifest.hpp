// manifest.json: what an artifact is, what it was built from and how.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/plugin_identity.hpp"
#include "formats/artifact.hpp"
#include "onnx/onnx_pb.h"

namespace eulernpu::host {

inline constexpr int kManifestFormatVersion = 1;

struct BuildRecord {
  std::optional<PluginIdentity> frontend;  // none for a model read from an IR file
  PluginIdentity backend;
  std::string target_device;
  std::string core_mode;
  std::string model_path;
  std::string weights_path;  // empty if none
  std::vector<std::string> command_line;
  // int8 builds: the calibration set and the quantization settings
  // (quantize_cli.hpp); null otherwise.
  nlohmann::ordered_json calibration;
  nlohmann::ordered_json config;
  // Partitioned artifacts (partitioned_artifact.hpp): the "partitions"
  // array and the nodes the target refused; null for a single backend.
  nlohmann::ordered_json partitions;
  nlohmann::ordered_json offloaded_nodes;
  // What the backend said of its artifact (ABI 1.5, e.g. its arena's
  // bytes); null if nothing. Partitions carry their own.
  nlohmann::ordered_json lowered;
};

// {"name", "version", "abi"} of a plugin, as manifests record it.
nlohmann::ordered_json plugin_record(const PluginIdentity& p);

// The manifest for `files` (their sha256 included), as bytes ending in '\n'.
// Holds no timestamps and no absolute paths, so the same build gives the
// same bytes.
std::vector<uint8_t> make_manifest(const BuildRecord& record, const onnx::ModelProto& model,
                                   const FileSet& files);

// Parses and checks an artifact's manifest.json.
nlohmann::json read_manifest(const Artifact& artifact);

// The command line with every path reduced to its file name, so the record
// is the same wherever the files live.
std::vector<std::string> portable_command_line(const std::vector<std::string>& argv);

}  // namespace eulernpu::host
