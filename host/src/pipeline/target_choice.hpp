// What --backend, --frontend and --target-device name together. Seed 000's
// command lines say `--backend onnx` for the model's source framework and
// `--target-device D` alone for the device: both are understood here, for
// the CLI and the Python module alike.
#pragma once

#include <string>

#include "plugins/plugin_registry.hpp"

namespace eulernpu::host {

struct TargetRequest {
  std::string backend;   // --backend: a backend, or a frontend (the source framework)
  std::string frontend;  // --frontend
  std::string device;    // --target-device
  bool lowers = true;    // false for parse: no backend is chosen
};

struct TargetChoice {
  const LoadedPlugin* backend = nullptr;  // null when nothing is lowered
  std::string frontend;                   // the frontend to read with; empty: by extension
  // One line saying how the request was read, when it was not literal
  // (--backend naming a frontend, the backend found from the device).
  std::string note;
};

// - `backend` names a loaded backend: that one.
// - It names a loaded frontend: that is the source framework (a different
//   --frontend is an error), and the backend is chosen as if none was given.
// - No backend: the one backend listing `device` (UserError "target device
//   is ambiguous" naming the candidates if several do, "target device not
//   found" if none); without a device, cpu_ref.
// - For parse (`lowers` false) `backend` must name a frontend.
TargetChoice choose_target(const PluginRegistry& registry, const TargetRequest& request);

}  // namespace eulernpu::host
