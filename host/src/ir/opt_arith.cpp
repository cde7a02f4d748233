// Division and subtraction by constants as multiplication and addition:
// Div(x, c) -> Mul(x, 1/c), Sub(x, c) -> Add(x, -c). int8 has QMul and
// QAdd with a constant operand, and the activation patterns
// (opt_activations.cpp) are then spelled one way only. 1/c is rounded once
// to float32, so x · (1/c) may differ from x / c in the last bit; -c is exact.
#include <cmath>

#include "ir/graph_edit.hpp"
#include "ir/optimize.hpp"

namespace eulernpu::host::ir {

std::vector<AppliedRewrite> constant_arithmetic(GraphEdit& e) {
  std::vector<AppliedRewrite> done;
  for (int i = 0; i < e.node_count(); ++i) {
    const onnx::NodeProto& n = e.node(i);
    if (!n.domain().empty() || n.input_size() != 2 || e.edited(i)) continue;
    const bool div = n.op_type() == "Div";
    if (!div && n.op_type() != "Sub") continue;
    // Only float32 data divided by a float32 constant: integer Div truncates.
    const auto x = e.type(n.input(0));
    if (!x || x->first != onnx::TensorProto::FLOAT || e.initializer(n.input(0))) continue;
    auto c = e.floats(n.input(1));
    if (!c) continue;
    bool ok = true;
    for (float& v : *c) {
      const float r = div ? 1.0f / v : -v;
      ok &= std::isfinite(v) && std::isfinite(r) && (!div || v != 0.0f);
      v = r;
    }
    if (!ok) continue;
    const onnx::TensorProto& ct = *e.initializer(n.input(1));
    const std::vector<int64_t> dims(ct.dims().begin(), ct.dims().end());
    const std::string base = n.name().empty() ? n.output(0) : n.name();
    onnx::NodeProto q = n;
    q.set_op_type(div ? "Mul" : "Add");
    q.set_input(1, e.add_floats(base + (div ? ".reciprocal" : ".negated"), dims, *c));
    e.replace(i, {q});
    done.push_back({div ? "div-to-mul" : "sub-to-add", n.name(),
                    div ? "Div by a constant as Mul by its reciprocal"
                        : "Sub of a constant as Add of its negation"});
  }
  return done;
}

}  // namespace eulernpu::host::ir
