#include "eulernpu/kit/lowered_graph.hpp"

#include <algorithm>
#include <iterator>
#include <map>

#include "eulernpu/kit/arena.hpp"
#include "eulernpu/kit/arity.hpp"
#include "eulernpu/kit/errors.hpp"

namespace eulernpu::kit {
namespace {

using nlohmann::json;

// Typed fields: nlohmann's value() throws type_error on a field of another
// type (an internal error, not a corrupt artifact) and converts a float to
// an integer silently (an offset of 1.5 would read as 1).
std::string string_field(const json& j, const char* key, const std::string& what) {
  if (!j.contains(key)) return "";
  if (!j[key].is_string()) corrupt(what + ": '" + key + "' is not a string");
  return j[key].get<std::string>();
}

int64_t int_field(const json& j, const char* key, int64_t fallback, const std::string& what) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_number_integer()) corrupt(what + ": '" + key + "' is not an integer");
  return j[key].get<int64_t>();
}

json array_field(const json& j, const char* key, const std::string& what) {
  if (!j.contains(key)) return json::array();
  if (!j[key].is_array()) corrupt(what + ": '" + key + "' is not a list");
  return j[key];
}

json parse(std::string_view text, const std::string& file) {
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) corrupt(std::string(file) + " is not a JSON object");
  return j;
}

int32_t dtype_from_name(const std::string& name) {
  const int32_t d = sdk::dtype_from_name(name);
  if (d == ENP_DTYPE_UNDEFINED) corrupt("unknown dtype '" + name + "'");
  return d;
}

// graph.json's tensor table, bounding every size.
std::map<std::string, TensorDecl> read_tensors(const json& g) {
  std::map<std::string, TensorDecl> out;
  if (!g.contains("tensors") || !g["tensors"].is_object()) corrupt("graph.json has no tensors");
  for (const auto& [name, t] : g["tensors"].items()) {
    if (!t.is_object() || !t.contains("shape") || !t["shape"].is_array() || !t.contains("dtype") ||
        !t["dtype"].is_string() || t["shape"].size() > kMaxRank) {
      corrupt("tensor '" + name + "' is malformed");
    }
    TensorDecl d;
    d.dtype = dtype_from_name(t["dtype"]);
    d.bytes = static_cast<int64_t>(sdk::dtype_size(d.dtype));
    const json& kind = t.contains("kind") ? t["kind"] : json();
    d.kind = kind.is_string() ? kind.get<std::string>() : "";
    for (const auto& dim : t["shape"]) {
      if (!dim.is_number_integer() || dim.get<int64_t>() < 0 ||
          dim.get<int64_t>() > kMaxArenaBytes) {
        corrupt("tensor '" + name + "' has a bad dimension");
      }
      d.shape.push_back(dim.get<int64_t>());
      if (d.shape.back() != 0 && d.bytes > kMaxArenaBytes / d.shape.back()) {
        corrupt("tensor '" + name + "' is too large");
      }
      d.bytes *= d.shape.back();
    }
    out[name] = d;
  }
  return out;
}

// A list of tensor names ("" allowed for omitted optionals).
std::vector<std::string> names(const json& list, const std::string& what) {
  std::vector<std::string> out;
  if (!list.is_array()) corrupt(what + " is malformed");
  for (const auto& name : list) {
    if (!name.is_string()) corrupt(what + " is malformed");
    out.push_back(name.get<std::string>());
  }
  return out;
}

std::vector<LoweredNode> read_nodes(const json& g) {
  if (!g.contains("nodes") || !g["nodes"].is_array()) corrupt("graph.json has no nodes");
  const int64_t opset = int_field(g, "opset", 0, "graph.json");
  const json empty = json::object();
  const json& opsets = g.contains("opsets") && g["opsets"].is_object() ? g["opsets"] : empty;
  std::vector<LoweredNode> out;
  for (const json& n : g["nodes"]) {
    if (!n.is_object()) corrupt("graph.json has a node that is not an object");
    LoweredNode node;
    node.name = string_field(n, "name", "a node of graph.json");
    node.op = string_field(n, "op", "node '" + node.name + "'");
    node.domain = string_field(n, "domain", "node '" + node.name + "'");
    node.opset = node.domain.empty() ? opset : int_field(opsets, node.domain.c_str(), 0, "opsets");
    const std::string what = "node '" + node.name + "'";
    node.inputs = names(array_field(n, "inputs", what), what);
    node.outputs = names(array_field(n, "outputs", what), what);
    node.attributes = n.contains("attributes") ? n["attributes"] : empty;
    if (!node.attributes.is_object()) corrupt(what + " is malformed");
    if (auto problem = arity_problem(node.domain, node.op, node.opset, node.inputs, node.outputs)) {
      corrupt(what + " (" + node.op + ") " + *problem);
    }
    out.push_back(std::move(node));
  }
  return out;
}

