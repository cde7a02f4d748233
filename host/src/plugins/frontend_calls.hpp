// Source model -> IR: runs a frontend plugin through the ABI, then
// finalize_model().
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "onnx/onnx_pb.h"
#include "plugins/plugin_registry.hpp"

namespace eulernpu::host {

struct ImportOptions {
  std::string frontend;  // empty: chosen by file extension
  std::optional<std::filesystem::path> weights;
  std::vector<std::pair<std::string, std::string>> options;
};

struct ImportedModel {
  onnx::ModelProto model;
  // Weights whose type the model declares but whose values were not given.
  std::set<std::string> unbound_weights;
  const LoadedPlugin* frontend = nullptr;
};

// Runs the frontend on `path`, then finalize_model().
ImportedModel import_model(const PluginRegistry& registry, const std::filesystem::path& path,
                           const ImportOptions& options);

}  // namespace eulernpu::host
