#include "ir/shape_inference.hpp"

#include <map>
#include <set>

#include "core/error.hpp"
#include "ir/control_flow.hpp"
#include "ir/onnx_convert.hpp"
#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

ValueType from_value_info(const onnx::ValueInfoProto& v) {
  ValueType t;
  const auto& tt = v.type().tensor_type();
  t.dtype = static_cast<DType>(tt.elem_type());
  t.known = tt.has_shape();
  for (const auto& d : tt.shape().dim()) t.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return t;
}

void write_value_info(onnx::ValueInfoProto& v, const std::string& name, const ValueType& t) {
  v.set_name(name);
  auto* tt = v.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(t.dtype));
  // A graph output's declared dimension names ("batch") stay where the
  // dimension is still dynamic: they are how users read the shape.
  std::vector<std::string> names;
  for (const auto& d : tt->shape().dim()) names.push_back(d.dim_param());
  tt->clear_shape();
  if (!t.known) return;
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < t.dims.size(); ++i) {
    auto* dim = shape->add_dim();
    if (t.dims[i] >= 0) {
      dim->set_dim_value(t.dims[i]);
    } else if (names.size() == t.dims.size() && !names[i].empty()) {
      dim->set_dim_param(names[i]);
    }
  }
}

std::string dims_string(const ValueType& t) { return t.known ? shape_string(t.dims) : "(unknown)"; }

// Merges an inferred type with one the model declares: both must agree
// where both know. The result knows what either knows.
ValueType merge(const ValueType& inferred, const ValueType& declared, const std::string& name,
                const onnx::NodeProto& node) {
  auto mismatch = [&] {
    return UserError("operator shape mismatch",
                     "node '" + node.name() + "' (" + node.op_type() + ") produces '" + name +
                         "' as " + dtype_name(inferred.dtype) + " " + dims_string(inferred) +
                         ", but the model declares " + dtype_name(declared.dtype) + " " +
                         dims_string(declared),
                     "correct the declared type or the node's inputs");
  };
  ValueType out = inferred;
  if (declared.dtype != DType::kUndefined) {
    if (inferred.dtype != DType::kUndefined && inferred.dtype != declared.dtype) throw mismatch();
    out.dtype = declared.dtype;
  }
  if (!declared.known) return out;
  if (!inferred.known) return declared;
  if (declared.dims.size() != inferred.dims.size()) throw mismatch();
  for (size_t i = 0; i < out.dims.size(); ++i) {
    if (declared.dims[i] >= 0 && inferred.dims[i] >= 0 && declared.dims[i] != inferred.dims[i]) {
      throw mismatch();
    }
    if (out.dims[i] < 0) out.dims[i] = declared.dims[i];
  }
  return out;
}

bool default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

}  // namespace

