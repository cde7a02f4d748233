// One run of an artifact on the backend its manifest names, partitioned or
// not: what `eulernpu run` does between reading the inputs and writing the
// outputs, for the CLI and the Python module alike.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.hpp"
#include "formats/artifact.hpp"
#include "plugins/backend_calls.hpp"
#include "plugins/plugin_registry.hpp"

namespace eulernpu::host {

struct RunOptions {
  int threads = 0;             // 0: the backend's default
  bool estimate_only = false;  // only the backend's report, no outputs
  bool report = false;         // ask for the backend's report (some attach it anyway)
  KeyValues backend_options;   // passed as is (--backend-option)
  std::string plugin_search_path;
};

struct RunOutcome {
  const LoadedPlugin* backend = nullptr;
  std::vector<Tensor> outputs;  // the manifest's outputs in its order; none when estimating
  std::string report;           // the backend's JSON report ("" if it attached none)
};

// `inputs` are checked against the manifest already. A report asked for
// (or an estimate) that the backend does not give is "backend has no run
// report"; a report that is not a JSON object is "plugin returned invalid
// data".
RunOutcome run_model(const PluginRegistry& registry, const Artifact& artifact,
                     const nlohmann::json& manifest, const std::vector<Tensor>& inputs,
                     const RunOptions& options);

}  // namespace eulernpu::host
