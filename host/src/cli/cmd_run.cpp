// eulernpu run: execute an artifact on the backend it was lowered for.
#include <algorithm>
#include <cstdio>

#include "cli/cli.hpp"
#include "cli/model_source.hpp"
#include "cli/run_inputs.hpp"
#include "core/error.hpp"
#include "eulernpu/sdk/lowbit.hpp"
#include "formats/manifest.hpp"
#include "formats/npz.hpp"
#include "formats/output_file.hpp"
#include "pipeline/partitioned_artifact.hpp"
#include "plugins/backend_calls.hpp"

namespace eulernpu::host {
int cmd_run(Context& ctx, int argc, char** argv) {
  cxxopts::Options options("eulernpu run", "Run an artifact on the backend it was compiled for.");
  options.add_options()("artifact", "artifact directory or .mxq file",
                        cxxopts::value<std::string>())(
      "input", "input tensors (.npz, keyed by input name)", cxxopts::value<std::string>())(
      "out", "result .npz to write", cxxopts::value<std::string>())("output", "the same as --out",
                                                                    cxxopts::value<std::string>())(
      "inference-scheme", "must match the artifact's core mode if given",
      cxxopts::value<std::string>())("threads", "worker threads (0 = backend default)",
                                     cxxopts::value<int>()->default_value("0"))(
      "report", "write the backend's run report (JSON), e.g. npu_sim's cycles",
      cxxopts::value<std::string>())(
      "estimate-only", "only the backend's report (cycles, memory): no outputs computed")(
      "backend-option", "KEY=VALUE passed to the backend as is (repeatable)",
      cxxopts::value<std::vector<std::string>>());
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  const bool estimate_only = args->count("estimate-only") != 0;
  require(*args, "run", "artifact");
  if (!estimate_only) require(*args, "run", "input");
  const std::string out = output_path(*args, "run", !estimate_only);

  const Artifact artifact = Artifact::open((*args)["artifact"].as<std::string>());
  const nlohmann::json manifest = read_manifest(artifact);
  const std::string scheme = optional_string(*args, "inference-scheme");
  const std::string baked = manifest.value("core_mode", "");
  if (!scheme.empty() && scheme != baked) {
    throw UserError("inference scheme differs from the artifact",
                    "the artifact was compiled for core mode '" + baked + "', not '" + scheme + "'",
                    "recompile with 'eulernpu compile ... --inference-scheme " + scheme +
                        "'; the core mode is fixed at compile time");
  }
  if ((*args)["threads"].as<int>() < 0) {
    throw UserError("invalid command line", "--threads must be 0 or more",
                    "see 'eulernpu run --help'");
  }
  const LoadedPlugin& backend =
      ctx.registry().backend(manifest["backend"]["name"].get<std::string>());
  const bool partitioned = manifest.contains("partitions");

  std::vector<Tensor> inputs;
  if (args->count("input")) inputs = read_run_inputs(manifest, (*args)["input"].as<std::string>());

  KeyValues run_options = {{"threads", std::to_string((*args)["threads"].as<int>())},
                           {"inference_scheme", baked},
                           {"plugin_dirs", ctx.search_path_string()}};
  if (estimate_only) run_options.emplace_back("estimate_only", "1");
  // Backends whose report costs nothing attach it to every run (npu_sim);
  // others only when it is asked for.
  if (args->count("report")) run_options.emplace_back("report", "1");
  for (const auto& kv : backend_options(*args)) run_options.push_back(kv);
  std::string report;
  std::vector<Tensor> outputs;
  if (partitioned) {
    // CPU head / NPU body / CPU tail: each partition on its own backend.
    const KeyValues reference_options = {{"threads", std::to_string((*args)["threads"].as<int>())},
                                         {"plugin_dirs", ctx.search_path_string()}};
    KeyValues target_options = run_options;
    target_options.erase(std::remove_if(target_options.begin(), target_options.end(),
                                        [](const auto& kv) { return kv.first == "estimate_only"; }),
                         target_options.end());
    PartitionRun chained = run_partitions(ctx.registry(), artifact, manifest, inputs,
                                          target_options, reference_options, estimate_only);
    outputs = std::move(chained.outputs);
    if (chained.any_backend_report) report = chained.report.dump();
  } else {
    outputs = run_artifact(backend, artifact, run_options, inputs, &report);
  }
  if (estimate_only || args->count("report")) {
    if (report.empty()) {
      throw UserError("backend has no run report",
                      "backend '" + backend.name + "' reports nothing about a run" +
                          (estimate_only ? " and cannot estimate one" : ""),
                      "drop --report/--estimate-only, or use a backend that reports "
                      "(npu_sim, zynq_ps)");
    }
  }
  if (!report.empty()) {
    const auto j = nlohmann::json::parse(report, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      throw UserError("plugin returned invalid data",
                      "backend '" + backend.name + "' attached a report that is not a JSON object",
                      "report this to the plugin's author");
    }
    if (j.contains("summary") && j["summary"].is_string()) {
      std::fputs(j["summary"].get<std::string>().c_str(), stdout);
    }
    if (args->count("report")) {
      write_file_atomic((*args)["report"].as<std::string>(), report.data(), report.size(),
                        OutputKind::kJson);
    }
  }
  if (estimate_only) {
    std::printf("Estimate OK: report of backend '%s'%s\n", backend.name.c_str(),
                args->count("report") ? " written" : "");
    return 0;
  }

  // Outputs in the model's order, each exactly once, as declared.
  const std::vector<Tensor> ordered =
      take_declared_outputs(backend, manifest["outputs"], outputs, "");
  write_npz(out, ordered);

  std::string shapes;
  for (const Tensor& t : ordered) shapes += (shapes.empty() ? "" : ", ") + shape_string(t.shape);
  std::printf("Run      OK: %zu output tensor%s %s\n", ordered.size(),
              ordered.size() == 1 ? "" : "s", shapes.c_str());
  return 0;
}

}  // namespace eulernpu::host