InferStats infer_shapes(onnx::ModelProto& model, const std::string& source) {
  (void)source;
  InferStats stats;
  onnx::GraphProto& g = *model.mutable_graph();
  // Each node's rule sees the opset of its own domain.
  std::map<std::string, int64_t, std::less<>> opsets;
  for (const auto& o : model.opset_import()) {
    opsets[default_domain(o.domain()) ? "" : o.domain()] = o.version();
  }

  std::map<std::string, ValueType> types;
  std::map<std::string, Tensor> constants;
  std::map<std::string, ValueType> declared;
  for (const auto& v : g.value_info()) declared[v.name()] = from_value_info(v);
  for (const auto& v : g.output()) declared[v.name()] = from_value_info(v);
  for (const auto& v : g.input()) types[v.name()] = from_value_info(v);
  for (const auto& t : g.initializer()) {
    Tensor tensor = from_tensor_proto(t);
    types[t.name()] = type_of_tensor(tensor);
    constants.emplace(t.name(), std::move(tensor));
  }

  std::vector<bool> folded(static_cast<size_t>(g.node_size()), false);
  std::set<std::string> folded_names;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& node = g.node(i);
    const OpRule* rule = find_rule(node.domain(), node.op_type());
    if (!rule) {
      ++stats.unknown_ops;
      for (const auto& o : node.output()) {
        auto it = declared.find(o);
        types[o] = it == declared.end() ? ValueType{} : it->second;
      }
      continue;
    }
    std::vector<const ValueType*> in_types;
    std::vector<const Tensor*> in_constants;
    bool all_constant = true;
    for (const auto& name : node.input()) {
      if (name.empty()) {
        in_types.push_back(nullptr);
        in_constants.push_back(nullptr);
        continue;
      }
      auto t = types.find(name);
      if (t == types.end()) {
        throw UserError(
            "graph references an unknown tensor",
            source + ": node '" + node.name() + "' reads '" + name + "', which nothing defines",
            "fix the name or add the tensor");
      }
      in_types.push_back(&t->second);
      auto c = constants.find(name);
      in_constants.push_back(c == constants.end() ? nullptr : &c->second);
      all_constant = all_constant && c != constants.end();
    }
    const auto domain_opset = opsets.find(default_domain(node.domain()) ? "" : node.domain());
    const int64_t opset = domain_opset == opsets.end() ? 0 : domain_opset->second;
    InferContext ctx(node, opset, in_types, in_constants);
    rule->infer(ctx);

    // Fold when every input is constant, or for ops that read only shapes
    // (Shape, Size) when their input's shape is static.
    const bool shape_only = node.op_type() == "Shape" || node.op_type() == "Size";
    const bool foldable = rule->fold && (all_constant || (shape_only && !in_types.empty() &&
                                                          in_types[0] && in_types[0]->is_static()));
    if (foldable) {
      bool small = true;
      for (const ValueType& t : ctx.outputs()) {
        small = small && t.is_static() && t.element_count() <= kMaxFoldedElements;
      }
      if (small) {
        if (auto results = rule->fold(ctx)) {
          for (size_t k = 0; k < results->size() && k < ctx.output_count(); ++k) {
            Tensor& r = (*results)[k];
            r.name = node.output(static_cast<int>(k));
            types[r.name] = type_of_tensor(r);
            folded_names.insert(r.name);
            constants.insert_or_assign(r.name, std::move(r));
          }
          folded[static_cast<size_t>(i)] = true;
          ++stats.folded_nodes;
          continue;
        }
      }
    }
    for (size_t k = 0; k < ctx.output_count(); ++k) {
      const std::string& name = node.output(static_cast<int>(k));
      if (name.empty()) continue;
      auto d = declared.find(name);
      types[name] =
          d == declared.end() ? ctx.outputs()[k] : merge(ctx.outputs()[k], d->second, name, node);
    }
  }

  // Rebuild: folded nodes become initializers (only those still read by a
  // node or exposed as an output), every other value gets its type.
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  std::set<std::string> read;
  for (int i = 0; i < g.node_size(); ++i) {
    if (folded[static_cast<size_t>(i)]) continue;
    for (const auto& in : g.node(i).input()) read.insert(in);
    add_subgraph_reads(g.node(i), read);
    *kept.Add() = g.node(i);
  }
  for (const auto& o : g.output()) read.insert(o.name());
  g.mutable_node()->Swap(&kept);
  for (const std::string& name : folded_names) {
    if (!read.count(name)) continue;
    const std::vector<Tensor> one{constants.at(name)};
    const std::vector<enp_tensor_t> view = tensor_views(one);
    *g.add_initializer() = to_tensor_proto(view[0]);
  }
  // Initializers nothing reads any more (the inputs of folded shape
  // arithmetic) are dropped.
  drop_unread_initializers(g, read);
  std::set<std::string> graph_io;
  for (const auto& v : g.input()) graph_io.insert(v.name());
  for (const auto& t : g.initializer()) graph_io.insert(t.name());
  for (auto& v : *g.mutable_output()) {
    auto t = types.find(v.name());
    if (t != types.end()) write_value_info(v, v.name(), t->second);
    graph_io.insert(v.name());
  }
  g.clear_value_info();
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) {
      if (o.empty() || graph_io.count(o)) continue;
      auto t = types.find(o);
      if (t != types.end() && t->second.dtype != DType::kUndefined) {
        write_value_info(*g.add_value_info(), o, t->second);
      }
    }
  }
  return stats;
}

}  // namespace eulernpu::host::ir
