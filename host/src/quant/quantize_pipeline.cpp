#include "quant/quantize_pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>

#include "core/error.hpp"
#include "formats/ir_file.hpp"
#include "formats/manifest.hpp"
#include "formats/sha256.hpp"
#include "ir/optimize.hpp"
#include "pipeline/partition.hpp"
#include "quant/accuracy_target.hpp"
#include "quant/activations.hpp"
#include "quant/calib_stats.hpp"
#include "quant/quant_config.hpp"
#include "quant/quant_report.hpp"
#include "quant/quantize.hpp"
#include "quant/sensitivity.hpp"

namespace eulernpu::host {
namespace {

struct Recorded {
  std::string int8, float_name;
};

// Fills `report` from the quantized model's metadata and the calibration
// samples: every int8 value against its float32 reference.
void measure(const LoadedPlugin& reference, const KeyValues& options,
             const onnx::ModelProto& float_model, const onnx::ModelProto& quantized,
             const std::string& source, const CalibSet& calibration,
             const ActivationRecorder* float_recorder, size_t sensitivity_samples,
             QuantReport& report, const std::function<void(size_t)>& samples_done) {
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
  // The recorder calibration ran the float model with (else one of this
  // model), and one of the int8 model: both record each sample into the
  // last sample's buffers.
  std::optional<ActivationRecorder> own;
  if (!float_recorder) float_recorder = &own.emplace(reference, float_model, options);
  const ActivationRecorder ints(reference, at_batch_one(quantized, source + " (quantized)"),
                                options, true);
  // Each value's position in both recordings (the names do not change).
  auto positions = [](const std::vector<std::string>& names) {
    std::map<std::string, size_t> at;
    for (size_t i = 0; i < names.size(); ++i) at.emplace(names[i], i);
    return at;
  };
  const auto float_at = positions(float_recorder->names());
  const auto int8_at = positions(ints.names());
  std::vector<std::pair<size_t, size_t>> pairs(values.size(), {SIZE_MAX, SIZE_MAX});
  for (size_t i = 0; i < values.size(); ++i) {
    const auto fi = float_at.find(values[i].float_name);
    const auto qi = int8_at.find(values[i].int8);
    if (fi != float_at.end() && qi != int8_at.end()) pairs[i] = {fi->second, qi->second};
  }
  ActivationRecorder::Views f;
  std::vector<Tensor> q;
  size_t done = 0;
  for (const auto& sample : calibration.samples) {
    // The float32 values read in place; the int8 ones (a quarter of the
    // bytes) copied, since the two recorders' runs alternate.
    float_recorder->view(sample, f);
    q = ints.record(sample, std::move(q));
    for (size_t i = 0; i < values.size(); ++i) {
      const auto [fi, qi] = pairs[i];
      if (fi < f.values.size() && qi < q.size()) report.observe(i, f.values[fi], q[qi]);
    }
    samples_done(++done);
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

CompileConfig effective_config(const QuantizeOptions& options) {
  CompileConfig config = load_compile_config(options.config, options.preset);
  // The command line wins over the config, and the manifest records it.
  if (options.calib_samples) config.samples = *options.calib_samples;
  return config;
}

std::string config_sha256(const CompileConfig& config) {
  const std::string canonical = config.canonical_text();
  return sha256_hex(canonical.data(), canonical.size());
}

void check_quantize_options(const QuantizeOptions& options) {
  if (options.calib_samples && *options.calib_samples <= 0) {
    throw UserError("invalid command line", "--calib-samples must be 1 or more",
                    "give a positive number of samples, or leave it out for all");
  }
  if (options.sensitivity_samples && *options.sensitivity_samples < 0) {
    throw UserError("invalid command line", "--sensitivity-samples must be 0 or more",
                    "give 0 to skip the per-value sensitivity of the report");
  }
  if (options.threads < 0) {
    throw UserError("invalid command line", "--threads must be 0 or more",
                    "give 0 for the backend's default");
  }
  if (options.accuracy_target && !std::isfinite(*options.accuracy_target)) {
    throw UserError("invalid command line", "--accuracy-target must be a number of dB",
                    "e.g. --accuracy-target 30");
  }
}

namespace {

// What quantize and calibrate share: the config, the request, the rewrites.
struct Prepared {
  CompileConfig config;
  QuantizeRequest request;
  onnx::ModelProto optimized;
  std::vector<ir::AppliedRewrite> rewrites;
};

Prepared prepare(const PluginRegistry& registry, const QuantizeOptions& options,
                 const onnx::ModelProto& float_model, const std::string& source,
                 Progress& progress) {
  check_quantize_options(options);
  Prepared p{effective_config(options), {}, float_model, {}};
  CompileConfig& config = p.config;
  QuantizeRequest& request = p.request;
  request.quantizer = &find_quantizer(registry, options.quantizer.value_or(""));
  request.reference = &registry.backend("cpu_ref");
  request.calib_path = options.calib_data_path;
  request.max_samples = config.samples;
  request.quantizer_options = config.to_options();
  request.reference_options = {{"threads", std::to_string(options.threads)}};
  request.config_sha256 = config_sha256(config);
  for (const std::string& path : options.calib_stats) {
    request.stats.push_back(read_stats_file(path));
  }
  // Each pass of the calibration a sub-step of "calibrate".
  request.progress = [&progress](uint32_t pass, uint32_t passes, size_t done, size_t total) {
    if (done == 1) {
      progress.begin("calibrate", static_cast<int64_t>(total), "samples",
                     passes > 1 ? "pass " + std::to_string(pass + 1) + "/" + std::to_string(passes)
                                : std::string());
    }
    progress.advance(static_cast<int64_t>(done));
  };
  // Rewrites first (docs/optimization.md): the quantizer, the report and
  // every later step see the optimized float model.
  if (options.optimize) {
    ir::OptimizeOptions optimize;
    optimize.equalize = options.equalize;
    p.rewrites = progress.step("optimize", [&] {
      return ir::optimize_for_quantization(
          p.optimized, source, constant_evaluator(*request.reference, request.reference_options),
          optimize);
    });
  }
  return p;
}

}  // namespace

uint64_t calibrate_shard(const PluginRegistry& registry, const QuantizeOptions& options,
                         const ShardRequest& shard, const onnx::ModelProto& float_model,
                         const std::string& source, Progress& progress) {
  Prepared p = prepare(registry, options, float_model, source, progress);
  p.request.shard = QuantizeRequest::Shard{shard.k, shard.n, shard.pass};
  QuantizeResult result = quantize_model(p.optimized, source, p.request);
  progress.end();
  StatsFile stats = std::move(*result.shard_stats);
  if (shard.gather) {
    const std::vector<std::string> all = shard.gather(encode_stats(stats));
    if (all.empty()) return 0;
    stats = progress.step("merge", [&] {
      std::vector<StatsFile> shards;
      for (size_t rank = 0; rank < all.size(); ++rank) {
        shards.push_back(decode_stats(all[rank], "rank " + std::to_string(rank) + "'s statistics"));
      }
      return merge_shards(p.optimized, p.request, stats.identity, shard.pass, shards);
    });
  }
  progress.step("write", [&] { write_stats_file(shard.out, stats); });
  return stats.shard_samples;
}

QuantizeOutcome quantize_for_compile(const PluginRegistry& registry, const QuantizeOptions& options,
                                     const onnx::ModelProto& float_model, const std::string& source,
                                     Progress& progress) {
  Prepared p = prepare(registry, options, float_model, source, progress);
  CompileConfig& config = p.config;
  QuantizeRequest& request = p.request;
  onnx::ModelProto& optimized = p.optimized;
  std::vector<ir::AppliedRewrite>& rewrites = p.rewrites;
  // The sensitivity costs a float run per int8 value: measured by default
  // only when a report file is asked for.
  const int64_t sensitivity_samples =
      options.sensitivity_samples.value_or(options.report ? kSensitivitySamples : 0);
  QuantizeResult result = quantize_model(optimized, source, request);
  progress.end();

  std::optional<AccuracyOutcome> accuracy;
  if (options.accuracy_target) {
    const double target = *options.accuracy_target;
    request.progress = nullptr;
    accuracy = progress.step("accuracy-target", [&] {
      return reach_accuracy_target(target, optimized, source, request, config, result);
    });
  }

  if (options.save_quantized_ir) write_ir_file(*options.save_quantized_ir, result.model);
  QuantReport report;
  report.set_rewrites(std::move(rewrites));
  const MacSplit macs = count_mac_split(result.model);
  report.set_macs(macs.int8, macs.float_macs);
  if (accuracy) report.set_accuracy(*accuracy);
  progress.begin("report", static_cast<int64_t>(result.calibration.samples.size()), "samples");
  measure(*request.reference, request.reference_options, result.float_at_batch_one, result.model,
          source, result.calibration, result.float_recorder.get(),
          static_cast<size_t>(sensitivity_samples), report,
          [&](size_t done) { progress.advance(static_cast<int64_t>(done)); });
  progress.end();
  if (options.report) report.write_json(*options.report);

  QuantizeOutcome out;
  out.summary = report.summary(5);
  out.model = std::move(result.model);
  const std::string canonical = config.canonical_text();
  out.calibration = {{"samples", result.calibration.samples.size()},
                     {"files", result.calibration.files.size()},
                     {"sha256", result.calibration.sha256},
                     {"quantizer", plugin_record(request.quantizer->identity())}};
  out.config = {
      {"name", config.from_preset ? config.name()
                                  : std::filesystem::path(config.name()).filename().string()},
      {"kind", config.from_preset ? "preset" : "file"},
      {"settings", nlohmann::ordered_json::parse(canonical)},
      {"sha256", config_sha256(config)}};
  out.backend_options = config.backend_options();
  return out;
}

}  // namespace eulernpu::host
