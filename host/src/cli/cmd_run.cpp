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
#include "pipeline/run_model.hpp"
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
  // A backend that is not loaded is said before anything about the inputs.
  ctx.registry().backend(manifest["backend"]["name"].get<std::string>());
  std::vector<Tensor> inputs;
  if (args->count("input")) inputs = read_run_inputs(manifest, (*args)["input"].as<std::string>());
  RunOptions run;
  run.threads = (*args)["threads"].as<int>();
  run.estimate_only = estimate_only;
  run.report = args->count("report") != 0;
  run.backend_options = backend_options(*args);
  run.plugin_search_path = ctx.search_path_string();
  const RunOutcome outcome = run_model(ctx.registry(), artifact, manifest, inputs, run);
  if (!outcome.report.empty()) {
    const auto j = nlohmann::json::parse(outcome.report);  // an object: run_model checked
    if (j.contains("summary") && j["summary"].is_string()) {
      std::fputs(j["summary"].get<std::string>().c_str(), stdout);
    }
    if (run.report) {
      write_file_atomic((*args)["report"].as<std::string>(), outcome.report.data(),
                        outcome.report.size(), OutputKind::kJson);
    }
  }
  if (estimate_only) {
    std::printf("Estimate OK: report of backend '%s'%s\n", outcome.backend->name.c_str(),
                run.report ? " written" : "");
    return 0;
  }
  const std::vector<Tensor>& ordered = outcome.outputs;
  write_npz(out, ordered);

  std::string shapes;
  for (const Tensor& t : ordered) shapes += (shapes.empty() ? "" : ", ") + shape_string(t.shape);
  std::printf("Run      OK: %zu output tensor%s %s\n", ordered.size(),
              ordered.size() == 1 ? "" : "s", shapes.c_str());
  return 0;
}

}  // namespace eulernpu::host
