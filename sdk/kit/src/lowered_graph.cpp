#include "eulernpu/kit/lowered_graph.hpp"

#include "eulernpu/kit/arity.hpp"
#include "eulernpu/kit/errors.hpp"

namespace eulernpu::kit {
namespace {

using nlohmann::json;

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
  const int64_t opset = g.value("opset", int64_t{0});
  const json empty = json::object();
  const json& opsets = g.contains("opsets") && g["opsets"].is_object() ? g["opsets"] : empty;
  std::vector<LoweredNode> out;
  for (const json& n : g["nodes"]) {
    if (!n.is_object()) corrupt("graph.json has a node that is not an object");
    LoweredNode node;
    node.name = n.value("name", "");
    node.op = n.value("op", "");
    node.domain = n.value("domain", "");
    node.opset = node.domain.empty() ? opset : opsets.value(node.domain, int64_t{0});
    const std::string what = "node '" + node.name + "'";
    node.inputs = names(n.value("inputs", json::array()), what);
    node.outputs = names(n.value("outputs", json::array()), what);
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
  p.arena_bytes = plan.value("arena_bytes", int64_t{-1});
  if (p.arena_bytes < 0 || p.arena_bytes > kMaxArenaBytes) corrupt("bad arena_bytes");
  if (!plan.contains("buffers") || !plan["buffers"].is_array()) corrupt("plan has no buffers");
  for (const auto& b : plan["buffers"]) {
    if (!b.is_object()) corrupt("plan has a buffer that is not an object");
    PlannedBuffer buffer{b.value("tensor", ""), b.value("offset", int64_t{-1}),
                         b.value("bytes", int64_t{-1})};
    auto it = g.tensors.find(buffer.tensor);
    if (it == g.tensors.end() || buffer.offset < 0 || buffer.bytes != it->second.bytes ||
        buffer.offset > p.arena_bytes - it->second.bytes) {
      corrupt("buffer for '" + buffer.tensor + "' does not fit its tensor or the arena");
    }
    p.buffers.push_back(std::move(buffer));
  }
  // Only the type is checked here: the host checks every path a backend
  // reads ("artifact path escapes the artifact").
  const json weights = plan.value("weights", json::object());
  const json file = weights.is_object() ? weights.value("file", json()) : json();
  if (!file.is_string() || file.get<std::string>().empty()) {
    corrupt("plan.json names no weights file");
  }
  p.weights_file = file.get<std::string>();
  const json schedule = plan.value("schedule", json::array());
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

}  // namespace

LoweredArtifact read_lowered(sdk::ArtifactReader& artifact, const std::string& prefix) {
  const json g = parse(artifact.read_file(prefix + kGraphFile), prefix + kGraphFile);
  const json plan = parse(artifact.read_file(prefix + kPlanFile), prefix + kPlanFile);
  if (g.value("format", "") != kGraphFormat || g.value("version", 0) != kFormatVersion ||
      plan.value("format", "") != kPlanFormat || plan.value("version", 0) != kFormatVersion) {
    corrupt("graph.json or plan.json has an unknown format or version");
  }
  LoweredArtifact out;
  out.graph.name = g.value("name", "");
  out.graph.tensors = read_tensors(g);
  out.graph.inputs = names(g.value("inputs", json::array()), "graph.json's inputs");
  out.graph.outputs = names(g.value("outputs", json::array()), "graph.json's outputs");
  out.graph.nodes = read_nodes(g);
  out.plan = read_plan(plan, out.graph);
  return out;
}

}  // namespace eulernpu::kit
