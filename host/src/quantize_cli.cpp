#include "quantize_cli.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "accuracy_target.hpp"
#include "activations.hpp"
#include "error.hpp"
#include "ir/optimize.hpp"
#include "ir_file.hpp"
#include "partition.hpp"
#include "progress.hpp"
#include "quant_config.hpp"
#include "quant_report.hpp"
#include "quantize.hpp"
#include "sensitivity.hpp"
#include "sha256.hpp"

namespace eulernpu::host {

// Samples the sensitivity runs use by default: enough to rank the values,
// few enough that a model with a hundred int8 values costs a few hundred runs.
constexpr int64_t kSensitivitySamples = 4;

void add_quantize_options(cxxopts::Options& options) {
  options.add_options("quantization")(
      "calib-data-path", "calibration samples: a directory of .npy/.npz files or a list file",
      cxxopts::value<std::string>())("calib-samples", "use at most N calibration samples",
                                     cxxopts::value<int64_t>())(
      "config", "quantization config file (YAML, docs/config.md)", cxxopts::value<std::string>())(
      "preset", "named quantization preset (default, fast, entropy, mse, best)",
      cxxopts::value<std::string>())("quantizer", "quantizer plugin (default: the one loaded)",
                                     cxxopts::value<std::string>())(
      "save-quantized-ir", "also write the quantized graph as an IR file (.mblt)",
      cxxopts::value<std::string>())("report", "write the per-layer accuracy report (JSON)",
                                     cxxopts::value<std::string>())(
      "threads", "worker threads for calibration runs (0 = backend default)",
      cxxopts::value<int>()->default_value("0"))(
      "sensitivity-samples",
      "samples for the report's per-value sensitivity ('alone'; default " +
          std::to_string(kSensitivitySamples) + " with --report, else 0 = skipped)",
      cxxopts::value<int64_t>())(
      "no-optimize",
      "quantize the graph as given: no rewrites before quantization (docs/optimization.md)")(
      "equalize",
      "balance the channel ranges of Conv/Gemm pairs across a Relu before quantizing "
      "(cross-layer equalization, docs/optimization.md)")(
      "accuracy-target",
      "keep the most sensitive nodes in float32 until the outputs reach this SQNR (dB) on the "
      "calibration samples",
      cxxopts::value<double>());
}

bool wants_quantization(const cxxopts::ParseResult& args) {
  return args.count("calib-data-path") != 0;
}

namespace {

std::optional<std::string> maybe(const cxxopts::ParseResult& args, const std::string& name) {
  if (!args.count(name)) return std::nullopt;
  return args[name].as<std::string>();
}

struct Recorded {
  std::string int8, float_name;
};

// Fills `report` from the quantized model's metadata and the calibration
// samples: every int8 value against its float32 reference.
void measure(const LoadedPlugin& reference, const KeyValues& options,
             const onnx::ModelProto& float_model, const onnx::ModelProto& quantized,
             const std::string& source, const CalibSet& calibration, size_t sensitivity_samples,
             QuantReport& report) {
  nlohmann::json meta;
  for (const auto& kv : quantized.metadata_props()) {
    if (kv.key() == "eulernpu.quantization")
      meta = nlohmann::json::parse(kv.value(), nullptr, false);
  }
  if (!meta.is_object() || !meta.contains("values") || !meta["values"].is_array()) {
    throw UserError("plugin returned invalid data",
                    "the quantized model has no eulernpu.quantization metadata",
                    "use a quantizer that records it (docs/quantization.md)");
  }
  std::vector<Recorded> values;
  for (const auto& v : meta["values"]) {
    QuantizedValue q;
    q.name = v.value("float", "");
    q.node = v.value("node", "");
    q.op_type = v.value("op", "");
    q.scale = v.value("scale", 1.0);
    q.zero_point = v.value("zero_point", 0);
    report.add_value(q);
    values.push_back({v.value("int8", ""), q.name});
  }
  for (const auto& f : meta.value("float_nodes", nlohmann::json::array())) {
    report.add_float32_node({f.value("node", ""), f.value("op", ""), f.value("reason", "")});
  }
  if (const auto r = meta.find("rounding"); r != meta.end() && r->is_object()) {
    std::vector<RoundedLayer> layers;
    for (const auto& l : r->value("layers", nlohmann::json::array())) {
      layers.push_back(
          {l.value("node", ""), l.value("flipped", int64_t{0}), l.value("error_vs_nearest", 1.0)});
    }
    report.set_rounding(r->value("method", "nearest"), std::move(layers));
  }
  report.set_samples(calibration.samples.size());
  const ActivationRecorder floats(reference, float_model, options);
  const ActivationRecorder ints(reference, at_batch_one(quantized, source + " (quantized)"),
                                options, true);
  for (const auto& sample : calibration.samples) {
    std::map<std::string, Tensor> by_name;
    auto f = floats.record(sample);
    for (size_t i = 0; i < f.size(); ++i) by_name.emplace(floats.names()[i], std::move(f[i]));
    std::map<std::string, Tensor> q_by_name;
    auto q = ints.record(sample);
    for (size_t i = 0; i < q.size(); ++i) q_by_name.emplace(ints.names()[i], std::move(q[i]));
    for (size_t i = 0; i < values.size(); ++i) {
      const auto fi = by_name.find(values[i].float_name);
      const auto qi = q_by_name.find(values[i].int8);
      if (fi == by_name.end() || qi == q_by_name.end()) continue;
      report.observe(i, fi->second, qi->second);
    }
  }
  // Sensitivity: each value quantized alone, on the first samples (each
  // value costs a run per sample).
  const size_t n = std::min(calibration.samples.size(), sensitivity_samples);
  if (n == 0) return;
  const std::vector<std::vector<Tensor>> sample_set(calibration.samples.begin(),
                                                    calibration.samples.begin() + n);
  std::vector<FakeQuantValue> fq;
  for (const auto& v : meta["values"]) {
    fq.push_back({v.value("float", ""), v.value("scale", 1.0), v.value("zero_point", 0)});
  }
  const auto db = value_sensitivity(reference, options, float_model, fq, source, sample_set);
  for (size_t i = 0; i < db.size(); ++i) {
    if (!std::isnan(db[i])) report.set_output_sqnr(i, db[i]);
  }
}

}  // namespace

QuantizeOutcome quantize_from_args(Context& ctx, const cxxopts::ParseResult& args,
                                   const onnx::ModelProto& float_model, const std::string& source) {
  CompileConfig config = load_compile_config(maybe(args, "config"), maybe(args, "preset"));
  if (args.count("calib-samples")) {
    // The command line wins over the config, and the manifest records it.
    config.samples = args["calib-samples"].as<int64_t>();
    if (config.samples <= 0) {
      throw UserError("invalid command line", "--calib-samples must be 1 or more",
                      "give a positive number of samples, or leave it out for all");
    }
  }
  const int64_t max_samples = config.samples;
  const int threads = args["threads"].as<int>();
  // The sensitivity costs a float run per int8 value: measured by default
  // only when a report file is asked for.
  const int64_t sensitivity_samples = args.count("sensitivity-samples")
                                          ? args["sensitivity-samples"].as<int64_t>()
                                      : args.count("report") ? kSensitivitySamples
                                                             : 0;
  if (sensitivity_samples < 0) {
    throw UserError("invalid command line", "--sensitivity-samples must be 0 or more",
                    "give 0 to skip the per-value sensitivity of the report");
  }
  if (threads < 0) {
    throw UserError("invalid command line", "--threads must be 0 or more",
                    "give 0 for the backend's default");
  }
  QuantizeRequest request;
  request.quantizer = &find_quantizer(ctx.registry(), maybe(args, "quantizer").value_or(""));
  request.reference = &ctx.registry().backend("cpu_ref");
  request.calib_path = args["calib-data-path"].as<std::string>();
  request.max_samples = max_samples;
  request.quantizer_options = config.to_options();
  request.reference_options = {{"threads", std::to_string(threads)}};
  ProgressReporter progress = ProgressReporter::for_stderr();
  uint32_t current = UINT32_MAX;
  request.progress = [&](uint32_t pass, uint32_t passes, size_t done, size_t total) {
    if (pass != current) {
      if (current != UINT32_MAX) progress.end_pass();
      current = pass;
      progress.begin_pass(static_cast<int>(pass) + 1, static_cast<int>(passes),
                          static_cast<int64_t>(total),
                          pass == 0   ? "range"
                          : pass == 1 ? "histogram"
                                      : "error");
    }
    progress.update(static_cast<int64_t>(done));
  };
  // Rewrites first (docs/optimization.md): the quantizer, the report and
  // every later step see the optimized float model.
  onnx::ModelProto optimized = float_model;
  std::vector<ir::AppliedRewrite> rewrites;
  if (!args.count("no-optimize")) {
    ir::OptimizeOptions optimize;
    optimize.equalize = args.count("equalize") != 0;
    rewrites = ir::optimize_for_quantization(
        optimized, source, constant_evaluator(*request.reference, request.reference_options),
        optimize);
  }
  QuantizeResult result = quantize_model(optimized, source, request);
  if (current != UINT32_MAX) progress.end_pass();
  progress.finish();

  std::optional<AccuracyOutcome> accuracy;
  if (args.count("accuracy-target")) {
    const double target = args["accuracy-target"].as<double>();
    if (!std::isfinite(target)) {
      throw UserError("invalid command line", "--accuracy-target must be a number of dB",
                      "e.g. --accuracy-target 30");
    }
    request.progress = nullptr;
    accuracy = reach_accuracy_target(target, optimized, source, request, config, result);
  }

  if (auto path = maybe(args, "save-quantized-ir")) write_ir_file(*path, result.model);
  QuantReport report;
  report.set_rewrites(std::move(rewrites));
  const MacSplit macs = count_mac_split(result.model);
  report.set_macs(macs.int8, macs.float_macs);
  if (accuracy) report.set_accuracy(*accuracy);
  measure(*request.reference, request.reference_options, result.float_at_batch_one, result.model,
          source, result.calibration, static_cast<size_t>(sensitivity_samples), report);
  if (auto path = maybe(args, "report")) report.write_json(*path);
  std::fputs(report.summary(5).c_str(), stdout);

  QuantizeOutcome out;
  out.model = std::move(result.model);
  const std::string canonical = config.canonical_text();
  out.calibration = {{"samples", result.calibration.samples.size()},
                     {"files", result.calibration.files.size()},
                     {"sha256", result.calibration.sha256},
                     {"quantizer",
                      {{"name", request.quantizer->name},
                       {"version", request.quantizer->version},
                       {"abi", std::to_string(request.quantizer->abi_major) + "." +
                                   std::to_string(request.quantizer->abi_minor)}}}};
  out.config = {
      {"name", config.from_preset ? config.name()
                                  : std::filesystem::path(config.name()).filename().string()},
      {"kind", config.from_preset ? "preset" : "file"},
      {"settings", nlohmann::ordered_json::parse(canonical)},
      {"sha256", sha256_hex(canonical.data(), canonical.size())}};
  out.backend_options = config.backend_options();
  return out;
}

}  // namespace eulernpu::host
