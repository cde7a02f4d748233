#include "accuracy_target.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "artifact.hpp"
#include "quantize.hpp"
#include "sensitivity.hpp"

namespace eulernpu::host {

namespace {

// The graph outputs of each sample, in the model's output order.
std::vector<std::vector<Tensor>> outputs_of(const LoadedPlugin& reference, const KeyValues& options,
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

}  // namespace

double model_outputs_sqnr(const LoadedPlugin& reference, const KeyValues& options,
                          const onnx::ModelProto& float_at_batch_one,
                          const onnx::ModelProto& quantized, const std::string& source,
                          const std::vector<std::vector<Tensor>>& samples) {
  const auto want = outputs_of(reference, options, float_at_batch_one, samples);
  const auto got =
      outputs_of(reference, options, at_batch_one(quantized, source + " (quantized)"), samples);
  return outputs_sqnr_db(want, got);
}

std::vector<std::vector<std::string>> sensitivity_ranking(
    const LoadedPlugin& reference, const KeyValues& options, const onnx::ModelProto& float_model,
    const onnx::ModelProto& quantized, const std::string& source,
    const std::vector<std::vector<Tensor>>& samples) {
  nlohmann::json meta;
  for (const auto& kv : quantized.metadata_props()) {
    if (kv.key() == "eulernpu.quantization")
      meta = nlohmann::json::parse(kv.value(), nullptr, false);
  }
  if (!meta.is_object() || !meta.contains("values") || !meta["values"].is_array()) return {};
  std::set<std::string> nodes;
  for (const auto& n : float_model.graph().node()) nodes.insert(n.name());
  std::vector<FakeQuantValue> values;
  std::vector<std::string> producers;
  for (const auto& v : meta["values"]) {
    values.push_back({v.value("float", ""), v.value("scale", 1.0), v.value("zero_point", 0)});
    producers.push_back(v.value("node", ""));
  }
  const auto db = value_sensitivity(reference, options, float_model, values, source, samples);
  std::vector<size_t> order(values.size());
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
  std::vector<std::vector<std::string>> ranking;
  for (size_t i : order) {
    if (std::isnan(db[i])) continue;
    std::vector<std::string> group;
    if (nodes.count(producers[i])) group.push_back(producers[i]);
    for (const std::string& r : readers[values[i].name]) {
      if (std::find(group.begin(), group.end(), r) == group.end()) group.push_back(r);
    }
    if (!group.empty()) ranking.push_back(std::move(group));
  }
  return ranking;
}

}  // namespace eulernpu::host
