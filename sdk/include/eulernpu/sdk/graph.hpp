// Read-only C++ views over the graph structs of abi.h. Views borrow: they
// are valid as long as the enp_graph_t they came from (one plugin call).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "eulernpu/sdk/abi.h"
#include "eulernpu/sdk/status.hpp"

namespace eulernpu::sdk {

inline size_t dtype_size(int32_t dtype) {
  switch (dtype) {
    case ENP_DTYPE_FLOAT32:
    case ENP_DTYPE_INT32:
    case ENP_DTYPE_UINT32:
      return 4;
    case ENP_DTYPE_UINT8:
    case ENP_DTYPE_INT8:
    case ENP_DTYPE_BOOL:
      return 1;
    case ENP_DTYPE_UINT16:
    case ENP_DTYPE_INT16:
    case ENP_DTYPE_FLOAT16:
    case ENP_DTYPE_BFLOAT16:
      return 2;
    case ENP_DTYPE_INT64:
    case ENP_DTYPE_FLOAT64:
    case ENP_DTYPE_UINT64:
      return 8;
    // --- low-precision types: one byte per element in memory (abi.h)
    case ENP_DTYPE_FLOAT8E4M3FN:
    case ENP_DTYPE_FLOAT8E4M3FNUZ:
    case ENP_DTYPE_FLOAT8E5M2:
    case ENP_DTYPE_FLOAT8E5M2FNUZ:
    case ENP_DTYPE_UINT4:
    case ENP_DTYPE_INT4:
    case ENP_DTYPE_FLOAT4E2M1:
    case ENP_DTYPE_FLOAT8E8M0:
    case ENP_DTYPE_UINT2:
    case ENP_DTYPE_INT2:
      return 1;
    // --- end of low-precision types
    default:
      return 0;
  }
}

inline const char* dtype_name(int32_t dtype) {
  switch (dtype) {
    case ENP_DTYPE_FLOAT32:
      return "float32";
    case ENP_DTYPE_UINT8:
      return "uint8";
    case ENP_DTYPE_INT8:
      return "int8";
    case ENP_DTYPE_UINT16:
      return "uint16";
    case ENP_DTYPE_INT16:
      return "int16";
    case ENP_DTYPE_INT32:
      return "int32";
    case ENP_DTYPE_INT64:
      return "int64";
    case ENP_DTYPE_STRING:
      return "string";
    case ENP_DTYPE_BOOL:
      return "bool";
    case ENP_DTYPE_FLOAT16:
      return "float16";
    case ENP_DTYPE_FLOAT64:
      return "float64";
    case ENP_DTYPE_UINT32:
      return "uint32";
    case ENP_DTYPE_UINT64:
      return "uint64";
    case ENP_DTYPE_BFLOAT16:
      return "bfloat16";
    // --- low-precision types, named as ONNX's helper names them
    case ENP_DTYPE_FLOAT8E4M3FN:
      return "float8e4m3fn";
    case ENP_DTYPE_FLOAT8E4M3FNUZ:
      return "float8e4m3fnuz";
    case ENP_DTYPE_FLOAT8E5M2:
      return "float8e5m2";
    case ENP_DTYPE_FLOAT8E5M2FNUZ:
      return "float8e5m2fnuz";
    case ENP_DTYPE_UINT4:
      return "uint4";
    case ENP_DTYPE_INT4:
      return "int4";
    case ENP_DTYPE_FLOAT4E2M1:
      return "float4e2m1";
    case ENP_DTYPE_FLOAT8E8M0:
      return "float8e8m0";
    case ENP_DTYPE_UINT2:
      return "uint2";
    case ENP_DTYPE_INT2:
      return "int2";
    // --- end of low-precision types
    default:
      return "undefined";
  }
}

// Inverse of dtype_name over the dtypes with a size; ENP_DTYPE_UNDEFINED
// for any other name.
inline int32_t dtype_from_name(std::string_view name) {
  for (int32_t d = ENP_DTYPE_FLOAT32; d <= ENP_DTYPE_INT2; ++d) {
    if (dtype_size(d) != 0 && name == dtype_name(d)) return d;
  }
  return ENP_DTYPE_UNDEFINED;
}

// "(1, 4)" as numpy prints shapes.
inline std::string shape_string(std::span<const int64_t> dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  if (dims.size() == 1) s += ",";
  return s + ")";
}

class TensorView {
 public:
  explicit TensorView(const enp_tensor_t* t) : t_(t) {}
  std::string_view name() const { return t_->name ? t_->name : ""; }
  int32_t dtype() const { return t_->dtype; }
  std::span<const int64_t> dims() const { return {t_->dims, t_->rank}; }
  std::vector<int64_t> shape() const { return {dims().begin(), dims().end()}; }
  bool has_data() const { return t_->data != nullptr; }
  // False only for a type-only value whose shape is unknown (abi.h: NULL
  // dims with rank 0). A tensor with data always has a known shape.
  bool shape_known() const { return t_->data != nullptr || t_->dims != nullptr || t_->rank > 0; }
  const void* data() const { return t_->data; }
  uint64_t size_bytes() const { return t_->size_bytes; }
  // Product of dims; -1 if any is unknown.
  int64_t element_count() const {
    int64_t n = 1;
    for (int64_t d : dims()) {
      if (d < 0) return -1;
      n *= d;
    }
    return n;
  }
  template <typename T>
  std::span<const T> as() const {
    return {static_cast<const T*>(t_->data), static_cast<size_t>(t_->size_bytes / sizeof(T))};
  }
  const enp_tensor_t* raw() const { return t_; }

