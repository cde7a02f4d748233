// The compile pipeline after import (and quantization): partition the model
// for its backend (cpu_ref takes what the backend refuses, as the offload
// mode allows), lower every partition and add the manifest. One function,
// called by `compile` and `quantize` after they parse their arguments, and
// by any other front end of the same pipeline; it writes no file.
#pragma once

#include <string>

#include "formats/artifact.hpp"
#include "formats/manifest.hpp"
#include "onnx/onnx_pb.h"
#include "pipeline/partition.hpp"
#include "plugins/backend_calls.hpp"
#include "plugins/plugin_registry.hpp"

namespace eulernpu::host {

struct CompileJob {
  const LoadedPlugin* backend = nullptr;   // required
  const LoadedPlugin* frontend = nullptr;  // null for a model read from an IR file
  // What else the manifest records: device, core mode, source paths,
  // command line, and calibration/config for int8. compile_model fills in
  // the plugins' identities.
  BuildRecord record;
  CpuOffload offload = CpuOffload::kAuto;
  KeyValues extra_backend_options;  // a quantization config's backend section
  std::string search_path;          // the plugin directories, passed to every plugin
  std::string list_command;         // named by the error when nodes are refused
};

struct CompiledModel {
  FileSet files;  // the artifact's files, manifest.json included
  PartitionPlan plan;
};

// `model` has static shapes. Throws UserError "backend lowering missing for
// op X" when neither the backend nor (as allowed) cpu_ref lowers a node.
CompiledModel compile_model(const PluginRegistry& registry, const onnx::ModelProto& model,
                            CompileJob job);

}  // namespace eulernpu::host
