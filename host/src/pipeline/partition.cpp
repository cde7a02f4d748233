#include "pipeline/partition.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <set>

#include "core/error.hpp"
#include "eulernpu/sdk/errors.hpp"
#include "eulernpu/sdk/int8_ops.hpp"
#include "ir/finalize.hpp"
#include "ir/onnx_convert.hpp"

namespace eulernpu::host {

namespace {

// int8 value name -> its scale and zero point, from the quantized graph's
// metadata (docs/quantization.md, "The quantized graph").
std::map<std::string, std::pair<double, int32_t>> quantization_of(const onnx::ModelProto& m) {
  std::map<std::string, std::pair<double, int32_t>> out;
  for (const auto& p : m.metadata_props()) {
    if (p.key() != "eulernpu.quantization") continue;
    const auto j = nlohmann::json::parse(p.value(), nullptr, false);
    if (!j.is_object() || !j.contains("values") || !j["values"].is_array()) continue;
    for (const auto& v : j["values"]) {
      if (!v.is_object() || !v.contains("int8") || !v["int8"].is_string()) continue;
      out[v["int8"].get<std::string>()] = {v.value("scale", 1.0), v.value("zero_point", 0)};
    }
  }
  return out;
}

int64_t product(const std::vector<int64_t>& dims, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < dims.size(); ++i) p *= std::max<int64_t>(dims[i], 0);
  return p;
}

}  // namespace

nlohmann::ordered_json boundary_json(const BoundaryValue& b) {
  nlohmann::ordered_json j = {{"name", b.name}, {"dtype", dtype_name(b.dtype)}, {"shape", b.shape}};
  if (b.quantized) {
    j["scale"] = b.scale;
    j["zero_point"] = b.zero_point;
  }
  return j;
}

CpuOffload parse_cpu_offload(const std::string& text) {
  if (text == "auto") return CpuOffload::kAuto;
  if (text == "edges") return CpuOffload::kEdges;
  if (text == "none") return CpuOffload::kNone;
  throw UserError("invalid command line", "--cpu-offload '" + text + "' is not auto, edges or none",
                  "use auto (the default), edges or none");
}

int64_t count_macs(const onnx::ModelProto& model) {
  const MacSplit m = count_mac_split(model);
  return m.int8 + m.float_macs;
}

