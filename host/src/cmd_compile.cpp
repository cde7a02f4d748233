// eulernpu compile: source model -> IR -> artifact lowered for a backend.
#include <cstdio>

#include "backend_calls.hpp"
#include "cli.hpp"
#include "error.hpp"
#include "eulernpu/sdk/errors.hpp"
#include "ir_file.hpp"
#include "manifest.hpp"
#include "model.hpp"
#include "model_source.hpp"
#include "node_summary.hpp"
#include "partitioned_artifact.hpp"
#include "quantize_cli.hpp"

namespace eulernpu::host {

namespace {

// compile and quantize: the same pipeline; quantize insists on calibration.
int compile_command(Context& ctx, int argc, char** argv, const std::string& command) {
  cxxopts::Options options(
      "eulernpu " + command,
      command == "quantize"
          ? "Calibrate and quantize a model to int8, then compile it for a backend."
          : "Compile a model into an artifact for a backend (int8 with --calib-data-path).");
  add_model_options(options, true);
  add_quantize_options(options);
  options.add_options()("out", "artifact to write: a directory, or one file if it ends in .mxq",
                        cxxopts::value<std::string>())("output", "the same as --out",
                                                       cxxopts::value<std::string>())(
      "backend", "lowering target", cxxopts::value<std::string>()->default_value("cpu_ref"))(
      "target-device", "device of the backend (default: its first)", cxxopts::value<std::string>())(
      "inference-scheme", "core mode baked into the artifact (default: the device's)",
      cxxopts::value<std::string>())(
      "cpu-offload",
      "nodes the backend cannot lower run on cpu_ref: auto (anywhere), edges (head and tail "
      "only) or none (refuse)",
      cxxopts::value<std::string>()->default_value("auto"))(
      "extract-npu-body", "also write the largest partition on the backend as an IR file (.mblt)",
      cxxopts::value<std::string>());
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  if (args->count("out") && args->count("output")) {
    throw UserError("invalid command line", "--out and --output name the same thing",
                    "give only one of them");
  }
  const std::string out =
      args->count("output") ? (*args)["output"].as<std::string>() : optional_string(*args, "out");
  if (!args->count("output")) require(*args, command, "out");
  if (command == "quantize") require(*args, command, "calib-data-path");

  const CpuOffload offload = parse_cpu_offload((*args)["cpu-offload"].as<std::string>());
  const LoadedPlugin& backend = ctx.registry().backend((*args)["backend"].as<std::string>());
  const auto [device, core_mode] = resolve_target(backend, optional_string(*args, "target-device"),
                                                  optional_string(*args, "inference-scheme"));
  LoadedModel loaded = load_model(ctx, *args, command);
  ImportedModel& m = loaded.imported;
  const std::string& model_path = loaded.path;
  if (!m.unbound_weights.empty()) {
    throw UserError("weights not provided",
                    "'" + model_path + "' needs weight '" + *m.unbound_weights.begin() + "'" +
                        (m.unbound_weights.size() > 1
                             ? " and " + std::to_string(m.unbound_weights.size() - 1) + " more"
                             : ""),
                    "pass the weights file with --weights");
  }
  std::optional<QuantizeOutcome> quantized;
  if (wants_quantization(*args)) {
    quantized = quantize_from_args(ctx, *args, m.model, model_path);
    m.model = std::move(quantized->model);
  }
  require_static_shapes(m.model, model_path);

  KeyValues backend_options = {{"target_device", device.name},
                               {"inference_scheme", core_mode},
                               {"plugin_dirs", ctx.search_path_string()}};
  if (quantized) {
    for (const auto& kv : quantized->backend_options) backend_options.push_back(kv);
  }
  // The command that lists every node the backend refuses, for the error.
  const std::string list_command =
      quantized
          ? "eulernpu " + command +
                " ... --save-quantized-ir q.mblt; eulernpu inspect q.mblt --backend " + backend.name
          : "eulernpu inspect " + model_path + " --backend " + backend.name;
  const LoadedPlugin& reference = ctx.registry().backend("cpu_ref");
  // Nothing to offload to: every node must lower on the backend itself.
  if (offload == CpuOffload::kNone || &backend == &reference)
    require_supported(backend, m.model, backend_options, list_command);
  const PartitionPlan plan =
      plan_partitions(m.model, backend, reference, query_support(backend, m.model, backend_options),
                      offload, model_path, list_command);
  if (!plan.single()) {
    // What the backend refuses, cpu_ref must take: a node neither lowers
    // is refused here, with the backend's reasons.
    const KeyValues reference_query = {{"plugin_dirs", ctx.search_path_string()}};
    const auto ref_support = query_support(reference, m.model, reference_query);
    std::vector<NodeProblem> neither;
    for (const Partition& p : plan.partitions) {
      if (!p.offloaded) continue;
      for (int i : p.nodes) {
        if (ref_support[static_cast<size_t>(i)].supported) continue;
        const auto& n = m.model.graph().node(i);
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
  BuildRecord record;
  FileSet files;
  if (plan.single()) {
    files = lower(backend, m.model, backend_options);
    if (files.count("manifest.json")) {
      throw UserError("plugin returned invalid data",
                      "backend '" + backend.name + "' wrote manifest.json itself",
                      "report this to the plugin's author");
    }
  } else {
    KeyValues reference_options = {{"plugin_dirs", ctx.search_path_string()}};
    files = lower_partitions(plan, backend_options, reference_options, record.partitions);
    record.offloaded_nodes = nlohmann::ordered_json::array();
    for (const NodeProblem& p : plan.offloaded) {
      record.offloaded_nodes.push_back({{"node", p.node}, {"op", p.op}, {"reason", p.reason}});
    }
  }
  if (auto body = optional_string(*args, "extract-npu-body"); !body.empty()) {
    write_ir_file(body, extract_body(plan, backend, model_path));
  }

  record.frontend = m.frontend;
  record.backend = &backend;
  record.target_device = device.name;
  record.core_mode = core_mode;
  record.model_path = model_path;
  record.weights_path = loaded.weights_path;
  if (quantized) {
    record.calibration = quantized->calibration;
    record.config = quantized->config;
  }
  // Where (and in which form) the artifact is written is not part of what
  // it is: leave --out out, so compiling the same inputs anywhere gives the same bytes.
  for (size_t i = 0; i < ctx.command_line.size(); ++i) {
    const std::string& a = ctx.command_line[i];
    if (a == "--out" || a == "--output") {
      ++i;
    } else if (a.rfind("--out=", 0) != 0 && a.rfind("--output=", 0) != 0) {
      record.command_line.push_back(a);
    }
  }
  files["manifest.json"] = make_manifest(record, m.model, files);
  write_artifact(out, files);

  const int ops = m.model.graph().node_size();
  const std::string parts = plan.single() ? "" : " · " + describe_partitions(plan);
  std::printf("%s OK: %d op%s lowered%s%s · plan written\n",
              command == "quantize" ? "Quantize" : "Compile ", ops, ops == 1 ? "" : "s",
              quantized ? " (int8)" : "", parts.c_str());
  return 0;
}

}  // namespace

int cmd_compile(Context& ctx, int argc, char** argv) {
  return compile_command(ctx, argc, argv, "compile");
}

int cmd_quantize(Context& ctx, int argc, char** argv) {
  return compile_command(ctx, argc, argv, "quantize");
}

}  // namespace eulernpu::host
