#include "pipeline/run_model.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "pipeline/partitioned_artifact.hpp"

namespace eulernpu::host {

RunOutcome run_model(const PluginRegistry& registry, const Artifact& artifact,
                     const nlohmann::json& manifest, const std::vector<Tensor>& inputs,
                     const RunOptions& options) {
  RunOutcome out;
  const LoadedPlugin& backend = registry.backend(manifest["backend"]["name"].get<std::string>());
  out.backend = &backend;
  const std::string threads = std::to_string(options.threads);
  KeyValues run_options = {{"threads", threads},
                           {"inference_scheme", manifest.value("core_mode", "")},
                           {"plugin_dirs", options.plugin_search_path}};
  if (options.estimate_only) run_options.emplace_back("estimate_only", "1");
  // Backends whose report costs nothing attach it to every run (npu_sim);
  // others only when it is asked for.
  if (options.report) run_options.emplace_back("report", "1");
  for (const auto& kv : options.backend_options) run_options.push_back(kv);
  std::vector<Tensor> outputs;
  if (manifest.contains("partitions")) {
    // CPU head / NPU body / CPU tail: each partition on its own backend.
    const KeyValues reference_options = {{"threads", threads},
                                         {"plugin_dirs", options.plugin_search_path}};
    KeyValues target_options = run_options;
    target_options.erase(std::remove_if(target_options.begin(), target_options.end(),
                                        [](const auto& kv) { return kv.first == "estimate_only"; }),
                         target_options.end());
    PartitionRun chained = run_partitions(registry, artifact, manifest, inputs, target_options,
                                          reference_options, options.estimate_only);
    outputs = std::move(chained.outputs);
    if (chained.any_backend_report) out.report = chained.report.dump();
  } else {
    outputs = run_artifact(backend, artifact, run_options, inputs, &out.report);
  }
  if ((options.estimate_only || options.report) && out.report.empty()) {
    throw UserError("backend has no run report",
                    "backend '" + backend.name + "' reports nothing about a run" +
                        (options.estimate_only ? " and cannot estimate one" : ""),
                    "drop --report/--estimate-only, or use a backend that reports "
                    "(npu_sim, zynq_ps)");
  }
  if (!out.report.empty()) {
    const auto j = nlohmann::json::parse(out.report, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      throw UserError("plugin returned invalid data",
                      "backend '" + backend.name + "' attached a report that is not a JSON object",
                      "report this to the plugin's author");
    }
  }
  if (options.estimate_only) return out;
  // Outputs in the model's order, each exactly once, as declared.
  out.outputs = take_declared_outputs(backend, manifest["outputs"], outputs, "");
  return out;
}

}  // namespace eulernpu::host
