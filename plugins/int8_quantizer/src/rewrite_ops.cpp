// Add/Sub/Mul, the table ops and Softmax, pooling, Concat and the ops that
// only move int8 codes.
#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "rewrite.hpp"
#include "tables.hpp"

namespace eulernpu::int8_quantizer {

namespace qm = sdk::qmath;

namespace {

// An operand of an elementwise op: a float activation's int8 twin or a
// float constant quantized per tensor.
struct Operand {
  std::string name;
  QParams p;
};

}  // namespace

Rewriter::Reason Rewriter::elementwise(size_t index) {
  const Node& n = src_.nodes[index];
  if (n.inputs.size() != 2) return "it does not have two inputs";
  // Decide before emitting anything: both operands must be usable.
  for (const auto& in : n.inputs) {
    const bool constant = src_.initializer(in) && src_.initializer(in)->dtype == ENP_DTYPE_FLOAT32;
    if (!constant && !(is_float_activation(in) && params_of(in))) {
      return "its inputs are not float32 activations or constants";
    }
  }
  if (!is_float_activation(n.inputs[0]) && !is_float_activation(n.inputs[1])) {
    return "both inputs are constants";
  }
  std::string output = n.outputs[0];
  const auto fused = fusable_activation(output);
  if (fused) output = src_.nodes[*fused].outputs[0];
  const auto y = params_of(output);
  if (!y) return "its output has no calibrated range";
  int32_t qmin = -128, qmax = 127;
  if (fused) std::tie(qmin, qmax) = clamp_of(*fused, *y);
  // Constant operands' parameters come from their values.
  std::array<QParams, 2> p;
  for (size_t i = 0; i < 2; ++i) {
    if (is_float_activation(n.inputs[i])) {
      p[i] = *params_of(n.inputs[i]);
    } else {
      TensorObserver obs;
      obs.observe(float_values(*src_.initializer(n.inputs[i])));
      if (!std::isfinite(obs.min()) || !std::isfinite(obs.max())) return "a constant is not finite";
      p[i] = to_qparams(activation_params(choose_range(obs, Method::kMinMax)));
    }
  }
  Node q;
  q.name = n.name;
  q.domain = sdk::int8_ops::kDomain;
  q.attributes = {Attr::integer("a_zero_point", p[0].zero_point),
                  Attr::integer("b_zero_point", p[1].zero_point),
                  Attr::integer("y_zero_point", y->zero_point)};
  try {
    if (n.op_type == "Mul") {
      q.op_type = "QMul";
      const auto m = qm::encode_multiplier(p[0].scale * p[1].scale / y->scale);
      q.attributes.push_back(Attr::integer("multiplier", m.multiplier));
      q.attributes.push_back(Attr::integer("shift", m.shift));
    } else {
      q.op_type = n.op_type == "Add" ? "QAdd" : "QSub";
      const auto a = qm::encode_add(p[0].scale, p[0].zero_point, p[1].scale, p[1].zero_point,
                                    y->scale, y->zero_point);
      q.attributes.push_back(Attr::integer("a_multiplier", a.a.multiplier));
      q.attributes.push_back(Attr::integer("a_shift", a.a.shift));
      q.attributes.push_back(Attr::integer("b_multiplier", a.b.multiplier));
      q.attributes.push_back(Attr::integer("b_shift", a.b.shift));
      q.attributes.push_back(Attr::integer("y_multiplier", a.out.multiplier));
      q.attributes.push_back(Attr::integer("y_shift", a.out.shift));
    }
  } catch (const std::invalid_argument& e) {
    return std::string("its scales need a multiplier out of range: ") + e.what();
  }
  q.attributes.push_back(Attr::integer("qmin", qmin));
  q.attributes.push_back(Attr::integer("qmax", qmax));
  for (size_t i = 0; i < 2; ++i) {
    q.inputs.push_back(is_float_activation(n.inputs[i]) ? int8_of(n.inputs[i])
                                                        : int8_constant(n.inputs[i])->first);
  }
  if (fused) mark_fused(*fused, n.name);
  q.outputs = {define_int8(output, *y, n, q.op_type)};
  add_node(std::move(q));
  return std::nullopt;
}

Rewriter::Reason Rewriter::unary(size_t index) {
  const Node& n = src_.nodes[index];
  if (n.op_type == "Softmax") {
    if (!is_float_activation(n.input(0)) || !params_of(n.input(0))) {
      return "its input is not a calibrated float32 activation";
    }
    const ValueType* t = src_.type(n.input(0));
    if (!t || !t->shape_known || t->dims.empty()) return "its input shape is unknown";
    const auto rank = static_cast<int64_t>(t->dims.size());
    const int64_t opset = src_.opsets.count("") ? src_.opsets.at("") : 13;
    int64_t axis = n.attr_int("axis", opset >= 13 ? -1 : 1);
    if (axis < 0) axis += rank;
    // Before opset 13 Softmax normalizes over all dims from `axis` on: the
    // same as one axis only when it is the last.
    if (opset < 13 && axis != rank - 1) return "Softmax over several axes (opset < 13)";
    const QParams in = *params_of(n.input(0));
    const auto table = qm::build_softmax_exp_table(in.scale);
    Node q;
    q.name = n.name;
    q.op_type = "QSoftmax";
    q.domain = sdk::int8_ops::kDomain;
    q.inputs = {int8_of(n.inputs[0]), add_int32s(n.name + ".exp_table",
                                                 std::vector<int32_t>(table.begin(), table.end()))};
    q.attributes = {Attr::integer("axis", axis)};
    q.outputs = {define_int8(n.outputs[0], {qm::kSoftmaxOutputScale, qm::kSoftmaxOutputZeroPoint},
                             n, "QSoftmax")};
    add_node(std::move(q));
    return std::nullopt;
  }
  const auto f = unary_function(n, src_);
  if (!f) return "no int8 form for " + n.op_type;
  if (!is_float_activation(n.input(0)) || !params_of(n.input(0))) {
    return "its input is not a calibrated float32 activation";
  }
  const auto y = params_of(n.outputs[0]);
  if (!y) return "its output has no calibrated range";
  const QParams in = *params_of(n.input(0));
  const auto table = qm::build_table(*f, in.scale, in.zero_point, y->scale, y->zero_point);
  Node q;
  q.name = n.name;
  q.op_type = "QLookup";
  q.domain = sdk::int8_ops::kDomain;
  q.inputs = {int8_of(n.inputs[0]),
              add_int8s(n.name + ".table", {256}, {table.begin(), table.end()})};
  q.outputs = {define_int8(n.outputs[0], *y, n, "QLookup")};
  add_node(std::move(q));
  return std::nullopt;
}

Rewriter::Reason Rewriter::pooling(size_t index) {
  const Node& n = src_.nodes[index];
  if (n.op_type == "Concat") {
    std::vector<QParams> ins;
    for (const auto& in : n.inputs) {
      const bool constant =
          src_.initializer(in) && src_.initializer(in)->dtype == ENP_DTYPE_FLOAT32;
      if (!constant && !(is_float_activation(in) && params_of(in))) {
        return "its inputs are not float32 activations or constants";
      }
    }
    const auto y = params_of(n.outputs[0]);
    if (!y) return "its output has no calibrated range";
    std::vector<int64_t> zps, ms, ss;
    std::vector<std::string> inputs;
    std::vector<QParams> params;
    for (const auto& in : n.inputs) {
      if (is_float_activation(in)) {
        params.push_back(*params_of(in));
      } else {
        TensorObserver obs;
        obs.observe(float_values(*src_.initializer(in)));
        if (!std::isfinite(obs.min()) || !std::isfinite(obs.max()))
          return "a constant is not finite";
        params.push_back(to_qparams(activation_params(choose_range(obs, Method::kMinMax))));
      }
      try {
        const auto m = qm::encode_multiplier(params.back().scale / y->scale);
        ms.push_back(m.multiplier);
        ss.push_back(m.shift);
      } catch (const std::invalid_argument& e) {
        return std::string("its scales need a multiplier out of range: ") + e.what();
      }
      zps.push_back(params.back().zero_point);
    }
    for (const auto& in : n.inputs) {
      inputs.push_back(is_float_activation(in) ? int8_of(in) : int8_constant(in)->first);
    }
    Node q;
    q.name = n.name;
    q.op_type = "QConcat";
    q.domain = sdk::int8_ops::kDomain;
    q.inputs = inputs;
    q.attributes = {Attr::integer("axis", n.attr_int("axis", 0)),
                    Attr::integers("x_zero_points", zps), Attr::integers("multipliers", ms),
                    Attr::integers("shifts", ss), Attr::integer("y_zero_point", y->zero_point)};
    q.outputs = {define_int8(n.outputs[0], *y, n, "QConcat")};
    add_node(std::move(q));
    return std::nullopt;
  }
  if (!is_float_activation(n.input(0)) || !params_of(n.input(0))) {
    return "its input is not a calibrated float32 activation";
  }
  const auto y = params_of(n.outputs[0]);
  if (!y) return "its output has no calibrated range";
  const QParams in = *params_of(n.input(0));
  const ValueType* t = src_.type(n.input(0));
  if (!t || !t->shape_known || t->dims.size() < 3) return "its input shape is unknown";
  const std::vector<int64_t> spatial(t->dims.begin() + 2, t->dims.end());
  Node q;
  q.name = n.name;
  q.domain = sdk::int8_ops::kDomain;
  try {
    if (n.op_type == "GlobalAveragePool") {
      int64_t count = 1;
      for (int64_t d : spatial) count *= d;
      if (count <= 0) return "its input has no spatial elements";
      const auto m = qm::encode_multiplier(in.scale / (y->scale * static_cast<double>(count)));
      q.op_type = "QGlobalAveragePool";
      q.inputs = {int8_of(n.inputs[0])};
      q.attributes = {Attr::integer("x_zero_point", in.zero_point),
                      Attr::integer("y_zero_point", y->zero_point),
                      Attr::integer("multiplier", m.multiplier), Attr::integer("shift", m.shift)};
    } else {
      const auto kernel = n.attr_ints("kernel_shape");
      const auto pads = explicit_pads(n, spatial, kernel);
      if (kernel.empty() || !pads) return "its kernel or padding cannot be made explicit";
      int64_t taps = 1;
      for (int64_t k : kernel) taps *= k;
      if (taps <= 0 || taps > 65536) return "its kernel is too large for int8 pooling";
      std::vector<int32_t> ms(static_cast<size_t>(taps) + 1, 0),
          ss(static_cast<size_t>(taps) + 1, 1);
      for (int64_t c = 1; c <= taps; ++c) {
        const auto m = qm::encode_multiplier(in.scale / (y->scale * static_cast<double>(c)));
        ms[static_cast<size_t>(c)] = m.multiplier;
        ss[static_cast<size_t>(c)] = m.shift;
      }
      const size_t r = kernel.size();
      q.op_type = "QAveragePool";
      q.inputs = {int8_of(n.inputs[0]), add_int32s(n.name + ".M", ms),
                  add_int32s(n.name + ".S", ss)};
      q.attributes = {
          Attr::integers("kernel_shape", kernel),
          Attr::integers("strides", n.attr_ints("strides", std::vector<int64_t>(r, 1))),
          Attr::integers("pads", *pads),
          Attr::integers("dilations", n.attr_ints("dilations", std::vector<int64_t>(r, 1))),
          Attr::integer("ceil_mode", n.attr_int("ceil_mode", 0)),
          Attr::integer("count_include_pad", n.attr_int("count_include_pad", 0)),
          Attr::integer("x_zero_point", in.zero_point),
          Attr::integer("y_zero_point", y->zero_point)};
    }
  } catch (const std::invalid_argument& e) {
    return std::string("its scales need a multiplier out of range: ") + e.what();
  }
  q.outputs = {define_int8(n.outputs[0], *y, n, q.op_type)};
  add_node(std::move(q));
  return std::nullopt;
}

bool is_movement_op(const std::string& op) { return sdk::int8_ops::is_movement_op(op); }

Rewriter::Reason Rewriter::movement(size_t index) {
  const Node& n = src_.nodes[index];
  const std::string& data = n.input(0);
  // Moving codes pays only where they already are int8: a float input stays
  // float rather than gaining a boundary.
  if (!int8_name_.count(data)) return "its input is float32 (nothing to move in int8)";
  if (n.op_type == "MaxPool" && n.outputs.size() > 1) return "MaxPool with indices";
  if (n.op_type == "Resize" && n.attr_string("mode", "nearest") != "nearest") {
    return "Resize mode '" + n.attr_string("mode", "nearest") +
           "' (int8 moves codes: nearest only)";
  }
  const int64_t opset = src_.opsets.count("") ? src_.opsets.at("") : 13;
  if (n.op_type == "Pad" && opset < 11) return "Pad before opset 11";
  const QParams p = int8_params_.at(data);
  Node q = n;
  q.inputs[0] = int8_of(data);
  for (size_t k = 1; k < q.inputs.size(); ++k) {
    if (!q.inputs[k].empty()) q.inputs[k] = float_of(q.inputs[k]);
  }
  if (n.op_type == "Pad") {
    // The constant a padded element holds, as a code at the data's scale.
    double value = 0;
    if (!n.input(2).empty()) {
      const sdk::OwnedTensor* c = src_.initializer(n.input(2));
      if (!c || c->dtype != ENP_DTYPE_FLOAT32 || c->bytes.size() != 4) {
        return "its constant_value is not a float32 constant";
      }
      value = float_values(*c)[0];
    }
    const auto code = static_cast<int8_t>(
        std::clamp(qm::round_half_even(value / p.scale) + p.zero_point, -128.0, 127.0));
    if (q.inputs.size() < 3) q.inputs.resize(3);
    q.inputs[2] = add_int8s(n.name + ".constant_value", {}, {code});
  }
  for (auto& o : q.outputs) {
    if (!o.empty()) o = define_int8(o, p, n, n.op_type);
  }
  add_node(std::move(q));
  return std::nullopt;
}

}  // namespace eulernpu::int8_quantizer
