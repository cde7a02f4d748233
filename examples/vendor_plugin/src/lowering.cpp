#include "lowering.hpp"

#include "eulernpu/kit/lowering.hpp"
#include "eulernpu/sdk/errors.hpp"
#include "eulernpu/sdk/int8_ops.hpp"

namespace acme_npu {
namespace {

namespace sdk = eulernpu::sdk;

// A float32 node of acme_npu's and whether it passed every check.
struct CheckedNode {
  Op op = Op::kRelu;
  Attrs attrs;
  std::vector<std::string_view> inputs;
  std::string problem;  // empty when the node is supported
};

// Why a value cannot be a float32 tensor of acme_npu, or nullopt.
std::optional<std::string> value_problem(const sdk::GraphView& g, std::string_view name) {
  // Appended, not "'" + std::string(name): GCC 12 -O3 warns falsely
  // (-Wrestrict) about that expression.
  std::string quoted = "'";
  quoted.append(name).append("'");
  const auto v = g.value(name);
  if (!v) return "tensor " + quoted + " has no known type";
  if (v->dtype() != ENP_DTYPE_FLOAT32) {
    return "dtype " + std::string(sdk::dtype_name(v->dtype())) + " of " + quoted +
           " is not supported (float32 only)";
  }
  if (v->raw()->dims == nullptr && v->raw()->rank == 0) {
    return "tensor " + quoted + " has an unknown shape";
  }
  for (int64_t d : v->dims()) {
    if (d < 0) {
      return "tensor " + quoted + " has an unknown dimension " + sdk::shape_string(v->dims());
    }
  }
  if (auto problem = shape_problem(v->shape())) return "tensor " + quoted + ": " + *problem;
  return std::nullopt;
}

// Reads the attributes `op` knows; anything else is a reason to refuse the
// node rather than silently ignore it.
std::string read_attrs(const sdk::NodeView& n, Op op, int64_t opset, size_t rank, Attrs& out) {
  if (op == Op::kSoftmax) {
    // Before opset 13, Softmax flattened its input to 2-D at `axis`
    // (default 1); that is a last-axis softmax exactly when `axis` is the
    // last dim, the one case infer_shape() accepts.
    const int64_t axis = n.attr_int("axis", opset >= 13 ? -1 : 1);
    out.axis = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
  }
  for (const enp_attribute_t& a : n.attributes()) {
    const std::string_view name = a.name;
    const bool is_float = op == Op::kGemm && (name == "alpha" || name == "beta");
    const bool is_int = (op == Op::kGemm && (name == "transA" || name == "transB")) ||
                        (op == Op::kSoftmax && name == "axis");
    if (!is_float && !is_int) return "attribute '" + std::string(name) + "' is not supported";
    if (a.type != (is_float ? ENP_ATTR_FLOAT : ENP_ATTR_INT)) {
      return "attribute '" + std::string(name) + "' must be " + (is_float ? "a float" : "an int");
    }
    if (name == "alpha") out.alpha = a.f;
    if (name == "beta") out.beta = a.f;
    if (name == "transA") out.trans_a = a.i;
    if (name == "transB") out.trans_b = a.i;
  }
  return {};
}

CheckedNode check_node(const sdk::GraphView& g, size_t index) {
  CheckedNode c;
  const sdk::NodeView n = g.node(index);
  const std::string op_type(n.op_type());
  if (!n.domain().empty()) {
    c.problem = "domain '" + std::string(n.domain()) + "' has no acme_npu kernels";
    return c;
  }
  const int64_t opset = g.opset("");
  const auto op = find_op(op_type, opset);
  if (!op) {
    c.problem = "acme_npu has no kernel for " + op_type + " at opset " + std::to_string(opset);
    return c;
  }
  c.op = *op;
  if (n.output_count() != 1 || n.output(0).empty()) {
    c.problem = op_type + " with other than one output is not supported";
    return c;
  }
  size_t count = n.input_count();
  while (count > 0 && n.input(count - 1).empty()) --count;  // trailing optionals
  std::vector<Shape> shapes;
  for (size_t i = 0; i < count; ++i) {
    if (n.input(i).empty()) {
      c.problem = "an omitted input before a present one is not supported";
      return c;
    }
    if (auto problem = value_problem(g, n.input(i))) {
      c.problem = *problem;
      return c;
    }
    c.inputs.push_back(n.input(i));
    shapes.push_back(g.value(n.input(i))->shape());
  }
  if (auto problem = value_problem(g, n.output(0))) {
    c.problem = *problem;
    return c;
  }
  c.problem = read_attrs(n, c.op, opset, shapes.empty() ? 0 : shapes[0].size(), c.attrs);
  if (!c.problem.empty()) return c;
  const ShapeResult r = infer_shape(c.op, c.attrs, shapes);
  const Shape declared = g.value(n.output(0))->shape();
  if (!r.problem.empty()) {
    c.problem = r.problem;
  } else if (r.shape != declared) {
    c.problem = "output shape " + sdk::shape_string(declared) + " differs from the " +
                sdk::shape_string(r.shape) + " acme_npu computes";
  }
  return c;
}

// Whether a node is work for the backend kit's reference kernels: an
// ai.eulernpu op, an op that only moves int8 codes (or float32 values), or
// the float32 <-> int8 boundary of a quantized graph.
bool is_int8_node(const sdk::GraphView& g, const sdk::NodeView& n) {
  if (n.domain() == eulernpu::sdk::int8_ops::kDomain) return true;
  if (!n.domain().empty() || n.input_count() == 0 || n.input(0).empty() || n.output_count() == 0 ||
      n.output(0).empty()) {
    return false;
  }
  const auto in = g.value(n.input(0)), out = g.value(n.output(0));
  if (!in || !out) return false;
  if (n.op_type() == "QuantizeLinear") return out->dtype() == ENP_DTYPE_INT8;
  if (n.op_type() == "DequantizeLinear") return in->dtype() == ENP_DTYPE_INT8;
  // Moving float32 values is exact too: a quantized graph flattens or
  // reshapes its float32 input before quantizing it.
  return eulernpu::sdk::int8_ops::is_movement_op(n.op_type()) &&
         (in->dtype() == ENP_DTYPE_INT8 || in->dtype() == ENP_DTYPE_FLOAT32);
}

}  // namespace

std::optional<std::string> unsupported_reason(const sdk::GraphView& graph, size_t index) {
  if (!is_int8_node(graph, graph.node(index))) {
    CheckedNode c = check_node(graph, index);
    if (!c.problem.empty()) return std::move(c.problem);
  }
  // The kit writes and runs the artifact: what it cannot lower, we cannot.
  return eulernpu::kit::unsupported_reason(graph, index);
}

Attrs stored_attrs(const eulernpu::kit::LoweredNode& node, size_t rank) {
  const auto& j = node.attributes;
  // A value of the wrong type reads as the default; infer_shape() and the
  // output's declared shape then catch what that changes.
  auto number = [&j](const char* key, double fallback) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : fallback;
  };
  auto integer = [&j](const char* key, int64_t fallback) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
  };
  Attrs a;
  a.alpha = number("alpha", 1.0);
  a.beta = number("beta", 1.0);
  a.trans_a = integer("transA", 0);
  a.trans_b = integer("transB", 0);
  const int64_t axis = integer("axis", node.opset >= 13 ? -1 : 1);
  a.axis = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
  return a;
}

void check_graph(const sdk::GraphView& graph) {
  for (size_t i = 0; i < graph.node_count(); ++i) {
    if (auto reason = unsupported_reason(graph, i)) {
      const sdk::NodeView n = graph.node(i);
      sdk::errors::lowering_missing(n.op_type(), "backend 'acme_npu' cannot lower node '" +
                                                     std::string(n.name()) + "' (" +
                                                     std::string(n.op_type()) + "): " + *reason);
    }
  }
}

}  // namespace acme_npu
