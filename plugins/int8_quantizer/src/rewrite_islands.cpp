// Int8 islands: a region of int8-capable nodes with no matrix op that
// float32 nodes enclose on every side (re² + im² between the float Pow and
// Sqrt of an STFT magnitude). In int8 it runs no MACs — its only effect is
// the rounding of one QuantizeLinear per input and one requantization per
// node — so it stays float32. A region reaching a graph input or output is
// left to the per-op rules: there the user asked for an int8 model of it.
#include <algorithm>
#include <numeric>

#include "rewrite.hpp"
#include "tables.hpp"

namespace eulernpu::int8_quantizer {

namespace {

// Whether the per-op rules could give node `n` an int8 form at all.
bool int8_capable(const Node& n, const OwnedGraph& g, const RewriteSettings& settings) {
  if (settings.keep_fp32.count(n.name)) return false;
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  const std::string& op = n.op_type;
  if (is_matrix_op(op) || is_elementwise_op(op) || is_pooling_op(op) || op == "Softmax" ||
      is_movement_op(op)) {
    return true;
  }
  return unary_function(n, g).has_value();
}

size_t find_root(std::vector<size_t>& parent, size_t i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

}  // namespace

std::set<size_t> enclosed_islands(const OwnedGraph& g, const RewriteSettings& settings) {
  const size_t count = g.nodes.size();
  std::vector<bool> capable(count);
  std::map<std::string, size_t> producer;
  std::map<std::string, std::vector<size_t>> readers;
  for (size_t i = 0; i < count; ++i) {
    capable[i] = int8_capable(g.nodes[i], g, settings);
    for (const auto& o : g.nodes[i].outputs) producer[o] = i;
    for (const auto& in : g.nodes[i].inputs) readers[in].push_back(i);
  }
  auto activation = [&](const std::string& v) {
    if (v.empty() || g.initializer(v)) return false;
    const ValueType* t = g.type(v);
    return t && t->dtype == ENP_DTYPE_FLOAT32;
  };
  // Regions: int8-capable nodes joined by the float32 values between them.
  std::vector<size_t> parent(count);
  std::iota(parent.begin(), parent.end(), size_t{0});
  for (size_t i = 0; i < count; ++i) {
    if (!capable[i]) continue;
    for (const auto& in : g.nodes[i].inputs) {
      const auto p = producer.find(in);
      if (activation(in) && p != producer.end() && capable[p->second]) {
        parent[find_root(parent, i)] = find_root(parent, p->second);
      }
    }
  }
  std::set<std::string> outputs;
  for (const auto& [name, t] : g.outputs) outputs.insert(name);
  // A region is an island unless it has a matrix op or touches the graph's
  // inputs or outputs.
  std::map<size_t, bool> island;
  for (size_t i = 0; i < count; ++i) {
    if (!capable[i]) continue;
    const size_t r = find_root(parent, i);
    bool& ok = island.try_emplace(r, true).first->second;
    const Node& n = g.nodes[i];
    if (is_matrix_op(n.op_type)) ok = false;
    for (const auto& in : n.inputs) {
      if (activation(in) && !producer.count(in)) ok = false;  // a graph input
    }
    for (const auto& o : n.outputs) {
      if (outputs.count(o)) ok = false;
    }
  }
  std::set<size_t> out;
  for (size_t i = 0; i < count; ++i) {
    if (capable[i] && island[find_root(parent, i)]) out.insert(i);
  }
  return out;
}

std::set<std::string> float_read_values(const OwnedGraph& g, const RewriteSettings& settings) {
  std::set<std::string> out;
  if (settings.float_outputs == FloatOutputs::kNone) return out;
  std::map<std::string, std::vector<size_t>> readers;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& in : g.nodes[i].inputs) {
      if (!in.empty()) readers[in].push_back(i);
    }
  }
  std::set<std::string> outputs;
  for (const auto& [name, t] : g.outputs) outputs.insert(name);
  // Readers come after their producers: from the last node back, each
  // value's readers are decided before it.
  for (size_t i = g.nodes.size(); i-- > 0;) {
    for (const auto& v : g.nodes[i].outputs) {
      if (v.empty()) continue;
      const ValueType* t = g.type(v);
      if (!t || t->dtype != ENP_DTYPE_FLOAT32) continue;
      bool float_read =
          outputs.count(v) ? settings.float_outputs == FloatOutputs::kAll : !readers[v].empty();
      for (size_t r : readers[v]) {
        const Node& n = g.nodes[r];
        if (!int8_capable(n, g, settings)) continue;
        // A code-moving op passes the value on: float32 if all it writes is.
        bool passes = is_movement_op(n.op_type) && !n.outputs.empty();
        for (const auto& o : n.outputs) passes &= out.count(o) != 0;
        if (!passes) float_read = false;
      }
      if (float_read) out.insert(v);
    }
  }
  return out;
}

}  // namespace eulernpu::int8_quantizer
