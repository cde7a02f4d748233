// eulernpu run: execute an artifact on the backend it was lowered for.
#include <algorithm>
#include <cstdio>

#include "cli/cli.hpp"
#include "cli/model_source.hpp"
#include "core/error.hpp"
#include "eulernpu/sdk/lowbit.hpp"
#include "formats/manifest.hpp"
#include "formats/npz.hpp"
#include "formats/output_file.hpp"
#include "pipeline/partitioned_artifact.hpp"
#include "plugins/backend_calls.hpp"

namespace eulernpu::host {
namespace {

// Every input the model declares must be given with its dtype and shape.
// A low-precision input (float8, int4, ...) comes as its one-byte codes in
// numpy's int8/uint8 (docs/artifacts.md) and is relabeled here.
void check_inputs(const nlohmann::json& manifest, std::vector<Tensor>& inputs,
                  const std::string& input_path) {
  std::set<std::string> expected;
  for (const auto& decl : manifest["inputs"]) {
    const std::string name = decl.value("name", "");
    expected.insert(name);
    Tensor* found = nullptr;
    for (Tensor& t : inputs) {
      if (t.name == name) found = &t;
    }
    if (!found) {
      throw UserError("input tensor key not found",
                      "the model needs input '" + name + "'; " + input_path + " does not have it",
                      "save the input under the key '" + name + "'");
    }
    const std::string dtype = decl.value("dtype", "");
    // --- low-precision types
    const auto declared = static_cast<int32_t>(dtype_from_name(dtype));
    if (sdk::lowbit::is_lowbit(declared) &&
        static_cast<int32_t>(found->dtype) == sdk::lowbit::storage_dtype(declared)) {
      found->dtype = static_cast<DType>(declared);
    }
    // --- end of low-precision types
    if (dtype_name(found->dtype) != dtype) {
      throw UserError(
          "input tensor dtype mismatch",
          "input '" + name + "' in " + input_path + " is " + dtype_name(found->dtype) +
              "; the model needs " + dtype,
          sdk::lowbit::is_lowbit(declared)
              ? std::string("save its one-byte codes as np.") +
                    dtype_name(static_cast<DType>(sdk::lowbit::storage_dtype(declared))) +
                    " (see docs/artifacts.md)"
              : "convert it, e.g. numpy's .astype(np." + dtype + ")");
    }
    const auto shape = decl.value("shape", std::vector<int64_t>{});
    bool ok = shape.size() == found->shape.size();
    for (size_t i = 0; ok && i < shape.size(); ++i) {
      ok = shape[i] < 0 || shape[i] == found->shape[i];
    }
    if (!ok) {
      throw UserError("input tensor shape mismatch",
                      "input '" + name + "' in " + input_path + " has shape " +
                          shape_string(found->shape) + "; the model needs " + shape_string(shape),
                      "reshape the input, or recompile for this shape");
    }
  }
  for (const Tensor& t : inputs) {
    if (!expected.count(t.name)) {
      throw UserError("input tensor not in model",
                      input_path + " has '" + t.name + "', which is not an input of the model",
                      "remove it or rename it to one of the model's inputs");
    }
  }
}

}  // namespace

int cmd_run(Context& ctx, int argc, char** argv) {
  cxxopts::Options options("eulernpu run", "Run an artifact on the backend it was compiled for.");
  options.add_options()("artifact", "artifact directory or .mxq file",
                        cxxopts::value<std::string>())(
      "input", "input tensors (.npz, keyed by input name)", cxxopts::value<std::string>())(
      "out", "result .npz to write", cxxopts::value<std::string>())(
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
  if (!estimate_only) {
    for (const char* name : {"input", "out"}) require(*args, "run", name);
  }

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
  if (args->count("input")) {
    const std::string input_path = (*args)["input"].as<std::string>();
    // No input file needs more bytes than the model's inputs (8 per element,
    // the widest dtype, and room for headers): a file of compressed members
    // that would inflate beyond is refused before any is inflated.
    NpzLimits limits;
    uint64_t budget = 1 << 20;
    bool known = true;
    // Saturating: a hand-edited manifest's huge shape must not wrap the
    // budget around to a small number.
    constexpr uint64_t kSaturated = uint64_t{1} << 62;
    for (const auto& decl : manifest["inputs"]) {
      uint64_t n = 8;
      for (int64_t d : decl.value("shape", std::vector<int64_t>{})) {
        known = known && d >= 0;
        const auto dim = static_cast<uint64_t>(std::max<int64_t>(d, 1));
        n = n > kSaturated / dim ? kSaturated : n * dim;
      }
      budget = std::min(kSaturated, budget + n);
    }
    if (known) limits.max_total_bytes = std::min(limits.max_total_bytes, budget);
    inputs = read_npz(input_path, limits);
    check_inputs(manifest, inputs, input_path);
  }

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
  write_npz((*args)["out"].as<std::string>(), ordered);

  std::string shapes;
  for (const Tensor& t : ordered) shapes += (shapes.empty() ? "" : ", ") + shape_string(t.shape);
  std::printf("Run      OK: %zu output tensor%s %s\n", ordered.size(),
              ordered.size() == 1 ? "" : "s", shapes.c_str());
  return 0;
}

}  // namespace eulernpu::host
