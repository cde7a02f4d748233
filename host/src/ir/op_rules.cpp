#include "ir/op_rules.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include "core/error.hpp"

namespace eulernpu::host::ir {

bool ValueType::is_static() const {
  if (!known) return false;
  for (int64_t d : dims) {
    if (d < 0) return false;
  }
  return true;
}

uint64_t ValueType::element_count() const {
  uint64_t n = 1;
  for (int64_t d : dims) n *= static_cast<uint64_t>(d < 0 ? 0 : d);
  return n;
}

ValueType type_of_tensor(const Tensor& t) { return ValueType{t.dtype, t.shape, true}; }

InferContext::InferContext(const onnx::NodeProto& node, int64_t opset,
                           std::vector<const ValueType*> inputs,
                           std::vector<const Tensor*> constants)
    : node_(node),
      opset_(opset),
      inputs_(std::move(inputs)),
      constants_(std::move(constants)),
      outputs_(static_cast<size_t>(node.output_size())) {}

const ValueType& InferContext::input(size_t i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is required");
  return *inputs_[i];
}

std::optional<std::vector<int64_t>> InferContext::constant_ints(size_t i) const {
  const Tensor* t = constant(i);
  if (!t) return std::nullopt;
  std::vector<int64_t> out;
  const uint64_t n = t->element_count();
  for (uint64_t k = 0; k < n; ++k) {
    if (t->dtype == DType::kInt64) {
      int64_t v;
      std::memcpy(&v, t->data.data() + 8 * k, 8);
      out.push_back(v);
    } else if (t->dtype == DType::kInt32) {
      int32_t v;
      std::memcpy(&v, t->data.data() + 4 * k, 4);
      out.push_back(v);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

namespace {
const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}
}  // namespace

bool InferContext::has_attr(std::string_view name) const { return find_attr(node_, name); }

int64_t InferContext::attr_int(std::string_view name, int64_t fallback) const {
  const auto* a = find_attr(node_, name);
  return a ? a->i() : fallback;
}

float InferContext::attr_float(std::string_view name, float fallback) const {
  const auto* a = find_attr(node_, name);
  return a ? a->f() : fallback;
}

std::string InferContext::attr_string(std::string_view name, std::string fallback) const {
  const auto* a = find_attr(node_, name);
  return a ? a->s() : fallback;
}

std::vector<int64_t> InferContext::attr_ints(std::string_view name,
                                             std::vector<int64_t> fallback) const {
  const auto* a = find_attr(node_, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}

std::vector<float> InferContext::attr_floats(std::string_view name) const {
  const auto* a = find_attr(node_, name);
  return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : std::vector<float>{};
}

const onnx::TensorProto* InferContext::attr_tensor(std::string_view name) const {
  const auto* a = find_attr(node_, name);
  return a && a->has_t() ? &a->t() : nullptr;
}

void InferContext::set_output(size_t i, ValueType type) {
  if (i < outputs_.size()) outputs_[i] = std::move(type);
}

void InferContext::fail(const std::string& why) const {
  throw UserError("operator shape mismatch",
                  "node '" + node_.name() + "' (" + node_.op_type() + "): " + why,
                  "make the shapes of the node's inputs agree with the operator's definition");
}

int64_t InferContext::axis(int64_t axis, int64_t rank, const char* what) const {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
         std::to_string(rank));
  }
  return a;
}

std::optional<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else if (db == 1) {
      out[i] = da;
    } else if (da < 0 || db < 0) {
      // One unknown, the other not 1: the known one wins (the unknown one
      // must be 1 or equal to it for the model to be valid).
      out[i] = da < 0 ? db : da;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

const OpRule* find_rule(std::string_view op_type) {
  static const std::map<std::string, OpRule, std::less<>> rules = [] {
    std::map<std::string, OpRule, std::less<>> m;
    for (auto group :
         {elementwise_rules, nn_rules, shape_rules, reduce_rules, transformer_rules, loss_rules,
          misc_rules, einsum_rules, image_rules, signal_rules, quant_rules, sequence_rules,
          rnn_rules, detection_rules, linalg_rules, text_rules, reverse_rules}) {
      for (const OpRule& r : group()) m.emplace(r.op_type, r);
    }
    return m;
  }();
  auto it = rules.find(op_type);
  return it == rules.end() ? nullptr : &it->second;
}

const OpRule* find_rule(std::string_view domain, std::string_view op_type) {
  if (is_onnx_domain(domain)) return find_rule(op_type);
  if (domain != kEulerNpuDomain) return nullptr;
  static const std::map<std::string, OpRule, std::less<>> rules = [] {
    std::map<std::string, OpRule, std::less<>> m;
    for (const OpRule& r : eulernpu_rules()) m.emplace(r.op_type, r);
    return m;
  }();
  auto it = rules.find(op_type);
  return it == rules.end() ? nullptr : &it->second;
}

void same_as_input(InferContext& ctx) { ctx.set_output(0, ctx.input(0)); }

std::optional<int64_t> constant_scalar(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return std::nullopt;
  const auto v = ctx.constant_ints(i);
  if (!v || v->size() != 1) return std::nullopt;
  return v->front();
}

int64_t vector_length(const InferContext& ctx, size_t i) {
  const ValueType& t = ctx.input(i);
  return t.known && t.dims.size() == 1 ? t.dims[0] : -1;
}

ValueType infer_as(InferContext& ctx, const char* op, const std::vector<size_t>& inputs) {
  const OpRule* rule = find_rule(op);
  if (!rule) ctx.fail(std::string("no rule for ") + op);
  std::vector<const ValueType*> types;
  std::vector<const Tensor*> constants;
  for (size_t i : inputs) {
    const bool given = i != kAbsentInput && ctx.has_input(i);
    types.push_back(given ? &ctx.input(i) : nullptr);
    constants.push_back(given ? ctx.constant(i) : nullptr);
  }
  InferContext sub(ctx.node(), ctx.opset(), types, constants);
  rule->infer(sub);
  return sub.outputs().empty() ? ValueType{} : sub.outputs()[0];
}

std::vector<int64_t> normalize_axes(const InferContext& ctx, std::vector<int64_t> axes,
                                    int64_t rank) {
  for (int64_t& a : axes) a = ctx.axis(a, rank, "axes entry");
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  ctx.require(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(),
              "axes has a duplicate entry");
  return axes;
}

}  // namespace eulernpu::host::ir
