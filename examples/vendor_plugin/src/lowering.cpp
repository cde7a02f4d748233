#include "lowering.hpp"

#include <map>
#include <set>

namespace acme_npu {
namespace {

namespace sdk = eulernpu::sdk;

// A node that passed every check, in the terms the Program needs.
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

[[noreturn]] void lowering_missing(const std::string& op, const std::string& where) {
  throw sdk::Error(ENP_UNIMPLEMENTED, "backend lowering missing for op " + op,
                   "backend 'acme_npu' cannot lower " + where,
                   "run 'eulernpu capabilities --op " + op +
                       "' to see which backends support it, then pick one with --backend",
                   "docs/errors.md#backend-lowering-missing-for-op-x");
}

}  // namespace

std::optional<std::string> unsupported_reason(const sdk::GraphView& graph, size_t index) {
  CheckedNode c = check_node(graph, index);
  if (c.problem.empty()) return std::nullopt;
  return std::move(c.problem);
}

Lowered lower_graph(const sdk::GraphView& graph) {
  std::set<std::string, std::less<>> weight_names, input_names;
  for (const enp_tensor_t& t : graph.initializers()) weight_names.insert(t.name);
  for (const enp_tensor_t& t : graph.inputs()) input_names.insert(t.name);

  Lowered out;
  Program& p = out.program;
  p.name = graph.name();
  std::map<std::string, size_t, std::less<>> index;
  // Tensors in first-use order, classified once: an initializer is a
  // weight even if the graph also lists it as an input.
  auto declare = [&](std::string_view name) {
    auto it = index.find(name);
    if (it != index.end()) return it->second;
    const TensorKind kind = weight_names.count(name)  ? TensorKind::kWeight
                            : input_names.count(name) ? TensorKind::kInput
                                                      : TensorKind::kValue;
    p.tensors.push_back({std::string(name), kind, graph.value(name)->shape()});
    index.emplace(std::string(name), p.tensors.size() - 1);
    return p.tensors.size() - 1;
  };

  for (size_t i = 0; i < graph.node_count(); ++i) {
    const sdk::NodeView n = graph.node(i);
    const CheckedNode c = check_node(graph, i);
    if (!c.problem.empty()) {
      lowering_missing(std::string(n.op_type()), "node '" + std::string(n.name()) + "' (" +
                                                     std::string(n.op_type()) + "): " + c.problem);
    }
    NodeDecl d{std::string(n.name()), c.op, {}, 0, c.attrs};
    for (std::string_view in : c.inputs) d.inputs.push_back(declare(in));
    d.output = declare(n.output(0));
    p.nodes.push_back(std::move(d));
    p.order.push_back(i);  // the host hands nodes over topologically sorted
  }
  for (const enp_tensor_t& t : graph.outputs()) {
    // An output no node computes is a pass-through: fine, if it is a tensor
    // acme_npu can hold.
    if (!index.count(std::string_view(t.name))) {
      if (auto problem = value_problem(graph, t.name)) {
        lowering_missing("Identity", "graph output '" + std::string(t.name) + "': " + *problem);
      }
    }
    p.outputs.push_back(declare(t.name));
  }

  // Checking our own output catches a lowering bug at compile time, where
  // it can be reported, instead of as a "corrupt" artifact at run time.
  const std::string problem = validate(p);
  if (!problem.empty()) {
    throw sdk::Error(ENP_INTERNAL, "internal plugin error",
                     "acme_npu lowered an invalid program: " + problem,
                     "report this to Acme with the model");
  }

  for (const TensorDecl& t : p.tensors) {
    if (t.kind != TensorKind::kWeight) continue;
    const sdk::TensorView w = *graph.initializer(t.name);
    if ((!w.has_data() && w.size_bytes() > 0) ||
        w.size_bytes() != static_cast<uint64_t>(float_bytes(t.shape))) {
      throw sdk::Error(ENP_INVALID_ARGUMENT, "model tensor data is inconsistent",
                       "initializer '" + t.name + "' does not hold " + sdk::shape_string(t.shape) +
                           " float32 values",
                       "re-export the model");
    }
    const auto* bytes = static_cast<const uint8_t*>(w.data());
    out.weights.push_back({t.name, ENP_DTYPE_FLOAT32, t.shape, {bytes, bytes + w.size_bytes()}});
  }
  return out;
}

}  // namespace acme_npu
