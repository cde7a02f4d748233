// eulernpu compile: source model -> IR -> artifact lowered for a backend.
#include <cstdio>

#include "cli/cli.hpp"
#include "cli/model_source.hpp"
#include "cli/quantize_cli.hpp"
#include "core/error.hpp"
#include "formats/ir_file.hpp"
#include "formats/manifest.hpp"
#include "ir/finalize.hpp"
#include "ir/optimize.hpp"
#include "pipeline/compile_pipeline.hpp"
#include "pipeline/target_choice.hpp"
#include "plugins/backend_calls.hpp"
#include "plugins/frontend_calls.hpp"

namespace eulernpu::host {

namespace {

// A float32 compile applies the rewrites quantization starts with too, as
// ONNX Runtime does when it creates a session: a BatchNormalization after a
// Conv, a Div by a constant or a hard-swish spelled in four ops each cost a
// pass over the activations. Not raise-opset: only the int8 graph needs
// opset 13, and a model the converter cannot convert still compiles.
std::vector<ir::AppliedRewrite> optimize_float_model(Context& ctx, onnx::ModelProto& model,
                                                     const std::string& source, bool equalize) {
  ir::OptimizeOptions options;
  options.raise_opset = false;
  options.equalize = equalize;
  // Constants are folded by running them on cpu_ref; without it they stay computed.
  const LoadedPlugin* reference = ctx.registry().find("cpu_ref");
  const bool usable = reference && reference->kind == ENP_PLUGIN_BACKEND;
  return ir::optimize_for_quantization(
      model, source, usable ? constant_evaluator(*reference, {}) : ir::ConstantEvaluator{},
      options);
}

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
      "backend",
      "lowering target (default: the backend listing --target-device, else cpu_ref); a "
      "frontend's name (onnx) names the model's source framework instead",
      cxxopts::value<std::string>())(
      "target-device", "device of the backend (default: its first); alone, it picks the backend",
      cxxopts::value<std::string>())("inference-scheme",
                                     "core mode baked into the artifact (default: the device's)",
                                     cxxopts::value<std::string>())(
      "cpu-offload",
      "nodes the backend cannot lower run on cpu_ref: auto (anywhere), edges (head and tail "
      "only) or none (refuse)",
      cxxopts::value<std::string>()->default_value("auto"))(
      "extract-npu-body", "also write the largest partition on the backend as an IR file (.mblt)",
      cxxopts::value<std::string>())(
      "pl-config", "PL engine size for a backend with one (fpga_board), e.g. B1024",
      cxxopts::value<std::string>())("backend-option",
                                     "KEY=VALUE passed to the backend as is (repeatable)",
                                     cxxopts::value<std::vector<std::string>>());
  std::vector<std::string> calib_stats = take_calib_stats(argc, argv);
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  const std::string out = output_path(*args, command, true);
  if (!calib_stats.empty() && !wants_quantization(*args)) {
    throw UserError("invalid command line", "--calib-stats without --calib-data-path",
                    "give the calibration set too: the report and the manifest read it");
  }
  if (command == "quantize") require(*args, command, "calib-data-path");

  const CpuOffload offload = parse_cpu_offload((*args)["cpu-offload"].as<std::string>());
  const TargetChoice target = choose_target(
      ctx.registry(), {optional_string(*args, "backend"), optional_string(*args, "frontend"),
                       optional_string(*args, "target-device"), true});
  if (!target.note.empty()) std::printf("Target   %s\n", target.note.c_str());
  const LoadedPlugin& backend = *target.backend;
  const auto [device, core_mode] = resolve_target(backend, optional_string(*args, "target-device"),
                                                  optional_string(*args, "inference-scheme"));
  // The steps, for the progress display.
  const bool calibrating = wants_quantization(*args);
  QuantizeOptions quantize = calibrating ? quantize_options(*args) : QuantizeOptions{};
  quantize.calib_stats = std::move(calib_stats);
  check_quantize_options(quantize);
  std::vector<std::string> steps = {"load"};
  if (!args->count("no-optimize")) steps.emplace_back("optimize");
  if (calibrating) {
    steps.emplace_back("calibrate");
    if (quantize.accuracy_target) steps.emplace_back("accuracy-target");
    steps.emplace_back("report");
  }
  steps.insert(steps.end(), {"lower", "write"});
  ctx.progress.start(command, steps);

  ctx.progress.begin("load");
  LoadedModel loaded = load_model(ctx, *args, command, target.frontend);
  ImportedModel& m = loaded.imported;
  const std::string& model_path = loaded.path;
  require_weights(loaded);
  // Before any calibration: an artifact has static shapes, and a model
  // without them would fail only once the samples had all been run.
  require_static_shapes(m.model, model_path);
  ctx.progress.end();
  std::optional<QuantizeOutcome> quantized;
  if (calibrating) {
    quantized = quantize_for_compile(ctx.registry(), quantize, m.model, model_path, ctx.progress);
    std::fputs(quantized->summary.c_str(), stdout);
    m.model = std::move(quantized->model);
  } else if (!args->count("no-optimize")) {
    const auto rewrites = ctx.progress.step("optimize", [&] {
      return optimize_float_model(ctx, m.model, model_path, args->count("equalize") != 0);
    });
    if (!rewrites.empty()) std::printf("Optimize OK: %s\n", ir::rewrite_counts(rewrites).c_str());
  }
  require_static_shapes(m.model, model_path);

  CompileJob job;
  job.offload = offload;
  job.search_path = ctx.search_path_string();
  // The command that lists every node the backend refuses, for the error.
  job.list_command =
      quantized
          ? "eulernpu " + command +
                " ... --save-quantized-ir q.mblt; eulernpu inspect q.mblt --backend " + backend.name
          : "eulernpu inspect " + model_path + " --backend " + backend.name;
  job.backend = &backend;
  job.frontend = m.frontend;
  BuildRecord& record = job.record;
  record.target_device = device.name;
  record.core_mode = core_mode;
  record.model_path = model_path;
  record.weights_path = loaded.weights_path;
  for (const auto& kv : backend_options(*args)) job.extra_backend_options.push_back(kv);
  if (args->count("pl-config")) {
    job.extra_backend_options.emplace_back("pl_config", (*args)["pl-config"].as<std::string>());
  }
  if (quantized) {
    for (const auto& kv : quantized->backend_options) job.extra_backend_options.push_back(kv);
    record.calibration = quantized->calibration;
    record.config = quantized->config;
  }
  // Where (and in which form) the artifact is written is not part of what
  // it is: leave --out out, so compiling the same inputs anywhere gives the
  // same bytes; and --calib-stats, whose merge is the samples' statistics exactly.
  const std::vector<std::string> command_line = without_calib_stats(ctx.command_line);
  for (size_t i = 0; i < command_line.size(); ++i) {
    const std::string& a = command_line[i];
    if (a == "--out" || a == "--output") {
      ++i;
    } else if (a.rfind("--out=", 0) != 0 && a.rfind("--output=", 0) != 0) {
      record.command_line.push_back(a);
    }
  }
  const CompiledModel compiled = ctx.progress.step(
      "lower", [&] { return compile_model(ctx.registry(), m.model, std::move(job)); });
  const PartitionPlan& plan = compiled.plan;
  ctx.progress.step("write", [&] {
    if (auto body = optional_string(*args, "extract-npu-body"); !body.empty()) {
      write_ir_file(body, extract_body(plan, backend, model_path));
    }
    write_artifact(out, compiled.files);
  });

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
