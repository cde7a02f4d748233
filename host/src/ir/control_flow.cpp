#include "ir/control_flow.hpp"

#include <map>

#include "core/error.hpp"
#include "ir/onnx_convert.hpp"

namespace eulernpu::host::ir {

namespace {

using Names = std::map<std::string, std::string>;

void add_graph_reads(const onnx::GraphProto& g, std::set<std::string>& read) {
  for (const auto& n : g.node()) {
    read.insert(n.input().begin(), n.input().end());
    add_subgraph_reads(n, read);
  }
  for (const auto& o : g.output()) read.insert(o.name());
}

// Renames reads of branch-local values inside nested subgraphs (they refer
// to the branch's values by name too); names the nested graph defines
// itself shadow the outer ones.
void rename_nested_reads(onnx::GraphProto& g, const Names& names) {
  std::set<std::string> local;
  for (const auto& v : g.input()) local.insert(v.name());
  for (const auto& t : g.initializer()) local.insert(t.name());
  for (const auto& n : g.node()) local.insert(n.output().begin(), n.output().end());
  for (auto& n : *g.mutable_node()) {
    for (auto& in : *n.mutable_input()) {
      const auto it = names.find(in);
      if (!local.count(in) && it != names.end()) in = it->second;
    }
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) rename_nested_reads(*a.mutable_g(), names);
      for (auto& sub : *a.mutable_graphs()) rename_nested_reads(sub, names);
    }
  }
  for (auto& o : *g.mutable_output()) {
    const auto it = names.find(o.name());
    if (!local.count(o.name()) && it != names.end()) o.set_name(it->second);
  }
}

}  // namespace

void add_subgraph_reads(const onnx::NodeProto& node, std::set<std::string>& read) {
  for (const auto& a : node.attribute()) {
    if (a.has_g()) add_graph_reads(a.g(), read);
    for (const auto& g : a.graphs()) add_graph_reads(g, read);
  }
}

void drop_unread_initializers(onnx::GraphProto& g, const std::set<std::string>& read) {
  google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
  std::set<std::string> dropped;
  for (auto& t : *g.mutable_initializer()) {
    if (read.count(t.name())) {
      *kept.Add() = std::move(t);
    } else {
      dropped.insert(t.name());
    }
  }
  g.mutable_initializer()->Swap(&kept);
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> inputs;
  for (auto& v : *g.mutable_input()) {
    if (!dropped.count(v.name())) *inputs.Add() = std::move(v);
  }
  g.mutable_input()->Swap(&inputs);
}

int inline_constant_ifs(onnx::ModelProto& model, const std::string& source) {
  onnx::GraphProto& g = *model.mutable_graph();
  std::map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& t : g.initializer()) initializers[t.name()] = &t;
  std::set<std::string> used;
  for (const auto& v : g.input()) used.insert(v.name());
  for (const auto& t : g.initializer()) used.insert(t.name());
  for (const auto& n : g.node()) {
    used.insert(n.name());
    used.insert(n.output().begin(), n.output().end());
  }
  auto unique = [&](const std::string& hint) {
    std::string name = hint;
    for (int k = 2; used.count(name); ++k) name = hint + "_" + std::to_string(k);
    used.insert(name);
    return name;
  };
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  std::vector<onnx::TensorProto> added;
  int inlined = 0;
  for (const auto& n : g.node()) {
    const bool is_if = n.op_type() == "If" && (n.domain().empty() || n.domain() == "ai.onnx");
    const auto cond =
        is_if && n.input_size() == 1 ? initializers.find(n.input(0)) : initializers.end();
    if (cond == initializers.end()) {
      *nodes.Add() = n;
      continue;
    }
    const Tensor c = from_tensor_proto(*cond->second);
    if (c.dtype != DType::kBool || c.data.size() != 1) {
      throw UserError(
          "model is not valid ONNX",
          source + ": node '" + n.name() + "' (If) has a condition that is not one bool",
          "fix the exporter's output");
    }
    const char* taken = c.data[0] ? "then_branch" : "else_branch";
    const onnx::GraphProto* branch = nullptr;
    for (const auto& a : n.attribute()) {
      if (a.name() == taken && a.has_g()) branch = &a.g();
    }
    if (!branch || branch->output_size() != n.output_size()) {
      throw UserError("model is not valid ONNX",
                      source + ": node '" + n.name() + "' (If) has no " + taken + " with " +
                          std::to_string(n.output_size()) + " outputs",
                      "fix the exporter's output");
    }
    const std::string prefix = (n.name().empty() ? "if" : n.name()) + "/";
    Names names;
    for (int i = 0; i < branch->output_size(); ++i) {
      if (!n.output(i).empty()) names[branch->output(i).name()] = n.output(i);
    }
    for (const auto& t : branch->initializer()) names.emplace(t.name(), unique(prefix + t.name()));
    for (const auto& bn : branch->node()) {
      for (const auto& o : bn.output()) {
        if (!o.empty()) names.emplace(o, unique(prefix + o));
      }
    }
    auto mapped = [&](const std::string& v) {
      const auto it = names.find(v);
      return it == names.end() ? v : it->second;
    };
    for (const auto& t : branch->initializer()) {
      onnx::TensorProto copy = t;
      copy.set_name(mapped(t.name()));
      added.push_back(std::move(copy));
    }
    std::set<std::string> produced;
    for (const auto& bn : branch->node()) {
      if (bn.op_type() == "Constant" && bn.domain().empty() && bn.output_size() == 1 &&
          bn.attribute_size() == 1 && bn.attribute(0).name() == "value") {
        onnx::TensorProto t = bn.attribute(0).t();
        t.set_name(mapped(bn.output(0)));
        added.push_back(std::move(t));
        produced.insert(bn.output(0));
        continue;
      }
      onnx::NodeProto copy = bn;
      copy.set_name(unique(prefix + (bn.name().empty() ? bn.op_type() : bn.name())));
      for (auto& in : *copy.mutable_input()) {
        if (!in.empty()) in = mapped(in);
      }
      for (auto& o : *copy.mutable_output()) {
        if (!o.empty()) {
          produced.insert(o);
          o = mapped(o);
        }
      }
      for (auto& a : *copy.mutable_attribute()) {
        if (a.has_g()) rename_nested_reads(*a.mutable_g(), names);
        for (auto& sub : *a.mutable_graphs()) rename_nested_reads(sub, names);
      }
      *nodes.Add() = std::move(copy);
    }
    // An output the branch passes through from outside gets an Identity
    // writing the If's output (one of its initializers already has the
    // output's name: names[] maps branch outputs first).
    std::set<std::string> branch_inits;
    for (const auto& t : branch->initializer()) branch_inits.insert(t.name());
    for (int i = 0; i < branch->output_size(); ++i) {
      const std::string& o = branch->output(i).name();
      if (produced.count(o) || branch_inits.count(o) || n.output(i).empty()) continue;
      onnx::NodeProto id;
      id.set_op_type("Identity");
      id.set_name(unique(prefix + "output_" + std::to_string(i)));
      id.add_input(o);
      id.add_output(n.output(i));
      *nodes.Add() = std::move(id);
    }
    ++inlined;
  }
  if (inlined == 0) return 0;
  g.mutable_node()->Swap(&nodes);
  for (auto& t : added) *g.add_initializer() = std::move(t);
  return inlined;
}

}  // namespace eulernpu::host::ir
