// A graph the quantizer owns: the float graph copied out of the host's
// borrowed view (valid for one call only), and the int8 graph it builds and
// hands back through the graph builder.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "eulernpu/sdk/frontend.hpp"
#include "eulernpu/sdk/graph.hpp"

namespace eulernpu::int8_quantizer {

struct Attr {
  std::string name;
  int32_t type = ENP_ATTR_UNDEFINED;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::optional<sdk::OwnedTensor> t;

  static Attr integer(std::string name, int64_t v);
  static Attr integers(std::string name, std::vector<int64_t> v);
};

struct Node {
  std::string name, op_type, domain;
  std::vector<std::string> inputs, outputs;
  std::vector<Attr> attributes;

  const Attr* attr(const std::string& key) const;
  int64_t attr_int(const std::string& key, int64_t fallback) const;
  double attr_float(const std::string& key, double fallback) const;
  std::string attr_string(const std::string& key, std::string fallback) const;
  std::vector<int64_t> attr_ints(const std::string& key, std::vector<int64_t> fallback = {}) const;
  // The input name, "" if omitted or past the end.
  const std::string& input(size_t i) const;
};

struct ValueType {
  int32_t dtype = ENP_DTYPE_UNDEFINED;
  std::vector<int64_t> dims;
  bool shape_known = false;
};

struct OwnedGraph {
  std::string name;
  std::vector<Node> nodes;  // topological order
  std::vector<std::pair<std::string, ValueType>> inputs, outputs;
  std::map<std::string, sdk::OwnedTensor> initializers;
  std::map<std::string, ValueType> types;  // every value whose type is known
  std::map<std::string, int64_t> opsets;
  std::map<std::string, std::string> metadata;

  static OwnedGraph copy_of(const sdk::GraphView& g);
  // Describes this graph to the host (inputs, outputs, initializers, nodes,
  // opsets, metadata). Output shapes are left for the host to infer.
  void emit(sdk::GraphBuilder& out) const;

  const sdk::OwnedTensor* initializer(const std::string& name) const;
  const ValueType* type(const std::string& name) const;
};

// Float32 data of an initializer (copied; the bytes may be unaligned).
std::vector<float> float_values(const sdk::OwnedTensor& t);

}  // namespace eulernpu::int8_quantizer