Plan read_plan(const json& plan, const LoweredGraph& g) {
  Plan p;
  p.arena_bytes = int_field(plan, "arena_bytes", -1, "plan.json");
  if (p.arena_bytes < 0 || p.arena_bytes > kMaxArenaBytes) corrupt("bad arena_bytes");
  if (!plan.contains("buffers") || !plan["buffers"].is_array()) corrupt("plan has no buffers");
  for (const auto& b : plan["buffers"]) {
    if (!b.is_object()) corrupt("plan has a buffer that is not an object");
    PlannedBuffer buffer{string_field(b, "tensor", "a buffer of plan.json"),
                         int_field(b, "offset", -1, "a buffer of plan.json"),
                         int_field(b, "bytes", -1, "a buffer of plan.json")};
    auto it = g.tensors.find(buffer.tensor);
    if (it == g.tensors.end() || buffer.offset < 0 || buffer.bytes != it->second.bytes ||
        buffer.offset > p.arena_bytes - it->second.bytes) {
      corrupt("buffer for '" + buffer.tensor + "' does not fit its tensor or the arena");
    }
    // The planner aligns every buffer; kernels load whole elements (and
    // vectors) from them, so an unaligned offset is not a plan it wrote.
    if (buffer.offset % kArenaAlignment != 0) {
      corrupt("buffer for '" + buffer.tensor + "' is not aligned to " +
              std::to_string(kArenaAlignment) + " bytes");
    }
    p.buffers.push_back(std::move(buffer));
  }
  // Only the type is checked here: the host checks every path a backend
  // reads ("artifact path escapes the artifact").
  const json weights = plan.contains("weights") ? plan["weights"] : json::object();
  const json file = weights.is_object() && weights.contains("file") ? weights["file"] : json();
  if (!file.is_string() || file.get<std::string>().empty()) {
    corrupt("plan.json names no weights file");
  }
  p.weights_file = file.get<std::string>();
  const json schedule = array_field(plan, "schedule", "plan.json");
  if (!schedule.is_array()) corrupt("plan.json has no schedule");
  for (const auto& step : schedule) {
    if (!step.is_number_integer() || step.get<int64_t>() < 0 ||
        step.get<size_t>() >= g.nodes.size()) {
      corrupt("schedule names a node that does not exist");
    }
    p.schedule.push_back(step.get<size_t>());
  }
  return p;
}

