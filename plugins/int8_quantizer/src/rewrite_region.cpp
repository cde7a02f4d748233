// Pointwise regions as one table: a connected group of elementwise nodes
// whose only run-time input is one value x (every other operand a scalar
// constant) computes y = f(x) element by element, so the whole group is one
// QLookup of f over x's 256 codes. Exporters spell SiLU as x · Sigmoid(x),
// GELU as 0.5 · x · (1 + Erf(x / √2)), HardSwish as x · Clip(x + 3, 0, 6) / 6
// and Mish as x · Tanh(Softplus(x)); each becomes one table, one rounding,
// instead of a chain of requantized steps or float islands.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "rewrite.hpp"
#include "tables.hpp"

namespace eulernpu::int8_quantizer {

namespace qm = sdk::qmath;

namespace {

// Largest region tabulated: beyond it the graph is not an activation.
constexpr size_t kMaxRegionNodes = 24;

using Values = std::map<std::string, double>;

}  // namespace

// A scalar float32 constant (one element, or all elements equal): its value.
static std::optional<double> scalar_constant(const OwnedGraph& g, const std::string& name) {
  const sdk::OwnedTensor* t = g.initializer(name);
  if (!t || t->dtype != ENP_DTYPE_FLOAT32 || t->bytes.empty()) return std::nullopt;
  const std::vector<float> v = float_values(*t);
  for (float f : v) {
    if (f != v.front() || !std::isfinite(f)) return std::nullopt;
  }
  return v.front();
}

// f64 evaluation of pointwise node `n` given its operands' values; nullopt
// for an op that is not pointwise here.
static std::optional<double> evaluate(const Node& n, const OwnedGraph& g, const Values& values) {
  auto operand = [&](size_t k) -> std::optional<double> {
    if (k >= n.inputs.size() || n.inputs[k].empty()) return std::nullopt;
    if (const auto it = values.find(n.inputs[k]); it != values.end()) return it->second;
    return scalar_constant(g, n.inputs[k]);
  };
  const std::string& op = n.op_type;
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" || op == "Max" ||
      op == "Min") {
    if (n.inputs.size() != 2) return std::nullopt;
    const auto a = operand(0), b = operand(1);
    if (!a || !b) return std::nullopt;
    if (op == "Add") return *a + *b;
    if (op == "Sub") return *a - *b;
    if (op == "Mul") return *a * *b;
    if (op == "Div") return *a / *b;
    if (op == "Max") return std::max(*a, *b);
    if (op == "Min") return std::min(*a, *b);
    return std::pow(*a, *b);
  }
  if (n.inputs.empty()) return std::nullopt;
  const auto x = operand(0);
  if (!x) return std::nullopt;
  if (op == "Identity") return *x;
  if (op == "Sqrt") return std::sqrt(*x);
  if (op == "Reciprocal") return 1.0 / *x;
  if (op == "Log") return std::log(*x);
  if (const auto f = unary_function(n, g)) return (*f)(*x);
  return std::nullopt;
}

// Whether `n` is an op evaluate() knows, with every operand in `inside` or
// a scalar constant, and a float32 output.
static bool pointwise_over(const Node& n, const OwnedGraph& g,
                           const std::set<std::string>& inside) {
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  if (n.outputs.size() != 1) return false;
  const ValueType* t = g.type(n.outputs[0]);
  if (!t || t->dtype != ENP_DTYPE_FLOAT32) return false;
  bool reads_inside = false;
  Values probe;
  for (const auto& in : n.inputs) {
    if (in.empty()) continue;
    if (inside.count(in)) {
      reads_inside = true;
      probe[in] = 0.5;
    } else if (!scalar_constant(g, in)) {
      return false;
    }
  }
  return reads_inside && evaluate(n, g, probe).has_value();
}

