#include "quant/accuracy_target.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "formats/artifact.hpp"
#include "quant/quantize.hpp"

namespace eulernpu::host {

std::vector<std::vector<Tensor>> graph_outputs(const LoadedPlugin& reference,
                                               const KeyValues& options,
                                               const onnx::ModelProto& model,
                                               const std::vector<std::vector<Tensor>>& samples) {
  const Artifact artifact = Artifact::from_files(lower(reference, model, options));
  std::vector<std::vector<Tensor>> out;
  for (const auto& sample : samples) {
    std::vector<Tensor> got = run_artifact(reference, artifact, options, sample);
    std::vector<Tensor> ordered;
    for (const auto& o : model.graph().output()) {
      for (Tensor& t : got) {
        if (t.name == o.name()) ordered.push_back(std::move(t));
      }
    }
    out.push_back(std::move(ordered));
  }
  return out;
}

double quantized_outputs_sqnr(const LoadedPlugin& reference, const KeyValues& options,
                              const std::vector<std::vector<Tensor>>& want,
                              const onnx::ModelProto& quantized, const std::string& source,
                              const std::vector<std::vector<Tensor>>& samples) {
  const auto got =
      graph_outputs(reference, options, at_batch_one(quantized, source + " (quantized)"), samples);
  return worst_output_sqnr_db(want, got);
}

Ranking sensitivity_ranking(const LoadedPlugin& reference, const KeyValues& options,
                            const onnx::ModelProto& float_model, const onnx::ModelProto& quantized,
                            const std::string& source,
                            const std::vector<std::vector<Tensor>>& samples) {
  Ranking out;
  nlohmann::json meta;
  for (const auto& kv : quantized.metadata_props()) {
    if (kv.key() == "eulernpu.quantization")
      meta = nlohmann::json::parse(kv.value(), nullptr, false);
  }
  if (!meta.is_object() || !meta.contains("values") || !meta["values"].is_array()) return out;
  std::set<std::string> nodes;
  for (const auto& n : float_model.graph().node()) nodes.insert(n.name());
  std::vector<std::string> producers;
  for (const auto& v : meta["values"]) {
    out.values.push_back({v.value("float", ""), v.value("scale", 1.0), v.value("zero_point", 0)});
    producers.push_back(v.value("node", ""));
  }
  const auto db = value_sensitivity(reference, options, float_model, out.values, source, samples);
  std::vector<size_t> order(out.values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Worst (lowest dB) first; unmeasured last; ties by node name, so the
  // order never depends on the metadata's.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const double da = std::isnan(db[a]) ? INFINITY : db[a];
    const double dbb = std::isnan(db[b]) ? INFINITY : db[b];
    if (da != dbb) return da < dbb;
    return producers[a] < producers[b];
  });
  std::map<std::string, std::vector<std::string>> readers;
  for (const auto& n : float_model.graph().node()) {
    for (const auto& in : n.input()) readers[in].push_back(n.name());
  }
  for (size_t i : order) {
    if (std::isnan(db[i])) continue;
    RankedValue r{i, {}};
    if (nodes.count(producers[i])) r.nodes.push_back(producers[i]);
    for (const std::string& reader : readers[out.values[i].name]) {
      if (std::find(r.nodes.begin(), r.nodes.end(), reader) == r.nodes.end()) {
        r.nodes.push_back(reader);
      }
    }
    if (!r.nodes.empty()) out.ranked.push_back(std::move(r));
  }
  return out;
}