 private:
  const enp_tensor_t* t_;
};

class NodeView {
 public:
  explicit NodeView(const enp_node_t* n) : n_(n) {}
  std::string_view name() const { return n_->name ? n_->name : ""; }
  std::string_view op_type() const { return n_->op_type ? n_->op_type : ""; }
  std::string_view domain() const { return n_->domain ? n_->domain : ""; }
  size_t input_count() const { return n_->n_inputs; }
  size_t output_count() const { return n_->n_outputs; }
  // "" for an omitted optional input, and for indexes past the end.
  std::string_view input(size_t i) const { return i < n_->n_inputs ? n_->inputs[i] : ""; }
  std::string_view output(size_t i) const { return i < n_->n_outputs ? n_->outputs[i] : ""; }

  const enp_attribute_t* find_attribute(std::string_view name) const {
    for (uint32_t i = 0; i < n_->n_attributes; ++i) {
      if (name == n_->attributes[i].name) return &n_->attributes[i];
    }
    return nullptr;
  }
  int64_t attr_int(std::string_view name, int64_t fallback) const {
    const enp_attribute_t* a = find_attribute(name);
    return a && a->type == ENP_ATTR_INT ? a->i : fallback;
  }
  double attr_float(std::string_view name, double fallback) const {
    const enp_attribute_t* a = find_attribute(name);
    return a && a->type == ENP_ATTR_FLOAT ? a->f : fallback;
  }
  std::string attr_string(std::string_view name, std::string fallback) const {
    const enp_attribute_t* a = find_attribute(name);
    return a && a->type == ENP_ATTR_STRING ? std::string(a->s, a->s_size) : fallback;
  }
  std::vector<int64_t> attr_ints(std::string_view name, std::vector<int64_t> fallback = {}) const {
    const enp_attribute_t* a = find_attribute(name);
    if (!a || a->type != ENP_ATTR_INTS) return fallback;
    return {a->ints, a->ints + a->count};
  }
  std::span<const enp_attribute_t> attributes() const {
    return {n_->attributes, static_cast<size_t>(n_->n_attributes)};
  }
  const enp_node_t* raw() const { return n_; }

 private:
  const enp_node_t* n_;
};

class GraphView {
 public:
  explicit GraphView(const enp_graph_t* g) : g_(g) {
    // Lookups by name are linear over a small graph; a large one gets an
    // index, so a pass that looks up every node's operands stays linear
    // in the graph's size rather than quadratic.
    const size_t n = g->n_inputs + g->n_outputs + g->n_value_infos + g->n_initializers;
    if (n > kIndexFrom) {
      auto index = std::make_shared<Index>();
      index->values.reserve(n);
      for (auto list : {inputs(), outputs(), value_infos(), initializers()}) {
        for (const enp_tensor_t& t : list) index->values.emplace(t.name ? t.name : "", &t);
      }
      for (const enp_tensor_t& t : initializers()) {
        index->initializers.emplace(t.name ? t.name : "", &t);
      }
      index_ = std::move(index);
    }
  }
  std::string_view name() const { return g_->name ? g_->name : ""; }
  size_t node_count() const { return g_->n_nodes; }
  NodeView node(size_t i) const { return NodeView(&g_->nodes[i]); }
  std::span<const enp_tensor_t> inputs() const {
    return {g_->inputs, static_cast<size_t>(g_->n_inputs)};
  }
  std::span<const enp_tensor_t> outputs() const {
    return {g_->outputs, static_cast<size_t>(g_->n_outputs)};
  }
  std::span<const enp_tensor_t> initializers() const {
    return {g_->initializers, static_cast<size_t>(g_->n_initializers)};
  }
  std::span<const enp_tensor_t> value_infos() const {
    return {g_->value_infos, static_cast<size_t>(g_->n_value_infos)};
  }
  std::span<const enp_kv_t> metadata() const {
    return {g_->metadata, static_cast<size_t>(g_->n_metadata)};
  }

