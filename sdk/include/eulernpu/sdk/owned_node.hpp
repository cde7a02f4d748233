// A graph node that owns its names, attribute values and tensors, and the
// one place a plugin's node becomes the ABI's enp_node_t: every frontend and
// the quantizer build their nodes as OwnedNode and hand them to
// add_node(GraphBuilder&, const OwnedNode&), instead of each marshalling
// pointer arrays of its own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eulernpu/sdk/frontend.hpp"
#include "eulernpu/sdk/graph.hpp"

namespace eulernpu::sdk {

struct OwnedAttribute {
  std::string name;
  int32_t type = ENP_ATTR_UNDEFINED;
  int64_t i = 0;
  double f = 0;
  std::string s;  // STRING, and GRAPH's serialized bytes
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::optional<OwnedTensor> t;

  static OwnedAttribute make(std::string name, int32_t type) {
    OwnedAttribute a;
    a.name = std::move(name);
    a.type = type;
    return a;
  }
  static OwnedAttribute integer(std::string name, int64_t v) {
    OwnedAttribute a = make(std::move(name), ENP_ATTR_INT);
    a.i = v;
    return a;
  }
  static OwnedAttribute integers(std::string name, std::vector<int64_t> v) {
    OwnedAttribute a = make(std::move(name), ENP_ATTR_INTS);
    a.ints = std::move(v);
    return a;
  }
  static OwnedAttribute real(std::string name, double v) {
    OwnedAttribute a = make(std::move(name), ENP_ATTR_FLOAT);
    a.f = v;
    return a;
  }
  static OwnedAttribute reals(std::string name, std::vector<double> v) {
    OwnedAttribute a = make(std::move(name), ENP_ATTR_FLOATS);
    a.floats = std::move(v);
    return a;
  }
  static OwnedAttribute text(std::string name, std::string v) {
    OwnedAttribute a = make(std::move(name), ENP_ATTR_STRING);
    a.s = std::move(v);
    return a;
  }
  static OwnedAttribute texts(std::string name, std::vector<std::string> v) {
    OwnedAttribute a = make(std::move(name), ENP_ATTR_STRINGS);
    a.strings = std::move(v);
    return a;
  }
  static OwnedAttribute tensor(std::string name, OwnedTensor v) {
    OwnedAttribute a = make(std::move(name), ENP_ATTR_TENSOR);
    a.t = std::move(v);
    return a;
  }
  // A subgraph as ONNX's serialized GraphProto bytes (abi.h).
  static OwnedAttribute graph(std::string name, std::string bytes) {
    OwnedAttribute a = make(std::move(name), ENP_ATTR_GRAPH);
    a.s = std::move(bytes);
    return a;
  }
};

struct OwnedNode {
  std::string name, op_type, domain;         // domain "" is ONNX's
  std::vector<std::string> inputs, outputs;  // "" for an omitted optional
  std::vector<OwnedAttribute> attributes;
};

// Marshals `n` to enp_node_t and adds it; the host copies everything before
// the call returns, so the pointer arrays live on this stack frame only.
inline void add_node(GraphBuilder& out, const OwnedNode& n) {
  std::vector<const char*> ins, outs;
  for (const auto& s : n.inputs) ins.push_back(s.c_str());
  for (const auto& s : n.outputs) outs.push_back(s.c_str());
  std::vector<std::vector<const char*>> string_ptrs(n.attributes.size());
  std::vector<enp_tensor_t> tensors(n.attributes.size());
  std::vector<enp_attribute_t> attrs;
  for (size_t k = 0; k < n.attributes.size(); ++k) {
    const OwnedAttribute& a = n.attributes[k];
    enp_attribute_t e{};
    e.name = a.name.c_str();
    e.type = a.type;
    e.i = a.i;
    e.f = a.f;
    e.s = a.s.c_str();
    e.s_size = a.s.size();
    if (a.type == ENP_ATTR_INTS) {
      e.ints = a.ints.data();
      e.count = a.ints.size();
    } else if (a.type == ENP_ATTR_FLOATS) {
      e.floats = a.floats.data();
      e.count = a.floats.size();
    } else if (a.type == ENP_ATTR_STRINGS) {
      for (const auto& s : a.strings) string_ptrs[k].push_back(s.c_str());
      e.strings = string_ptrs[k].data();
      e.count = a.strings.size();
    } else if (a.type == ENP_ATTR_TENSOR && a.t) {
      tensors[k] = a.t->view();
      e.t = &tensors[k];
    }
    attrs.push_back(e);
  }
  const enp_node_t node{n.name.c_str(),
                        n.op_type.c_str(),
                        n.domain.c_str(),
                        ins.data(),
                        static_cast<uint32_t>(ins.size()),
                        outs.data(),
                        static_cast<uint32_t>(outs.size()),
                        attrs.data(),
                        static_cast<uint32_t>(attrs.size())};
  out.add_node(node);
}

}  // namespace eulernpu::sdk
