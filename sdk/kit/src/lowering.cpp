#include "eulernpu/kit/lowering.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "elementwise_chain.hpp"
#include "eulernpu/kernels/int8_gemm_packed.hpp"
#include "eulernpu/kit/arena.hpp"
#include "eulernpu/kit/op_table.hpp"
#include "eulernpu/sdk/errors.hpp"
#include "weight_packing.hpp"

namespace eulernpu::kit {
namespace {

using nlohmann::ordered_json;

std::string dtypes_string(uint32_t mask) {
  std::string s;
  for (int d = 0; d < 32; ++d) {
    if (mask & (1u << d)) s += (s.empty() ? "" : ", ") + std::string(sdk::dtype_name(d));
  }
  return s;
}

std::optional<std::string> value_problem(const sdk::GraphView& g, std::string_view name) {
  const auto v = g.value(name);
  if (!v) return "tensor '" + std::string(name) + "' has no known type";
  if (!v->shape_known()) {
    return "tensor '" + std::string(name) + "' has an unknown shape";
  }
  for (int64_t d : v->dims()) {
    if (d < 0) {
      return "tensor '" + std::string(name) + "' has a dynamic dimension " +
             sdk::shape_string(v->dims()) + "; fix it with --input-shape";
    }
  }
  return std::nullopt;
}

// Key under which a node's tensor attribute is stored with the weights.
std::string attribute_key(const sdk::NodeView& node, const char* attr) {
  return std::string(node.name()) + "::" + attr;
}

ordered_json attributes_json(const sdk::NodeView& node) {
  ordered_json j = ordered_json::object();
  for (const enp_attribute_t& a : node.attributes()) {
    switch (a.type) {
      case ENP_ATTR_INT:
        j[a.name] = a.i;
        break;
      case ENP_ATTR_FLOAT:
        j[a.name] = a.f;
        break;
      case ENP_ATTR_STRING:
        j[a.name] = std::string(a.s, a.s_size);
        break;
      case ENP_ATTR_INTS:
        j[a.name] = std::vector<int64_t>(a.ints, a.ints + a.count);
        break;
      case ENP_ATTR_FLOATS:
        j[a.name] = std::vector<double>(a.floats, a.floats + a.count);
        break;
      case ENP_ATTR_STRINGS: {
        std::vector<std::string> s(a.strings, a.strings + a.count);
        j[a.name] = s;
        break;
      }
      case ENP_ATTR_TENSOR:
        // Stored with the weights; the kernel reads it via attr_tensor().
        j[a.name] = ordered_json{{"tensor", attribute_key(node, a.name)}};
        break;
      default:
        break;
    }
  }
  return j;
}

// Ops whose output shape depends on input values, not only on input
// shapes: a statically planned arena cannot hold them.
bool has_data_dependent_shape(std::string_view op_type) {
  for (const char* op : {"Compress", "NonMaxSuppression", "NonZero", "Unique"}) {
    if (op_type == op) return true;
  }
  return false;
}

// The executor may run the elementwise nodes after a Conv as its epilogue
// (execute.cpp), writing their result while the Conv still reads its
// inputs: those stay live until the last node such a chain could take, so
// that no result is placed over them. The run: each next node takes the
// previous result, its only reader (the Conv's output may have more, all
// in the run), and is one a chain takes.
void keep_conv_inputs_for_epilogues(const sdk::GraphView& graph,
                                    std::map<std::string, Lifetime>& live) {
  std::map<std::string, int> readers;
  for (size_t s = 0; s < graph.node_count(); ++s) {
    const sdk::NodeView n = graph.node(s);
    for (size_t k = 0; k < n.input_count(); ++k) {
      if (!n.input(k).empty()) ++readers[std::string(n.input(k))];
    }
  }
  for (size_t s = 0; s < graph.node_count(); ++s) {
    const sdk::NodeView conv = graph.node(s);
    if (conv.op_type() != "Conv" || !conv.domain().empty()) continue;
    size_t end = s;
    while (end + 1 < graph.node_count()) {
      const sdk::NodeView prev = graph.node(end), next = graph.node(end + 1);
      const std::string value(prev.output(0));
      // The Conv's output may have more readers than the first (Mul(x,
      // HardSigmoid(x))), as long as all of them are in the run (below).
      if (!next.domain().empty() || !elementwise::Chain::takes(next.op_type()) ||
          (end != s && readers[value] != 1)) {
        break;
      }
      bool reads = false;
      for (size_t k = 0; k < next.input_count(); ++k) reads = reads || next.input(k) == value;
      if (!reads) break;
      ++end;
    }
    if (end == s) continue;
    const std::string origin(conv.output(0));
    int in_run = 0;
    for (size_t t = s + 1; t <= end; ++t) {
      const sdk::NodeView n = graph.node(t);
      for (size_t k = 0; k < n.input_count(); ++k) in_run += n.input(k) == origin ? 1 : 0;
    }
    if (in_run != readers[origin]) continue;
    for (size_t k = 0; k < conv.input_count(); ++k) {
      auto it = live.find(std::string(conv.input(k)));
      if (it != live.end()) it->second.last = std::max(it->second.last, static_cast<int64_t>(end));
    }
  }
}

}  // namespace

std::optional<std::string> unsupported_reason(const sdk::GraphView& graph, size_t index) {
  const sdk::NodeView node = graph.node(index);
  if (!node.domain().empty() && !has_domain(node.domain())) {
    return "domain '" + std::string(node.domain()) + "' has no cpu_ref kernels";
  }
  const int64_t opset = graph.opset(node.domain());
  const OpEntry* entry = find_op(node.domain(), node.op_type(), opset);
  if (!entry && has_data_dependent_shape(node.op_type())) {
    return "has a data-dependent output shape; not supported by static compilation";
  }
  if (!entry) {
    return "cpu_ref has no kernel for " +
           (node.domain().empty() ? "" : std::string(node.domain()) + "::") +
           std::string(node.op_type()) + " at opset " + std::to_string(opset);
  }
  for (size_t i = 0; i < node.input_count() + node.output_count(); ++i) {
    const std::string_view name =
        i < node.input_count() ? node.input(i) : node.output(i - node.input_count());
    if (name.empty()) continue;
    if (auto problem = value_problem(graph, name)) return problem;
  }
  const std::string_view first = node.input_count() > 0 ? node.input(0) : node.output(0);
  if (!first.empty()) {
    const int32_t dtype = graph.value(first)->dtype();
    if (!(entry->dtypes & ENP_DTYPE_BIT(dtype))) {
      return "dtype " + std::string(sdk::dtype_name(dtype)) + " of '" + std::string(first) +
             "' is not supported (" + dtypes_string(entry->dtypes) + " only)";
    }
  }
  if (entry->check) return entry->check(node, graph);
  return std::nullopt;
}

LoweredFiles build_lowering(const sdk::GraphView& graph, const std::string& weights_file,
                            bool pack_int8_weights) {
  for (size_t i = 0; i < graph.node_count(); ++i) {
    if (auto reason = unsupported_reason(graph, i)) {
      sdk::errors::lowering_missing(graph.node(i).op_type(),
                                    "node '" + std::string(graph.node(i).name()) + "': " + *reason);
    }
  }

  std::set<std::string> initializer_names;
  for (const enp_tensor_t& t : graph.initializers()) initializer_names.insert(t.name);
  // Packed weights replace a node's inputs 1 and 2; the originals stay only
  // where something else still reads them.
  std::map<size_t, PackedWeights> packed;
  if (pack_int8_weights) {
    for (size_t i = 0; i < graph.node_count(); ++i) {
      if (auto p = pack_node_weights(graph, i)) packed.emplace(i, std::move(*p));
    }
  }
  auto node_input = [&](size_t i, size_t k) -> std::string {
    const auto it = packed.find(i);
    if (it != packed.end() && k == 1) return it->second.w.name;
    if (it != packed.end() && k == 2) return it->second.offset.name;
    return std::string(graph.node(i).input(k));
  };
  std::set<std::string> read;
  for (size_t i = 0; i < graph.node_count(); ++i) {
    for (size_t k = 0; k < graph.node(i).input_count(); ++k) read.insert(node_input(i, k));
  }
  for (const enp_tensor_t& t : graph.outputs()) read.insert(t.name);
  std::set<std::string> weight_names;
  for (const std::string& name : initializer_names) {
    if (packed.empty() || read.count(name)) weight_names.insert(name);
  }
  std::map<std::string, const sdk::OwnedTensor*> packed_tensors;
  for (const auto& [i, p] : packed) {
    packed_tensors[p.w.name] = &p.w;
    packed_tensors[p.offset.name] = &p.offset;
    weight_names.insert(p.w.name);
    weight_names.insert(p.offset.name);
  }

  ordered_json g;
  g["format"] = kGraphFormat;
  g["version"] = kFormatVersion;
  g["name"] = graph.name();
  g["opset"] = graph.opset("");
  // Other domains' versions, for the nodes that name one.
  ordered_json domain_opsets = ordered_json::object();
  for (size_t i = 0; i < graph.node_count(); ++i) {
    const std::string domain(graph.node(i).domain());
    if (!domain.empty()) domain_opsets[domain] = graph.opset(domain);
  }
  if (!domain_opsets.empty()) g["opsets"] = domain_opsets;
  g["inputs"] = ordered_json::array();
  for (const enp_tensor_t& t : graph.inputs()) {
    if (!initializer_names.count(t.name)) g["inputs"].push_back(t.name);
  }
  g["outputs"] = ordered_json::array();
  for (const enp_tensor_t& t : graph.outputs()) g["outputs"].push_back(t.name);

  // Every tensor the nodes touch, in first-use order. Kept in a map while
  // collected: an ordered_json object finds a key by a linear search, which
  // made lowering quadratic in the node count.
  std::map<std::string, ordered_json> tensors;
  std::vector<std::string> order;
  auto describe = [&](std::string_view name, const char* kind) {
    const std::string key(name);
    if (key.empty() || tensors.count(key)) return;
    const auto p = packed_tensors.find(key);
    if (p != packed_tensors.end()) {
      tensors[key] = {
          {"dtype", sdk::dtype_name(p->second->dtype)}, {"shape", p->second->dims}, {"kind", kind}};
    } else {
      const sdk::TensorView v = *graph.value(name);
      tensors[key] = {{"dtype", sdk::dtype_name(v.dtype())}, {"shape", v.shape()}, {"kind", kind}};
    }
    order.push_back(key);
  };
  for (const auto& name : g["inputs"]) describe(name.get<std::string>(), "input");
  for (const std::string& name : weight_names) describe(name, "weight");
  ordered_json nodes = ordered_json::array();
  for (size_t i = 0; i < graph.node_count(); ++i) {
    const sdk::NodeView n = graph.node(i);
    ordered_json jn{{"name", n.name()}, {"op", n.op_type()}};
    if (!n.domain().empty()) jn["domain"] = n.domain();
    jn["inputs"] = ordered_json::array();
    for (size_t k = 0; k < n.input_count(); ++k) jn["inputs"].push_back(node_input(i, k));
    jn["outputs"] = ordered_json::array();
    for (size_t k = 0; k < n.output_count(); ++k) {
      jn["outputs"].push_back(n.output(k));
      describe(n.output(k), "intermediate");
    }
    jn["attributes"] = attributes_json(n);
    if (const auto it = packed.find(i); it != packed.end()) {
      jn["attributes"][kWeightLayoutAttr] = kernels::kPanelLayout;
      jn["attributes"][kWeightShapeAttr] = it->second.w_shape;
    }
    nodes.push_back(jn);
  }
  // Outputs no node writes (a folded constant, an input passed through).
  for (const auto& name : g["outputs"]) {
    const std::string key = name.get<std::string>();
    if (!tensors.count(key)) describe(key, weight_names.count(key) ? "weight" : "input");
    if (tensors[key]["kind"] == "intermediate") tensors[key]["kind"] = "output";
  }
  // In first-use order; the names are unique, so each is appended without
  // ordered_json's search for an existing key.
  ordered_json tensor_table = ordered_json::object();
  auto& table = tensor_table.get_ref<ordered_json::object_t&>();
  table.reserve(order.size());
  for (const std::string& name : order) table.emplace_back(name, tensors.at(name));
  g["tensors"] = std::move(tensor_table);
  g["nodes"] = nodes;

  // Lifetimes over the schedule (node order); graph inputs live from step
  // -1, outputs to the end. Weights stay in the weights file, off the arena.
  std::map<std::string, Lifetime> live;
  const auto steps = static_cast<int64_t>(graph.node_count());
  for (const std::string& name : order) {
    if (weight_names.count(name)) continue;
    const auto& t = tensors[name];
    int64_t bytes = static_cast<int64_t>(sdk::dtype_size(graph.value(name)->dtype()));
    for (int64_t d : t["shape"]) bytes *= d;
    const bool is_input = t["kind"] == "input";
    live[name] = Lifetime{name, bytes, is_input ? -1 : steps, is_input ? -1 : 0, 0};
  }
  for (int64_t s = 0; s < steps; ++s) {
    const sdk::NodeView n = graph.node(static_cast<size_t>(s));
    for (size_t k = 0; k < n.output_count(); ++k) {
      auto it = live.find(std::string(n.output(k)));
      if (it != live.end()) it->second.first = std::min(it->second.first, s);
    }
    for (size_t k = 0; k < n.input_count(); ++k) {
      auto it = live.find(std::string(n.input(k)));
      if (it != live.end()) it->second.last = std::max(it->second.last, s);
    }
  }
  keep_conv_inputs_for_epilogues(graph, live);
  std::vector<Lifetime> buffers;
  for (const std::string& name : order) {
    auto it = live.find(name);
    if (it == live.end()) continue;
    bool is_output = false;
    for (const auto& o : g["outputs"]) is_output = is_output || o == name;
    if (is_output) it->second.last = steps;
    it->second.last = std::max(it->second.last, it->second.first);
    buffers.push_back(it->second);
  }
  std::stable_sort(buffers.begin(), buffers.end(),
                   [](const Lifetime& a, const Lifetime& b) { return a.first < b.first; });
  const int64_t arena = plan_arena(buffers);

  ordered_json plan;
  plan["format"] = kPlanFormat;
  plan["version"] = kFormatVersion;
  plan["schedule"] = ordered_json::array();
  for (int64_t s = 0; s < steps; ++s) plan["schedule"].push_back(s);
  plan["alignment"] = kArenaAlignment;
  plan["arena_bytes"] = arena;
  plan["buffers"] = ordered_json::array();
  for (const Lifetime& b : buffers) {
    plan["buffers"].push_back({{"tensor", b.tensor},
                               {"offset", b.offset},
                               {"bytes", b.bytes},
                               {"first_step", b.first},
                               {"last_step", b.last}});
  }
  plan["weights"] = {{"file", weights_file}, {"tensors", weight_names}};  // relative to the prefix

  std::vector<sdk::OwnedTensor> weights;
  for (const std::string& name : weight_names) {
    if (const auto p = packed_tensors.find(name); p != packed_tensors.end()) {
      weights.push_back(*p->second);
      continue;
    }
    const sdk::TensorView t = *graph.initializer(name);
    const auto* p = static_cast<const uint8_t*>(t.data());
    weights.push_back({name, t.dtype(), t.shape(), {p, p + t.size_bytes()}});
  }
  for (size_t i = 0; i < graph.node_count(); ++i) {
    const sdk::NodeView n = graph.node(i);
    for (const enp_attribute_t& a : n.attributes()) {
      if (a.type != ENP_ATTR_TENSOR || !a.t) continue;
      const sdk::TensorView t(a.t);
      const auto* p = static_cast<const uint8_t*>(t.data());
      weights.push_back({attribute_key(n, a.name), t.dtype(), t.shape(), {p, p + t.size_bytes()}});
    }
  }
  LoweredFiles files;
  files.graph_json = g.dump(2) + "\n";
  files.plan_json = plan.dump(2) + "\n";
  // The figures a user sizes a board's memory with, in the manifest: the
  // one arena every intermediate tensor lives in, and the weights.
  int64_t weight_bytes = 0;
  for (const sdk::OwnedTensor& t : weights) weight_bytes += static_cast<int64_t>(t.bytes.size());
  files.summary = ordered_json{{"ops", steps},
                               {"arena_bytes", arena},
                               {"arena_buffers", buffers.size()},
                               {"weight_bytes", weight_bytes}};
  files.weights = std::move(weights);
  return files;
}

Lowering lower_graph(const sdk::GraphView& graph, sdk::ArtifactWriter& out,
                     const std::string& prefix, const std::string& weights_file,
                     bool pack_int8_weights) {
  LoweredFiles files = build_lowering(graph, weights_file, pack_int8_weights);
  out.write_file(prefix + kGraphFile, files.graph_json);
  out.write_file(prefix + kPlanFile, files.plan_json);
  out.write_tensors(prefix + weights_file, files.weights);
  out.set_summary(files.summary.dump());
  return {parse_lowered(files.graph_json, files.plan_json, prefix), std::move(files.summary)};
}

}  // namespace eulernpu::kit
