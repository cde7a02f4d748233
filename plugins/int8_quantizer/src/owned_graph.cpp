#include "owned_graph.hpp"

#include <cstring>

namespace eulernpu::int8_quantizer {

const Attr* Node::attr(const std::string& key) const {
  for (const Attr& a : attributes) {
    if (a.name == key) return &a;
  }
  return nullptr;
}

int64_t Node::attr_int(const std::string& key, int64_t fallback) const {
  const Attr* a = attr(key);
  return a && a->type == ENP_ATTR_INT ? a->i : fallback;
}

double Node::attr_float(const std::string& key, double fallback) const {
  const Attr* a = attr(key);
  return a && a->type == ENP_ATTR_FLOAT ? a->f : fallback;
}

std::string Node::attr_string(const std::string& key, std::string fallback) const {
  const Attr* a = attr(key);
  return a && a->type == ENP_ATTR_STRING ? a->s : fallback;
}

std::vector<int64_t> Node::attr_ints(const std::string& key, std::vector<int64_t> fallback) const {
  const Attr* a = attr(key);
  return a && a->type == ENP_ATTR_INTS ? a->ints : fallback;
}

const std::string& Node::input(size_t i) const {
  static const std::string kNone;
  return i < inputs.size() ? inputs[i] : kNone;
}

namespace {

sdk::OwnedTensor copy_tensor(const enp_tensor_t& t) {
  sdk::OwnedTensor out;
  out.name = t.name ? t.name : "";
  out.dtype = t.dtype;
  out.dims.assign(t.dims, t.dims + t.rank);
  if (t.data) {
    const auto* p = static_cast<const uint8_t*>(t.data);
    out.bytes.assign(p, p + t.size_bytes);
  }
  return out;
}

ValueType type_of(const enp_tensor_t& t) {
  ValueType v;
  v.dtype = t.dtype;
  v.shape_known = sdk::TensorView(&t).shape_known();
  if (v.shape_known) v.dims.assign(t.dims, t.dims + t.rank);
  return v;
}

Attr copy_attr(const enp_attribute_t& a) {
  Attr out;
  out.name = a.name;
  out.type = a.type;
  out.i = a.i;
  out.f = a.f;
  if (a.s) out.s.assign(a.s, a.s_size);
  if (a.type == ENP_ATTR_INTS) out.ints.assign(a.ints, a.ints + a.count);
  if (a.type == ENP_ATTR_FLOATS) out.floats.assign(a.floats, a.floats + a.count);
  if (a.type == ENP_ATTR_STRINGS) out.strings.assign(a.strings, a.strings + a.count);
  if (a.type == ENP_ATTR_TENSOR && a.t) out.t = copy_tensor(*a.t);
  return out;
}

}  // namespace

OwnedGraph OwnedGraph::copy_of(const sdk::GraphView& g) {
  OwnedGraph out;
  out.name = g.name();
  for (size_t i = 0; i < g.node_count(); ++i) {
    const sdk::NodeView v = g.node(i);
    Node n;
    n.name = v.name();
    n.op_type = v.op_type();
    n.domain = v.domain();
    for (size_t k = 0; k < v.input_count(); ++k) n.inputs.emplace_back(v.input(k));
    for (size_t k = 0; k < v.output_count(); ++k) n.outputs.emplace_back(v.output(k));
    for (const enp_attribute_t& a : v.attributes()) n.attributes.push_back(copy_attr(a));
    out.nodes.push_back(std::move(n));
  }
  for (const enp_tensor_t& t : g.inputs()) out.inputs.emplace_back(t.name, type_of(t));
  for (const enp_tensor_t& t : g.outputs()) out.outputs.emplace_back(t.name, type_of(t));
  for (const enp_tensor_t& t : g.initializers()) {
    out.initializers.emplace(t.name, copy_tensor(t));
    out.types.emplace(t.name, type_of(t));
  }
  for (auto list : {g.inputs(), g.outputs(), g.value_infos()}) {
    for (const enp_tensor_t& t : list) out.types.emplace(t.name, type_of(t));
  }
  for (uint64_t i = 0; i < g.raw()->n_opsets; ++i) {
    out.opsets[g.raw()->opsets[i].domain] = g.raw()->opsets[i].version;
  }
  for (const enp_kv_t& kv : g.metadata()) out.metadata[kv.key] = kv.value;
  return out;
}

void OwnedGraph::emit(sdk::GraphBuilder& out) const {
  out.set_name(name);
  for (const auto& [domain, version] : opsets) out.set_opset(domain, version);
  for (const auto& [n, t] : inputs) {
    if (t.shape_known) {
      out.add_input(n, t.dtype, t.dims);
    } else {
      const enp_tensor_t unknown{n.c_str(), t.dtype, 0, nullptr, nullptr, 0};
      out.add_input(unknown);
    }
  }
  for (const auto& [n, t] : outputs) out.add_output(n, t.dtype);
  for (const auto& [n, t] : initializers) out.add_initializer(t.view());
  for (const Node& n : nodes) sdk::add_node(out, n);
  for (const auto& [k, v] : metadata) out.set_metadata(k, v);
}

const sdk::OwnedTensor* OwnedGraph::initializer(const std::string& n) const {
  const auto it = initializers.find(n);
  return it == initializers.end() ? nullptr : &it->second;
}

const ValueType* OwnedGraph::type(const std::string& n) const {
  const auto it = types.find(n);
  return it == types.end() ? nullptr : &it->second;
}

std::vector<float> float_values(const sdk::OwnedTensor& t) {
  std::vector<float> v(t.bytes.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), t.bytes.data(), v.size() * sizeof(float));
  return v;
}

}  // namespace eulernpu::int8_quantizer