MacSplit count_mac_split(const onnx::ModelProto& model) {
  std::map<std::string, std::vector<int64_t>> dims;
  auto note = [&](const onnx::ValueInfoProto& v) { dims[v.name()] = type_of(v).shape; };
  for (const auto& v : model.graph().input()) note(v);
  for (const auto& v : model.graph().value_info()) note(v);
  for (const auto& v : model.graph().output()) note(v);
  for (const auto& t : model.graph().initializer()) {
    dims[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
  }
  auto shape = [&](const std::string& name) {
    const auto it = dims.find(name);
    return it == dims.end() ? std::vector<int64_t>{} : it->second;
  };
  MacSplit total;
  for (const auto& n : model.graph().node()) {
    const std::string& op = n.op_type();
    // ConvInteger and MatMulInteger are int8 products too (a matrix op that
    // writes float32 from its accumulators, docs/quantization.md).
    const bool integer =
        n.domain() == sdk::int8_ops::kDomain || op == "ConvInteger" || op == "MatMulInteger";
    int64_t& sum = integer ? total.int8 : total.float_macs;
    if (n.input_size() < 2 || n.output_size() < 1) continue;
    const auto w = shape(n.input(1));
    const auto y = shape(n.output(0));
    if (w.empty() || y.empty()) continue;
    if (op == "Conv" || op == "QConv" || op == "ConvInteger") {
      // Each output element: C/group · k... terms (W is (O, C/group, k...)).
      sum += product(y) * product(w, 1);
    } else if (op == "ConvTranspose" || op == "QConvTranspose") {
      // Each input element meets O/group · k... weights (W is (C, O/group, k...)).
      sum += product(shape(n.input(0))) * product(w, 1);
    } else if (op == "Gemm" || op == "QGemm" || op == "MatMul" || op == "QMatMul" ||
               op == "MatMulInteger") {
      const auto a = shape(n.input(0));
      if (a.empty()) continue;
      // K is A's last dim, or its first when Gemm transposes A.
      int64_t k = a.back();
      for (const auto& attr : n.attribute()) {
        if (attr.name() == "transA" && attr.i() != 0 && a.size() == 2) k = a[0];
      }
      sum += product(y) * k;
    }
  }
  return total;
}

PartitionPlan plan_partitions(const onnx::ModelProto& model, const LoadedPlugin& target,
                              const LoadedPlugin& reference,
                              const std::vector<enp_support_report_t::Entry>& support,
                              CpuOffload mode, const std::string& source,
                              const std::string& list_command) {
  const onnx::GraphProto& g = model.graph();
  const int n = g.node_size();
  PartitionPlan plan;
  // kind 0: the target; 1: the reference (offloaded).
  std::vector<int> kind(static_cast<size_t>(n), 0);
  if (&target != &reference) {
    for (int i = 0; i < n; ++i) {
      if (support[static_cast<size_t>(i)].supported) continue;
      kind[static_cast<size_t>(i)] = 1;
      plan.offloaded.push_back(
          {g.node(i).name(), g.node(i).op_type(), support[static_cast<size_t>(i)].reason});
    }
  }
  auto refuse = [&](const std::vector<NodeProblem>& problems, const std::string& why) {
    std::string where =
        "backend '" + target.name + "' cannot lower " + why + summarize_nodes(problems);
    if (problems.size() > 3 && !list_command.empty()) {
      where += "; '" + list_command + "' lists them all";
    }
    throw UserError(sdk::errors::lowering_missing_title(problems.front().op), where,
                    mode == CpuOffload::kNone
                        ? "run 'eulernpu capabilities --op " + problems.front().op +
                              "' to see which backends support it, or let cpu_ref run these "
                              "nodes with --cpu-offload auto"
                        : "let cpu_ref run them between the target's parts with --cpu-offload "
                          "auto, or pick another backend",
                    std::string(sdk::errors::kLoweringMissingSee));
  };
  if (mode == CpuOffload::kNone && !plan.offloaded.empty()) refuse(plan.offloaded, "");

  // Kahn's algorithm over node dependencies, continuing with the current
  // kind while it has a ready node (lowest index first: deterministic).
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const auto& o : g.node(i).output()) {
      if (!o.empty()) producer[o] = i;
    }
  }
  std::vector<std::vector<int>> readers(static_cast<size_t>(n));
  std::vector<int> waiting(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    std::set<int> deps;
    for (const auto& in : g.node(i).input()) {
      const auto it = producer.find(in);
      if (it != producer.end()) deps.insert(it->second);
    }
    waiting[static_cast<size_t>(i)] = static_cast<int>(deps.size());
    for (int d : deps) readers[static_cast<size_t>(d)].push_back(i);
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready[2];
  for (int i = 0; i < n; ++i) {
    if (waiting[static_cast<size_t>(i)] == 0) ready[kind[static_cast<size_t>(i)]].push(i);
  }
  std::vector<std::pair<int, std::vector<int>>> runs;  // (kind, nodes)
  int current = -1;
  while (!ready[0].empty() || !ready[1].empty()) {
    if (current < 0 || ready[current].empty()) {
      // Switch to the kind whose next node comes first in the graph.
      current = ready[0].empty()   ? 1
                : ready[1].empty() ? 0
                                   : (ready[0].top() < ready[1].top() ? 0 : 1);
      runs.push_back({current, {}});
    }
    const int i = ready[current].top();
    ready[current].pop();
    runs.back().second.push_back(i);
    for (int r : readers[static_cast<size_t>(i)]) {
      if (--waiting[static_cast<size_t>(r)] == 0) ready[kind[static_cast<size_t>(r)]].push(r);
    }
  }
  if (mode == CpuOffload::kEdges) {
    int first = -1, last = -1;
    for (int k = 0; k < static_cast<int>(runs.size()); ++k) {
      if (runs[static_cast<size_t>(k)].first == 0) {
        if (first < 0) first = k;
        last = k;
      }
    }
    std::vector<NodeProblem> interior;
    for (int k = first + 1; k < last; ++k) {
      for (int i : runs[static_cast<size_t>(k)].second) {
        interior.push_back(
            {g.node(i).name(), g.node(i).op_type(), support[static_cast<size_t>(i)].reason});
      }
    }
    if (!interior.empty()) {
      refuse(interior,
             "inside the graph (--cpu-offload edges runs cpu_ref only before and "
             "after it): ");
    }
  }

  // Each run as a graph of its own.
  std::map<std::string, const onnx::ValueInfoProto*> types;
  for (const auto& v : g.input()) types[v.name()] = &v;
  for (const auto& v : g.value_info()) types[v.name()] = &v;
  for (const auto& v : g.output()) types[v.name()] = &v;
  std::map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& t : g.initializer()) initializers[t.name()] = &t;
  std::set<std::string> graph_outputs;
  for (const auto& v : g.output()) graph_outputs.insert(v.name());
  std::vector<int> run_of(static_cast<size_t>(n), 0);
  for (size_t k = 0; k < runs.size(); ++k) {
    for (int i : runs[k].second) run_of[static_cast<size_t>(i)] = static_cast<int>(k);
  }
  std::map<std::string, std::set<int>> read_by_runs;  // value -> runs reading it
  for (int i = 0; i < n; ++i) {
    for (const auto& in : g.node(i).input())
      read_by_runs[in].insert(run_of[static_cast<size_t>(i)]);
  }
  const auto qparams = quantization_of(model);
  auto boundary = [&](const std::string& name) {
    BoundaryValue b;
    b.name = name;
    const auto it = types.find(name);
    if (it != types.end()) {
      const Tensor t = type_of(*it->second);
      b.dtype = t.dtype;
      b.shape = t.shape;
    }
    if (const auto q = qparams.find(name); q != qparams.end()) {
      b.quantized = true;
      b.scale = q->second.first;
      b.zero_point = q->second.second;
    }
    return b;
  };
  if (runs.empty()) {
    // Nothing left to compute (every output folded to a constant, or a
    // graph input passed through): still one partition on the target, which
    // lowers the graph as it is, so the artifact runs like any other.
    Partition p;
    p.backend = &target;
    for (const auto& v : g.input()) p.inputs.push_back(boundary(v.name()));
    for (const auto& v : g.output()) p.outputs.push_back(boundary(v.name()));
    p.model = model;
    plan.partitions.push_back(std::move(p));
    return plan;
  }
  for (size_t k = 0; k < runs.size(); ++k) {
    Partition p;
    p.offloaded = runs[k].first == 1;
    p.backend = p.offloaded ? &reference : &target;
    p.nodes = runs[k].second;
    std::sort(p.nodes.begin(), p.nodes.end());
    onnx::ModelProto sub;
    sub.set_ir_version(model.ir_version());
    sub.set_producer_name(model.producer_name());
    sub.set_producer_version(model.producer_version());
    *sub.mutable_opset_import() = model.opset_import();
    *sub.mutable_metadata_props() = model.metadata_props();
    onnx::GraphProto& sg = *sub.mutable_graph();
    sg.set_name(g.name() + ".p" + std::to_string(k));
    std::set<std::string> produced, read_seen, inits;
    std::vector<std::string> inputs;
    for (int i : p.nodes) {
      const auto& node = g.node(i);
      for (const auto& in : node.input()) {
        if (in.empty() || produced.count(in)) continue;
        if (initializers.count(in)) {
          if (inits.insert(in).second) *sg.add_initializer() = *initializers[in];
        } else if (read_seen.insert(in).second) {
          inputs.push_back(in);
        }
      }
      *sg.add_node() = node;
      for (const auto& o : node.output()) produced.insert(o);
    }
    for (const std::string& in : inputs) {
      const auto it = types.find(in);
      if (it == types.end()) {
        throw UserError("internal error", source + ": no type for '" + in + "'",
                        "report this as a bug");
      }
      *sg.add_input() = *it->second;
      p.inputs.push_back(boundary(in));
    }
    for (int i : p.nodes) {
      for (const auto& o : g.node(i).output()) {
        if (o.empty()) continue;
        bool crosses = graph_outputs.count(o) != 0;
        if (const auto it = read_by_runs.find(o); it != read_by_runs.end()) {
          for (int r : it->second) crosses |= r != static_cast<int>(k);
        }
        if (!crosses) continue;
        *sg.add_output() = *types.at(o);
        p.outputs.push_back(boundary(o));
      }
    }
    finalize_model(sub, source + " (partition " + std::to_string(k) + ")");
    p.macs = count_macs(sub);
    p.model = std::move(sub);
    plan.partitions.push_back(std::move(p));
  }
  return plan;
}