// The invariants the executor relies on, checked before anything runs: a
// sha256 in the manifest proves a file unchanged, not that it makes sense.
// Every operand names a declared tensor; the schedule runs every node once,
// each after the producers of its inputs; each tensor is produced once and
// has at most one buffer; and no two buffers alive at the same step share
// arena bytes.
void check_invariants(const LoweredGraph& g, const Plan& p) {
  auto declared = [&](const std::string& name, const std::string& what) {
    if (!g.tensors.count(name)) corrupt(what + " names '" + name + "', which graph.json lacks");
  };
  std::map<std::string, size_t> buffer_of;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const PlannedBuffer& b = p.buffers[i];
    if (g.tensors.at(b.tensor).kind == "weight") {
      corrupt("weight '" + b.tensor + "' has an arena buffer");
    }
    if (!buffer_of.emplace(b.tensor, i).second) corrupt("'" + b.tensor + "' has two buffers");
  }
  for (const auto& name : g.inputs) declared(name, "graph.json's inputs");
  for (const auto& name : g.outputs) declared(name, "graph.json's outputs");
  if (p.schedule.size() != g.nodes.size()) {
    corrupt("the schedule has " + std::to_string(p.schedule.size()) + " steps for " +
            std::to_string(g.nodes.size()) + " nodes");
  }
  // Step at which each value is ready: -1 for graph inputs and weights.
  std::map<std::string, int64_t> ready;
  for (const auto& [name, t] : g.tensors) {
    if (t.kind == "weight") ready[name] = -1;
  }
  for (const auto& name : g.inputs) ready[name] = -1;
  std::vector<bool> seen(g.nodes.size(), false);
  std::vector<int64_t> first(p.buffers.size(), -2), last(p.buffers.size(), -2);
  auto use = [&](const std::string& name, int64_t step) {
    const auto it = buffer_of.find(name);
    if (it == buffer_of.end()) return;
    if (first[it->second] == -2) first[it->second] = step;
    last[it->second] = std::max(last[it->second], step);
  };
  for (const auto& name : g.inputs) use(name, -1);
  const auto steps = static_cast<int64_t>(p.schedule.size());
  for (int64_t s = 0; s < steps; ++s) {
    const size_t index = p.schedule[static_cast<size_t>(s)];
    if (seen[index]) corrupt("the schedule runs node " + std::to_string(index) + " twice");
    seen[index] = true;
    const LoweredNode& n = g.nodes[index];
    const std::string what = "node '" + n.name + "'";
    for (const auto& name : n.inputs) {
      if (name.empty()) continue;
      declared(name, what);
      if (!ready.count(name)) {
        corrupt(what + " reads '" + name + "' before any step produces it");
      }
      use(name, s);
    }
    for (const auto& name : n.outputs) {
      if (name.empty()) continue;
      declared(name, what);
      if (!ready.emplace(name, s).second) corrupt("'" + name + "' is produced twice");
      use(name, s);
    }
  }
  for (const auto& name : g.outputs) {
    if (!ready.count(name)) corrupt("output '" + name + "' is never produced");
    use(name, steps);
  }
  // Sweep over the steps: buffers enter at their first step, leave after
  // their last; each entering one must not meet a live one's bytes.
  std::vector<size_t> order;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    if (first[i] != -2 && p.buffers[i].bytes > 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return first[a] < first[b]; });
  std::multimap<int64_t, size_t> live;  // by offset
  std::multimap<int64_t, size_t> ends;  // by last step, to retire them
  for (size_t i : order) {
    while (!ends.empty() && ends.begin()->first < first[i]) {
      const size_t gone = ends.begin()->second;
      ends.erase(ends.begin());
      for (auto it = live.find(p.buffers[gone].offset); it != live.end(); ++it) {
        if (it->second == gone) {
          live.erase(it);
          break;
        }
      }
    }
    const PlannedBuffer& b = p.buffers[i];
    auto next = live.lower_bound(b.offset);
    if (next != live.end() && next->first < b.offset + b.bytes) {
      corrupt("buffers of '" + b.tensor + "' and '" + p.buffers[next->second].tensor +
              "' overlap while both are live");
    }
    if (next != live.begin()) {
      const PlannedBuffer& before = p.buffers[std::prev(next)->second];
      if (before.offset + before.bytes > b.offset) {
        corrupt("buffers of '" + b.tensor + "' and '" + before.tensor +
                "' overlap while both are live");
      }
    }
    live.emplace(b.offset, i);
    ends.emplace(last[i], i);
  }
}

}  // namespace

LoweredArtifact read_lowered(sdk::ArtifactReader& artifact, const std::string& prefix) {
  return parse_lowered(artifact.read_file(prefix + kGraphFile),
                       artifact.read_file(prefix + kPlanFile), prefix);
}

LoweredArtifact parse_lowered(std::string_view graph_json, std::string_view plan_json,
                              const std::string& prefix) {
  const json g = parse(graph_json, prefix + kGraphFile);
  const json plan = parse(plan_json, prefix + kPlanFile);
  if (string_field(g, "format", "graph.json") != kGraphFormat ||
      int_field(g, "version", 0, "graph.json") != kFormatVersion ||
      string_field(plan, "format", "plan.json") != kPlanFormat ||
      int_field(plan, "version", 0, "plan.json") != kFormatVersion) {
    corrupt("graph.json or plan.json has an unknown format or version");
  }
  LoweredArtifact out;
  out.graph.name = string_field(g, "name", "graph.json");
  out.graph.tensors = read_tensors(g);
  out.graph.inputs = names(array_field(g, "inputs", "graph.json"), "graph.json's inputs");
  out.graph.outputs = names(array_field(g, "outputs", "graph.json"), "graph.json's outputs");
  out.graph.nodes = read_nodes(g);
  out.plan = read_plan(plan, out.graph);
  check_invariants(out.graph, out.plan);
  return out;
}

}  // namespace eulernpu::kit