size_t fake_quant_keep_count(const LoadedPlugin& reference, const KeyValues& options,
                             const onnx::ModelProto& float_model, const Ranking& ranking,
                             const std::string& source,
                             const std::vector<std::vector<Tensor>>& samples, double target_db,
                             double quantized_db) {
  if (ranking.ranked.empty() || samples.empty()) return 0;
  const FakeQuantRunner runner(reference, options, float_model, ranking.values, source, samples);
  const auto expected = runner.run({});
  auto sqnr_keeping = [&](size_t k) {
    std::vector<bool> on(ranking.values.size(), false);
    for (const RankedValue& r : ranking.ranked) on[r.value] = true;
    for (size_t i = 0; i < k; ++i) on[ranking.ranked[i].value] = false;
    return worst_output_sqnr_db(expected, runner.run(on));
  };
  double offset = sqnr_keeping(0) - quantized_db;
  if (!std::isfinite(offset)) offset = 0;
  // Keeping every ranked value leaves the unranked ones: it may still miss.
  size_t lo = 0, hi = ranking.ranked.size();
  while (lo + 1 < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (sqnr_keeping(mid) - offset >= target_db) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}

AccuracyOutcome reach_accuracy_target(double target_db, const onnx::ModelProto& optimized,
                                      const std::string& source, QuantizeRequest& request,
                                      CompileConfig& config, QuantizeResult& result) {
  const LoadedPlugin& reference = *request.reference;
  const KeyValues& options = request.reference_options;
  AccuracyOutcome a;
  a.target_db = target_db;
  const auto& all = result.calibration.samples;
  const std::vector<std::vector<Tensor>> measured(
      all.begin(), all.begin() + static_cast<long>(std::min(all.size(), kAccuracySamples)));
  a.samples = measured.size();
  // The float outputs do not change across rounds: run once.
  const auto want = graph_outputs(reference, options, result.float_at_batch_one, measured);
  auto requantize = [&] {
    request.quantizer_options = config.to_options();
    // The last round's recording session (an arena of every float32 value)
    // is gone before the next one is made; a kept Best holds its own.
    result.float_recorder.reset();
    result = quantize_model(optimized, source, request);
  };
  auto measure_round = [&](size_t kept) {
    const double db =
        quantized_outputs_sqnr(reference, options, want, result.model, source, measured);
    a.rounds.push_back({kept, config.float_outputs, db});
    a.sqnr_db = db;
    a.float_outputs = config.float_outputs;
    return db >= target_db;
  };
  if (measure_round(0)) {
    a.met = true;
    return a;
  }
  if (config.float_outputs != "all") {
    // First what costs no MACs: matrix ops at float32 boundaries and graph
    // outputs write float32 from their accumulators, without the rounding
    // of an int8 output (docs/config.md, float_outputs).
    config.float_outputs = "all";
    requantize();
    if (measure_round(0)) {
      a.met = true;
      return a;
    }
  }
  const std::vector<std::vector<Tensor>> few(
      measured.begin(),
      measured.begin() + static_cast<long>(std::min(measured.size(), kRankingSamples)));
  const Ranking ranking =
      sensitivity_ranking(reference, options, result.float_at_batch_one, result.model, source, few);
  const size_t groups = ranking.ranked.size();
  if (groups == 0) return a;
  const auto base_layers = config.layers;
  // The first k ranked values' nodes in float32, on top of the config's.
  auto keep = [&](size_t k) {
    config.layers = base_layers;
    std::vector<std::string> kept;
    for (size_t i = 0; i < k; ++i) {
      for (const std::string& node : ranking.ranked[i].nodes) {
        LayerOverride& o = config.layers[node];
        if (o.keep_fp32) continue;
        o.keep_fp32 = true;
        o.per_tensor = false;
        kept.push_back(node);
      }
    }
    return kept;
  };
  // A first guess from fake quantization (one float run per probe) saves
  // the rounds that would quantize their way up to it.
  size_t k =
      std::clamp<size_t>(fake_quant_keep_count(reference, options, result.float_at_batch_one,
                                               ranking, source, measured, target_db, a.sqnr_db),
                         1, groups);
  size_t lo = 0;             // known to miss
  std::optional<size_t> hi;  // known to meet
  struct Best {
    QuantizeResult result;
    std::map<std::string, LayerOverride> layers;
    std::vector<std::string> kept;
    double sqnr_db;
  };
  std::optional<Best> best;
  for (int round = 0; round < kMaxAccuracyRounds; ++round) {
    a.kept = keep(k);
    requantize();
    if (measure_round(a.kept.size())) {
      hi = k;
      best = Best{result, config.layers, a.kept, a.sqnr_db};
    } else {
      lo = k;
    }
    if (hi) {
      if (*hi - lo <= 1) break;
      k = lo + (*hi - lo) / 2;  // fewer nodes may do: bisect
    } else {
      if (k == groups) break;  // every ranked value is float32 already
      k = std::min(groups, std::max(k + 1, 2 * k));
    }
  }
  if (best) {
    a.met = true;
    a.sqnr_db = best->sqnr_db;
    a.kept = std::move(best->kept);
    config.layers = std::move(best->layers);
    result = std::move(best->result);
  }
  return a;
}

}  // namespace eulernpu::host
