#include "accuracy_target.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "artifact.hpp"
#include "quantize.hpp"

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
  const auto got = graph_outputs(reference, options,
                                 at_batch_one(quantized, source + " (quantized)"), samples);
  return outputs_sqnr_db(want, got);
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
    return outputs_sqnr_db(expected, runner.run(on));
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

}  // namespace eulernpu::host
