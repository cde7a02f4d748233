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
#include "eulernpu/sdk/owned_node.hpp"

namespace eulernpu::int8_quantizer {

using Attr = sdk::OwnedAttribute;

// An owned node with the attribute lookups the rewrite reads.
struct Node : sdk::OwnedNode {
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