std::string describe_partitions(const PartitionPlan& plan) {
  const auto& parts = plan.partitions;
  auto nodes = [](size_t n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); };
  std::string out =
      std::to_string(parts.size()) + (parts.size() == 1 ? " partition: " : " partitions: ");
  constexpr size_t kListed = 5;
  if (parts.size() <= kListed) {
    for (size_t k = 0; k < parts.size(); ++k) {
      out += (k ? " → " : "") + parts[k].backend->name + (parts[k].offloaded ? " (host) " : " ") +
             nodes(parts[k].nodes.size());
    }
    return out;
  }
  // Many partitions: per side, how many and their nodes.
  size_t count[2] = {0, 0}, total[2] = {0, 0};
  std::string name[2];
  for (const Partition& p : parts) {
    count[p.offloaded] += 1;
    total[p.offloaded] += p.nodes.size();
    name[p.offloaded] = p.backend->name + (p.offloaded ? " (host)" : "");
  }
  for (int side = 0; side < 2; ++side) {
    if (!count[side]) continue;
    out += (side && count[0] ? ", " : "") + std::to_string(count[side]) + " on " + name[side] +
           " with " + nodes(total[side]);
  }
  return out;
}

onnx::ModelProto extract_body(const PartitionPlan& plan, const LoadedPlugin& target,
                              const std::string& source) {
  const Partition* body = nullptr;
  size_t index = 0;
  for (size_t k = 0; k < plan.partitions.size(); ++k) {
    const Partition& p = plan.partitions[k];
    if (p.offloaded || (body && body->nodes.size() >= p.nodes.size())) continue;
    body = &p;
    index = k;
  }
  if (!body) {
    throw UserError("no partition for the backend",
                    source + ": backend '" + target.name + "' lowers none of the nodes",
                    "drop --extract-npu-body, or pick a backend that supports the model's ops "
                    "('eulernpu inspect' lists them)");
  }
  onnx::ModelProto m = body->model;
  nlohmann::ordered_json j = {{"backend", target.name},
                              {"partition", index},
                              {"partitions", plan.partitions.size()},
                              {"inputs", nlohmann::ordered_json::array()},
                              {"outputs", nlohmann::ordered_json::array()}};
  for (const auto& b : body->inputs) j["inputs"].push_back(boundary_json(b));
  for (const auto& b : body->outputs) j["outputs"].push_back(boundary_json(b));
  auto* prop = m.add_metadata_props();
  prop->set_key("eulernpu.boundary");
  prop->set_value(j.dump());
  return m;
}

}  // namespace eulernpu::host