  // The initializer called `name`, if any.
  std::optional<TensorView> initializer(std::string_view name) const {
    if (index_) {
      const auto it = index_->initializers.find(name);
      if (it == index_->initializers.end()) return std::nullopt;
      return TensorView(it->second);
    }
    for (const enp_tensor_t& t : initializers()) {
      if (name == t.name) return TensorView(&t);
    }
    return std::nullopt;
  }
  // Type and shape of any named value: input, output, intermediate or
  // initializer.
  std::optional<TensorView> value(std::string_view name) const {
    if (index_) {
      const auto it = index_->values.find(name);
      if (it == index_->values.end()) return std::nullopt;
      return TensorView(it->second);
    }
    for (auto list : {inputs(), outputs(), value_infos(), initializers()}) {
      for (const enp_tensor_t& t : list) {
        if (name == t.name) return TensorView(&t);
      }
    }
    return std::nullopt;
  }
  std::string metadata(std::string_view key, std::string fallback = {}) const {
    for (const enp_kv_t& kv : metadata()) {
      if (key == kv.key) return kv.value;
    }
    return fallback;
  }
  int64_t opset(std::string_view domain) const {
    for (uint64_t i = 0; i < g_->n_opsets; ++i) {
      if (domain == g_->opsets[i].domain) return g_->opsets[i].version;
    }
    return 0;
  }
  const enp_graph_t* raw() const { return g_; }

 private:
  static constexpr size_t kIndexFrom = 64;
  struct Index {
    // First match wins, in value()'s search order. Names point into the
    // graph, which outlives its view.
    std::unordered_map<std::string_view, const enp_tensor_t*> values, initializers;
  };
  const enp_graph_t* g_;
  std::shared_ptr<const Index> index_;
};

// Key/value options passed to a plugin call.
// The dtype and shape the graph gives value `name`: ENP_DTYPE_UNDEFINED and
// {} when it has none.
inline int32_t dtype_of(const GraphView& g, std::string_view name) {
  const auto v = g.value(name);
  return v ? v->dtype() : ENP_DTYPE_UNDEFINED;
}
inline std::vector<int64_t> shape_of(const GraphView& g, std::string_view name) {
  const auto v = g.value(name);
  return v ? v->shape() : std::vector<int64_t>{};
}

class Options {
 public:
  Options(const enp_kv_t* kv, uint64_t n) : kv_(kv, n) {}
  std::optional<std::string> find(std::string_view key) const {
    for (const enp_kv_t& e : kv_) {
      if (key == e.key) return std::string(e.value);
    }
    return std::nullopt;
  }
  std::string get(std::string_view key, std::string fallback) const {
    return find(key).value_or(std::move(fallback));
  }
  std::span<const enp_kv_t> all() const { return kv_; }
  // Every option whose key starts with `prefix`, the prefix removed.
  std::vector<std::pair<std::string, std::string>> with_prefix(std::string_view prefix) const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const enp_kv_t& e : kv_) {
      const std::string_view key = e.key;
      if (key.substr(0, prefix.size()) == prefix) {
        out.emplace_back(std::string(key.substr(prefix.size())), e.value);
      }
    }
    return out;
  }

 private:
  std::span<const enp_kv_t> kv_;
};

// An owned tensor a plugin builds (weights to store, outputs to return).
struct OwnedTensor {
  std::string name;
  int32_t dtype = ENP_DTYPE_UNDEFINED;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;

  // A borrowed enp_tensor_t over this tensor, valid while it is alive.
  enp_tensor_t view() const {
    return enp_tensor_t{name.c_str(), dtype,        static_cast<uint32_t>(dims.size()),
                        dims.data(),  bytes.data(), bytes.size()};
  }
};

}  // namespace eulernpu::sdk