std::optional<Rewriter::Reason> Rewriter::pointwise_region(size_t index) {
  const Node& s = src_.nodes[index];
  // The run-time input: s's one operand that is not a scalar constant.
  std::string x;
  for (const auto& in : s.inputs) {
    if (in.empty() || scalar_constant(src_, in)) continue;
    if (!x.empty() && in != x) return std::nullopt;
    x = in;
  }
  if (x.empty() || !is_float_activation(x) || !params_of(x)) return std::nullopt;
  std::set<std::string> inside = {x};
  if (!pointwise_over(s, src_, inside)) return std::nullopt;
  // Grow through readers of the region's values; a reader that also needs
  // another pointwise function of x alone pulls that node in first.
  std::vector<size_t> region = {index};
  inside.insert(s.outputs[0]);
  auto usable = [&](size_t c) {
    const Node& n = src_.nodes[c];
    return c > index && !fused_.count(c) && !settings_.keep_fp32.count(n.name) &&
           std::find(region.begin(), region.end(), c) == region.end();
  };
  for (size_t k = 0; k < region.size() && region.size() < kMaxRegionNodes; ++k) {
    const std::string v = src_.nodes[region[k]].outputs[0];
    for (size_t c : consumers(v)) {
      if (!usable(c)) continue;
      const Node& n = src_.nodes[c];
      std::vector<size_t> pulled;
      for (const auto& in : n.inputs) {
        if (in.empty() || inside.count(in) || scalar_constant(src_, in)) continue;
        // Produced by a pointwise node of x alone?
        for (size_t p : consumers(x)) {
          const Node& pn = src_.nodes[p];
          if (pn.outputs.size() == 1 && pn.outputs[0] == in && usable(p) &&
              pointwise_over(pn, src_, {x})) {
            pulled.push_back(p);
          }
        }
      }
      std::set<std::string> with = inside;
      for (size_t p : pulled) with.insert(src_.nodes[p].outputs[0]);
      if (!pointwise_over(n, src_, with)) continue;
      for (size_t p : pulled) {
        region.push_back(p);
        inside.insert(src_.nodes[p].outputs[0]);
      }
      region.push_back(c);
      inside.insert(n.outputs[0]);
    }
  }
  if (region.size() < 2) return std::nullopt;  // one node: the per-op rules
  std::sort(region.begin(), region.end());
  // The longest prefix (in graph order) that leaves by one value only.
  for (size_t len = region.size(); len >= 2; --len) {
    const std::vector<size_t> part(region.begin(), region.begin() + static_cast<long>(len));
    std::set<size_t> members(part.begin(), part.end());
    std::vector<std::string> exits;
    bool closed = true;
    for (size_t m : part) {
      const Node& n = src_.nodes[m];
      for (const auto& in : n.inputs) {
        // Every operand inside the region must be produced inside this prefix.
        if (in.empty() || in == x || scalar_constant(src_, in)) continue;
        bool produced = false;
        for (size_t o : part) produced |= src_.nodes[o].outputs[0] == in;
        closed &= produced;
      }
      bool leaves = is_graph_output(n.outputs[0]);
      for (size_t c : consumers(n.outputs[0])) leaves |= !members.count(c);
      if (leaves) exits.push_back(n.outputs[0]);
    }
    if (!closed || exits.size() != 1) continue;
    const std::string& y = exits[0];
    const ValueType* tx = src_.type(x);
    const ValueType* ty = src_.type(y);
    // Scalar constants must not broadcast x to a larger shape.
    if (!tx || !ty || !tx->shape_known || !ty->shape_known || tx->dims != ty->dims) continue;
    const auto py = params_of(y);
    if (!py) continue;
    const QParams px = *params_of(x);
    bool finite = true;
    auto f = [&](double v) {
      Values values = {{x, v}};
      for (size_t m : part) {
        const auto r = evaluate(src_.nodes[m], src_, values);
        if (!r) {
          finite = false;
          return 0.0;
        }
        values[src_.nodes[m].outputs[0]] = *r;
      }
      const double out = values.at(y);
      finite &= std::isfinite(out);
      return std::isfinite(out) ? out : 0.0;
    };
    const auto table = qm::build_table(f, px.scale, px.zero_point, py->scale, py->zero_point);
    if (!finite) continue;  // f leaves its domain on some code (Log, Sqrt, 1/x)
    const Node& last = src_.nodes[part.back()];
    Node q;
    q.name = last.name;
    q.op_type = "QLookup";
    q.domain = sdk::int8_ops::kDomain;
    q.inputs = {int8_of(x), add_int8s(last.name + ".table", {256}, {table.begin(), table.end()})};
    for (size_t m : part) {
      if (m != index) mark_fused(m, last.name);
    }
    region_json_.push_back(
        {{"node", last.name}, {"nodes", part.size()}, {"input", x}, {"output", y}});
    q.outputs = {define_int8(y, *py, last, "QLookup")};
    add_node(std::move(q));
    return Reason{};  // engaged: handled here, and quantized
  }
  return std::nullopt;
}

}  // namespace eulernpu::int8_quantizer
