#include "pipeline/compile_pipeline.hpp"

#include "core/error.hpp"
#include "core/node_summary.hpp"
#include "eulernpu/sdk/errors.hpp"
#include "pipeline/partitioned_artifact.hpp"

namespace eulernpu::host {

CompiledModel compile_model(const PluginRegistry& registry, const onnx::ModelProto& model,
                            CompileJob job) {
  if (!job.backend) throw std::logic_error("compile_model: no backend");
  const LoadedPlugin& backend = *job.backend;
  job.record.backend = backend.identity();
  if (job.frontend) job.record.frontend = job.frontend->identity();
  KeyValues backend_options = {{"target_device", job.record.target_device},
                               {"inference_scheme", job.record.core_mode},
                               {"plugin_dirs", job.search_path}};
  for (const auto& kv : job.extra_backend_options) backend_options.push_back(kv);
  // Without offload nothing goes to cpu_ref: a build without it compiles.
  const LoadedPlugin& reference =
      job.offload == CpuOffload::kNone ? backend : registry.backend("cpu_ref");
  // Nothing to offload to: every node must lower on the backend itself.
  if (job.offload == CpuOffload::kNone || &backend == &reference)
    require_supported(backend, model, backend_options, job.list_command);
  CompiledModel out;
  out.plan =
      plan_partitions(model, backend, reference, query_support(backend, model, backend_options),
                      job.offload, job.record.model_path, job.list_command);
  const PartitionPlan& plan = out.plan;
  if (!plan.single()) {
    // What the backend refuses, cpu_ref must take: a node neither lowers
    // is refused here, with the backend's reasons.
    const KeyValues reference_query = {{"plugin_dirs", job.search_path}};
    const auto ref_support = query_support(reference, model, reference_query);
    std::vector<NodeProblem> neither;
    for (const Partition& p : plan.partitions) {
      if (!p.offloaded) continue;
      for (int i : p.nodes) {
        if (ref_support[static_cast<size_t>(i)].supported) continue;
        const auto& n = model.graph().node(i);
        neither.push_back({n.name(), n.op_type(), ref_support[static_cast<size_t>(i)].reason});
      }
    }
    if (!neither.empty()) {
      throw UserError(
          sdk::errors::lowering_missing_title(neither.front().op),
          "neither '" + backend.name + "' nor cpu_ref can lower " + summarize_nodes(neither),
          "run 'eulernpu capabilities --op " + neither.front().op +
              "' to see which backends support it",
          std::string(sdk::errors::kLoweringMissingSee));
    }
  }
  BuildRecord& record = job.record;
  if (plan.single()) {
    out.files = lower(backend, model, backend_options, &record.lowered);
    if (out.files.count("manifest.json")) {
      throw UserError("plugin returned invalid data",
                      "backend '" + backend.name + "' wrote manifest.json itself",
                      "report this to the plugin's author");
    }
  } else {
    const KeyValues reference_options = {{"plugin_dirs", job.search_path}};
    out.files = lower_partitions(plan, backend_options, reference_options, record.partitions);
    record.offloaded_nodes = nlohmann::ordered_json::array();
    for (const NodeProblem& p : plan.offloaded) {
      record.offloaded_nodes.push_back({{"node", p.node}, {"op", p.op}, {"reason", p.reason}});
    }
  }
  out.files["manifest.json"] = make_manifest(record, model, out.files);
  return out;
}

}  // namespace eulernpu::host
