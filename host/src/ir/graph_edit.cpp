#include "ir/graph_edit.hpp"

#include <cstring>

#include "ir/control_flow.hpp"
#include "ir/onnx_convert.hpp"

namespace eulernpu::host::ir {

GraphEdit::GraphEdit(onnx::ModelProto& model) : model_(model) {
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
  }
  const onnx::GraphProto& g = model.graph();
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    names_.insert(n.name());
    for (const auto& o : n.output()) {
      if (!o.empty()) producer_[o] = i;
      names_.insert(o);
    }
    for (const auto& in : n.input()) {
      if (in.empty()) continue;
      auto& readers = consumers_[in];
      if (readers.empty() || readers.back() != i) readers.push_back(i);
    }
  }
  for (int i = 0; i < g.initializer_size(); ++i) {
    initializers_[g.initializer(i).name()] = i;
    names_.insert(g.initializer(i).name());
  }
  for (int i = 0; i < g.value_info_size(); ++i) value_info_[g.value_info(i).name()] = i;
  for (const auto& v : g.input()) names_.insert(v.name());
  for (const auto& v : g.output()) outputs_.insert(v.name());
}

int GraphEdit::producer(const std::string& value) const {
  const auto it = producer_.find(value);
  return it == producer_.end() ? -1 : it->second;
}

const std::vector<int>& GraphEdit::consumers(const std::string& value) const {
  static const std::vector<int> kNone;
  const auto it = consumers_.find(value);
  return it == consumers_.end() ? kNone : it->second;
}

bool GraphEdit::only_read_by(const std::string& value, int node) const {
  const auto& readers = consumers(value);
  return readers.size() == 1 && readers[0] == node && !is_graph_output(value);
}

const onnx::TensorProto* GraphEdit::initializer(const std::string& name) const {
  const auto it = initializers_.find(name);
  return it == initializers_.end() ? nullptr : &model_.graph().initializer(it->second);
}

std::optional<std::vector<float>> GraphEdit::floats(const std::string& name) const {
  const onnx::TensorProto* t = initializer(name);
  if (!t || t->data_type() != onnx::TensorProto::FLOAT) return std::nullopt;
  const Tensor v = from_tensor_proto(*t);
  std::vector<float> out(v.data.size() / sizeof(float));
  if (!out.empty()) std::memcpy(out.data(), v.data.data(), out.size() * sizeof(float));
  return out;
}

std::optional<float> GraphEdit::scalar(const std::string& name) const {
  const auto v = floats(name);
  if (!v || v->empty()) return std::nullopt;
  for (float x : *v) {
    if (std::memcmp(&x, &v->front(), sizeof(float)) != 0) return std::nullopt;
  }
  return v->front();
}

std::optional<std::pair<int32_t, std::vector<int64_t>>> GraphEdit::type(
    const std::string& value) const {
  const onnx::ValueInfoProto* info = nullptr;
  if (const auto it = value_info_.find(value); it != value_info_.end()) {
    info = &model_.graph().value_info(it->second);
  } else {
    for (const auto& v : model_.graph().output()) {
      if (v.name() == value) info = &v;
    }
    for (const auto& v : model_.graph().input()) {
      if (v.name() == value) info = &v;
    }
  }
  if (!info) {
    if (const onnx::TensorProto* t = initializer(value)) {
      return std::make_pair(t->data_type(),
                            std::vector<int64_t>(t->dims().begin(), t->dims().end()));
    }
    return std::nullopt;
  }
  const Tensor t = type_of(*info);
  return std::make_pair(static_cast<int32_t>(t.dtype), t.shape);
}

std::string GraphEdit::unique(const std::string& hint) {
  std::string name = hint;
  for (int k = 2; names_.count(name); ++k) name = hint + "_" + std::to_string(k);
  names_.insert(name);
  return name;
}

std::string GraphEdit::add_floats(const std::string& hint, const std::vector<int64_t>& dims,
                                  const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_name(unique(hint));
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  added_.push_back(t);
  return t.name();
}

void GraphEdit::replace(int i, std::vector<onnx::NodeProto> replacement) {
  edits_[i] = std::move(replacement);
}

int GraphEdit::commit() {
  if (edits_.empty() && added_.empty() && redirect_.empty()) return 0;
  onnx::GraphProto& g = *model_.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto it = edits_.find(i);
    if (it == edits_.end()) {
      *nodes.Add() = g.node(i);
    } else {
      for (const auto& n : it->second) *nodes.Add() = n;
    }
  }
  // A redirect chain (a -> b -> c) resolves to its end.
  auto target = [&](std::string name) {
    for (int hops = 0; hops < 64; ++hops) {
      const auto it = redirect_.find(name);
      if (it == redirect_.end()) break;
      name = it->second;
    }
    return name;
  };
  for (auto& n : nodes) {
    for (auto& in : *n.mutable_input()) {
      if (!in.empty()) in = target(in);
    }
  }
  for (auto& o : *g.mutable_output()) {
    const std::string t = target(o.name());
    if (t != o.name()) {
      // The graph's output keeps its name: an Identity writes it.
      *nodes.Add() = make_node("Identity", unique(o.name() + ".identity"), {t}, o.name());
    }
  }
  g.mutable_node()->Swap(&nodes);
  for (auto& t : added_) *g.add_initializer() = std::move(t);
  // Initializers (and their input entries, for old IR versions) nothing reads.
  std::set<std::string> read;
  for (const auto& n : g.node()) {
    read.insert(n.input().begin(), n.input().end());
    add_subgraph_reads(n, read);
  }
  for (const auto& o : g.output()) read.insert(o.name());
  drop_unread_initializers(g, read);
  // Types are inferred again by finalize_model.
  g.clear_value_info();
  const int edited = static_cast<int>(edits_.size());
  edits_.clear();
  added_.clear();
  redirect_.clear();
  return edited;
}

onnx::NodeProto make_node(const std::string& op, const std::string& name,
                          std::vector<std::string> inputs, const std::string& output) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (auto& in : inputs) n.add_input(std::move(in));
  n.add_output(output);
  return n;
}

float attr_float(const onnx::NodeProto& n, const std::string& key, float fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == key) return a.f();
  }
  return fallback;
}

int64_t attr_int(const onnx::NodeProto& n, const std::string& key, int64_t fallback) {
  for (const auto& a : n.attribute()) {
    if (a.name() == key) return a.i();
  }
  return fallback;
}

}  // namespace eulernpu::host::ir
