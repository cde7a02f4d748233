// Conv, ConvTranspose, Gemm and MatMul: int8 weights per output channel,
// int32 biases, per-channel multipliers, a fused Relu/Clip as the clamp.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "bias_correction.hpp"
#include "rewrite.hpp"
#include "weights.hpp"

namespace eulernpu::int8_quantizer {

namespace qm = sdk::qmath;

namespace {

int64_t product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

std::vector<int32_t> multipliers(const std::vector<qm::FixedMultiplier>& m) {
  std::vector<int32_t> out;
  for (const auto& x : m) out.push_back(x.multiplier);
  return out;
}

std::vector<int32_t> shifts(const std::vector<qm::FixedMultiplier>& m) {
  std::vector<int32_t> out;
  for (const auto& x : m) out.push_back(x.shift);
  return out;
}

}  // namespace

std::optional<std::vector<int64_t>> explicit_pads(const Node& n,
                                                  const std::vector<int64_t>& spatial,
                                                  const std::vector<int64_t>& kernel) {
  const size_t r = kernel.size();
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> pads = n.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
    if (pads.size() != 2 * r) return std::nullopt;
    return pads;
  }
  if (spatial.size() != r) return std::nullopt;
  std::vector<int64_t> pads(2 * r, 0);
  if (auto_pad == "VALID") return pads;
  const auto strides = n.attr_ints("strides", std::vector<int64_t>(r, 1));
  const auto dilations = n.attr_ints("dilations", std::vector<int64_t>(r, 1));
  if (strides.size() != r || dilations.size() != r) return std::nullopt;
  for (size_t i = 0; i < r; ++i) {
    if (spatial[i] < 0 || strides[i] <= 0) return std::nullopt;
    const int64_t out = (spatial[i] + strides[i] - 1) / strides[i];
    const int64_t total = std::max<int64_t>(
        0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - spatial[i]);
    const int64_t small = total / 2;
    pads[i] = auto_pad == "SAME_LOWER" ? total - small : small;
    pads[i + r] = total - pads[i];
  }
  return pads;
}

Rewriter::Reason Rewriter::linear(size_t index) {
  const std::string& op = src_.nodes[index].op_type;
  if (op == "Conv") return conv(index);
  if (op == "ConvTranspose") return conv_transpose(index);
  if (op == "Gemm") return gemm(index);
  return matmul(index);
}

namespace {

// What every weighted op shares once its weights are in [O, K] form.
struct Weighted {
  std::vector<float> w;  // float weights, layout `shape`
  std::vector<int64_t> shape;
  int64_t channel_axis = 0;
  bool per_tensor = false;
  std::vector<float> bias;  // one per output channel
  int64_t taps = 0;         // terms per dot product
  // Bias correction and adaptive rounding apply (shape (O, C/group, k...)
  // or (O, K)).
  bool correctable = false;
  int64_t group = 1;
};

struct Prepared {
  QuantizedWeights w;
  std::vector<int32_t> bias;
  std::vector<qm::FixedMultiplier> m;
  QParams in, out;
  int32_t qmin = -128, qmax = 127;
  std::string output;           // float name of the value produced
  std::optional<size_t> fused;  // a Relu/Clip folded into the clamp
};

}  // namespace

namespace {

// Quantizes weights/biases and checks the accumulator bound; a reason on
// failure. Emits nothing.
Rewriter::Reason prepare(Rewriter& rw, const Node& n, const Weighted& wt, Prepared& p) {
  const auto in = rw.params_of(n.inputs[0]);
  if (!in) return "its input has no calibrated range";
  p.in = *in;
  p.output = n.outputs[0];
  p.fused = rw.fusable_activation(p.output);
  if (p.fused) p.output = rw.source().nodes[*p.fused].outputs[0];
  const auto out = rw.params_of(p.output);
  if (!out) return "its output has no calibrated range";
  p.out = *out;
  if (p.fused) std::tie(p.qmin, p.qmax) = rw.clamp_of(*p.fused, p.out);
  for (float v : wt.w) {
    if (!std::isfinite(v)) return "a weight is not finite";
  }
  const std::vector<double> floor = bias_weight_floor(wt.bias, p.in.scale, wt.taps);
  if (floor.empty()) {
    return "its int32 accumulator could overflow (" + std::to_string(wt.taps) +
           " terms); docs/quantization.md, Accumulator bound";
  }
  p.w = quantize_weights(wt.w, wt.shape, wt.channel_axis, wt.per_tensor, floor);
  const InputMoments* moments = wt.correctable ? rw.input_moments(n.name) : nullptr;
  const std::optional<RoundingResult> rounding =
      moments ? adaptive_round(p.w, wt.w, *moments) : std::nullopt;
  // Per-tensor weights: one scale serves every output channel.
  const int64_t channels = static_cast<int64_t>(wt.bias.size());
  std::vector<double> scales = p.w.scales;
  if (scales.size() == 1) scales.assign(static_cast<size_t>(channels), scales[0]);
  const std::vector<double>* means = wt.correctable ? rw.input_means(n.name) : nullptr;
  p.bias = quantize_biases(
      means ? corrected_bias(wt.bias, wt.w, wt.shape, p.w, wt.group, *means) : wt.bias, p.in.scale,
      scales);
  // The bound per output channel: its largest |w| (over its K terms) and |bias|.
  const int64_t per_channel = static_cast<int64_t>(p.w.values.size()) / channels;
  for (int64_t c = 0; c < channels; ++c) {
    int64_t max_w = 0;
    if (wt.channel_axis == 0 && !wt.per_tensor) {
      for (int64_t k = 0; k < per_channel; ++k) {
        max_w = std::max<int64_t>(max_w,
                                  std::abs(p.w.values[static_cast<size_t>(c * per_channel + k)]));
      }
    } else {
      for (int8_t v : p.w.values) max_w = std::max<int64_t>(max_w, std::abs(v));
    }
    if (!qm::accumulator_fits_int32(wt.taps, 255, max_w, std::abs(int64_t{p.bias[c]}))) {
      return "its int32 accumulator could overflow (" + std::to_string(wt.taps) +
             " terms); docs/quantization.md, Accumulator bound";
    }
  }
  try {
    p.m = requant_multipliers(p.in.scale, scales, p.out.scale);
  } catch (const std::invalid_argument& e) {
    return std::string("its scales need a multiplier out of range: ") + e.what();
  }
  if (rounding) rw.note_rounding(n.name, *rounding);
  return std::nullopt;
}

void add_clamp_and_zero_points(Node& q, const char* x_zp_name, const Prepared& p) {
  q.attributes.push_back(Attr::integer(x_zp_name, p.in.zero_point));
  q.attributes.push_back(Attr::integer("y_zero_point", p.out.zero_point));
  q.attributes.push_back(Attr::integer("qmin", p.qmin));
  q.attributes.push_back(Attr::integer("qmax", p.qmax));
}

// Emits the op's inputs after X: W, Bias, M, S.
void add_constants(Rewriter& rw, Node& q, const Node& n, const Prepared& p,
                   const std::vector<int64_t>& w_dims) {
  q.inputs.push_back(rw.add_int8s(n.name + ".W_int8", w_dims, p.w.values));
  q.inputs.push_back(rw.add_int32s(n.name + ".bias_int32", p.bias));
  q.inputs.push_back(rw.add_int32s(n.name + ".M", multipliers(p.m)));
  q.inputs.push_back(rw.add_int32s(n.name + ".S", shifts(p.m)));
}

// The tail every weighted op shares: zero points and clamp, the fused
// activation, the int8 output, the node.
void emit_weighted(Rewriter& rw, Node q, const Node& n, const Prepared& p, const char* x_zp_name) {
  add_clamp_and_zero_points(q, x_zp_name, p);
  if (p.fused) rw.mark_fused(*p.fused, n.name);
  q.outputs = {rw.define_int8(p.output, p.out, n, q.op_type)};
  rw.add_node(std::move(q));
}

// The matrix op as ConvInteger / MatMulInteger (`integer`, its X and W and
// attributes set) writing p.output in float32: acc + Bias in int32, Cast,
// one float32 multiply by s_x · s_w[o] — the int8 products without the
// rounding of an int8 output. `channel_dims`: the shape Bias and the scale
// broadcast as ((1, O, 1...) for a conv, (O) for a Gemm).
void emit_float_output(Rewriter& rw, Node integer, const Node& n, const Prepared& p,
                       const std::vector<int64_t>& channel_dims) {
  const std::string base = p.output;
  const int8_t zp = static_cast<int8_t>(p.in.zero_point);
  integer.inputs.push_back(
      rw.add_initializer(n.name + ".x_zero_point", ENP_DTYPE_INT8, {}, &zp, 1));
  std::string acc = base + "_acc_int32";
  integer.outputs = {acc};
  const std::string how = integer.op_type;
  rw.add_node(std::move(integer));
  const size_t channels = p.bias.size();
  if (std::any_of(p.bias.begin(), p.bias.end(), [](int32_t b) { return b != 0; })) {
    Node add;
    add.name = n.name + ".bias";
    add.op_type = "Add";
    add.inputs = {acc, rw.add_initializer(n.name + ".bias_int32", ENP_DTYPE_INT32, channel_dims,
                                          p.bias.data(), channels * sizeof(int32_t))};
    acc = base + "_biased_int32";
    add.outputs = {acc};
    rw.add_node(std::move(add));
  }
  Node cast;
  cast.name = n.name + ".to_float";
  cast.op_type = "Cast";
  cast.inputs = {acc};
  cast.outputs = {base + "_acc_float"};
  cast.attributes = {Attr::integer("to", ENP_DTYPE_FLOAT32)};
  rw.add_node(cast);
  std::vector<float> scale(channels);
  for (size_t o = 0; o < channels; ++o) {
    const double w = p.w.scales.size() == 1 ? p.w.scales[0] : p.w.scales[o];
    scale[o] = static_cast<float>(p.in.scale * w);
  }
  Node mul;
  mul.name = n.name + ".scale";
  mul.op_type = "Mul";
  mul.inputs = {cast.outputs[0], rw.add_initializer(n.name + ".scale", ENP_DTYPE_FLOAT32,
                                                    channel_dims, scale.data(), channels * 4)};
  mul.outputs = {base};
  rw.add_node(std::move(mul));
  rw.define_float_output(base, n, how);
}

std::vector<float> bias_or_zeros(const OwnedGraph& g, const std::string& name, int64_t n) {
  if (name.empty()) return std::vector<float>(static_cast<size_t>(n), 0.0f);
  return float_values(*g.initializer(name));
}

}  // namespace

Rewriter::Reason Rewriter::conv(size_t index) {
  const Node& n = src_.nodes[index];
  if (!is_float_activation(n.input(0))) return "its input is not a float32 activation";
  const sdk::OwnedTensor* w = src_.initializer(n.input(1));
  if (!w || w->dtype != ENP_DTYPE_FLOAT32) return "its weights are not a float32 constant";
  if (!n.input(2).empty() && !src_.initializer(n.input(2))) return "its bias is not a constant";
  const ValueType* x = src_.type(n.input(0));
  if (!x || !x->shape_known || x->dims.size() != w->dims.size())
    return "its input shape is unknown";
  const std::vector<int64_t> kernel(w->dims.begin() + 2, w->dims.end());
  const std::vector<int64_t> spatial(x->dims.begin() + 2, x->dims.end());
  const auto pads = explicit_pads(n, spatial, kernel);
  if (!pads) return "its padding cannot be made explicit";
  Weighted wt;
  wt.w = float_values(*w);
  wt.shape = w->dims;
  wt.per_tensor = per_tensor(n);
  wt.bias = bias_or_zeros(src_, n.input(2), w->dims[0]);
  wt.taps = product(w->dims, 1);
  wt.correctable = true;
  wt.group = n.attr_int("group", 1);
  Prepared p;
  if (Reason r = prepare(*this, n, wt, p)) return r;

  const size_t r = kernel.size();
  Node q;
  q.name = n.name;
  q.op_type = "QConv";
  q.domain = sdk::int8_ops::kDomain;
  q.inputs = {int8_of(n.inputs[0])};
  q.attributes = {Attr::integers("strides", n.attr_ints("strides", std::vector<int64_t>(r, 1))),
                  Attr::integers("pads", *pads),
                  Attr::integers("dilations", n.attr_ints("dilations", std::vector<int64_t>(r, 1))),
                  Attr::integer("group", n.attr_int("group", 1)),
                  Attr::integers("kernel_shape", kernel)};
  if (!p.fused && float_output(p.output)) {
    q.op_type = "ConvInteger";
    q.domain.clear();
    q.inputs.push_back(add_int8s(n.name + ".W_int8", w->dims, p.w.values));
    std::vector<int64_t> channel_dims(w->dims.size(), 1);
    channel_dims[1] = w->dims[0];
    emit_float_output(*this, std::move(q), n, p, channel_dims);
    return std::nullopt;
  }
  add_constants(*this, q, n, p, w->dims);
  emit_weighted(*this, std::move(q), n, p, "x_zero_point");
  return std::nullopt;
}

Rewriter::Reason Rewriter::conv_transpose(size_t index) {
  const Node& n = src_.nodes[index];
  if (!is_float_activation(n.input(0))) return "its input is not a float32 activation";
  const sdk::OwnedTensor* w = src_.initializer(n.input(1));
  if (!w || w->dtype != ENP_DTYPE_FLOAT32 || w->dims.size() < 3) {
    return "its weights are not a float32 constant";
  }
  if (!n.input(2).empty() && !src_.initializer(n.input(2))) return "its bias is not a constant";
  if (n.attr("output_shape")) return "output_shape is not supported in int8 (give pads)";
  if (n.attr_string("auto_pad", "NOTSET") != "NOTSET") return "auto_pad is not supported in int8";
  const int64_t group = n.attr_int("group", 1);
  const size_t r = w->dims.size() - 2;
  const std::vector<int64_t> kernel(w->dims.begin() + 2, w->dims.end());
  const int64_t out_channels = w->dims[1] * group;
  Weighted wt;
  wt.w = float_values(*w);
  wt.shape = w->dims;
  // W is (C, O/group, k...): only with one group is axis 1 the output channel.
  wt.channel_axis = 1;
  wt.per_tensor = per_tensor(n) || group != 1;
  wt.bias = bias_or_zeros(src_, n.input(2), out_channels);
  wt.taps = (w->dims[0] / std::max<int64_t>(group, 1)) * product(kernel);
  if (wt.per_tensor) wt.channel_axis = 0;  // one scale: the axis only names the layout
  Prepared p;
  if (Reason why = prepare(*this, n, wt, p)) return why;
  if (p.m.size() == 1) p.m.assign(static_cast<size_t>(out_channels), p.m[0]);

  Node q;
  q.name = n.name;
  q.op_type = "QConvTranspose";
  q.domain = sdk::int8_ops::kDomain;
  q.inputs = {int8_of(n.inputs[0])};
  add_constants(*this, q, n, p, w->dims);
  q.attributes = {
      Attr::integers("strides", n.attr_ints("strides", std::vector<int64_t>(r, 1))),
      Attr::integers("pads", n.attr_ints("pads", std::vector<int64_t>(2 * r, 0))),
      Attr::integers("dilations", n.attr_ints("dilations", std::vector<int64_t>(r, 1))),
      Attr::integer("group", group),
      Attr::integers("output_padding", n.attr_ints("output_padding", std::vector<int64_t>(r, 0))),
      Attr::integers("kernel_shape", kernel)};
  emit_weighted(*this, std::move(q), n, p, "x_zero_point");
  return std::nullopt;
}

namespace {

// B (K, N) as W (N, K).
std::vector<float> transposed(const std::vector<float>& b, int64_t k, int64_t n) {
  std::vector<float> w(b.size());
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < n; ++j)
      w[static_cast<size_t>(j * k + i)] = b[static_cast<size_t>(i * n + j)];
  }
  return w;
}

}  // namespace

// Emits QGemm for `n` (Gemm or MatMul) with weights already as (N, K).
Rewriter::Reason Rewriter::gemm(size_t index) {
  const Node& n = src_.nodes[index];
  if (!is_float_activation(n.input(0))) return "its input is not a float32 activation";
  const sdk::OwnedTensor* b = src_.initializer(n.input(1));
  if (!b || b->dtype != ENP_DTYPE_FLOAT32 || b->dims.size() != 2) {
    return "its B is not a 2-D float32 constant";
  }
  const bool is_gemm = n.op_type == "Gemm";
  const bool trans_a = is_gemm && n.attr_int("transA", 0) != 0;
  const bool trans_b = is_gemm && n.attr_int("transB", 0) != 0;
  const int64_t k = trans_b ? b->dims[1] : b->dims[0];
  const int64_t cols = trans_b ? b->dims[0] : b->dims[1];
  const ValueType* a = src_.type(n.input(0));
  if (trans_a && (!a || !a->shape_known || a->dims.size() != 2)) {
    return "transA needs a 2-D input of known shape";
  }
  const double alpha = is_gemm ? n.attr_float("alpha", 1.0) : 1.0;
  const double beta = is_gemm ? n.attr_float("beta", 1.0) : 1.0;
  std::vector<float> bias(static_cast<size_t>(cols), 0.0f);
  if (is_gemm && !n.input(2).empty()) {
    const sdk::OwnedTensor* c = src_.initializer(n.input(2));
    if (!c || c->dtype != ENP_DTYPE_FLOAT32) return "its C is not a float32 constant";
    const std::vector<float> cv = float_values(*c);
    // C must be one value per output column (shapes (), (1), (N), (1, N)).
    if (cv.size() != 1 && !(cv.size() == static_cast<size_t>(cols) &&
                            (c->dims.size() == 1 || (c->dims.size() == 2 && c->dims[0] == 1)))) {
      return "its C varies along the rows; only a bias per column is quantized";
    }
    for (size_t j = 0; j < bias.size(); ++j) {
      bias[j] = static_cast<float>(beta * cv[cv.size() == 1 ? 0 : j]);
    }
  }
  Weighted wt;
  wt.w = float_values(*b);
  if (!trans_b) wt.w = transposed(wt.w, k, cols);
  if (alpha != 1.0) {
    for (float& v : wt.w) v = static_cast<float>(alpha * v);
  }
  wt.shape = {cols, k};
  wt.per_tensor = per_tensor(n);
  wt.bias = bias;
  wt.taps = k;
  wt.correctable = !trans_a;  // the means are per A's last axis
  Prepared p;
  if (Reason why = prepare(*this, n, wt, p)) return why;

  Node q;
  q.name = n.name;
  q.op_type = "QGemm";
  q.domain = sdk::int8_ops::kDomain;
  std::string x = int8_of(n.inputs[0]);
  if (trans_a) {
    Node t;
    t.name = n.name + ".transpose_a";
    t.op_type = "Transpose";
    t.inputs = {x};
    t.outputs = {n.inputs[0] + "_T_int8"};
    t.attributes = {Attr::integers("perm", {1, 0})};
    x = t.outputs[0];
    add_node(std::move(t));
  }
  q.inputs = {x};
  if (!p.fused && float_output(p.output)) {
    // MatMulInteger reads B as (K, N).
    std::vector<int8_t> b_kn(p.w.values.size());
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        b_kn[static_cast<size_t>(i * cols + j)] = p.w.values[static_cast<size_t>(j * k + i)];
      }
    }
    q.op_type = "MatMulInteger";
    q.domain.clear();
    q.inputs.push_back(add_int8s(n.name + ".B_int8", {k, cols}, b_kn));
    emit_float_output(*this, std::move(q), n, p, {cols});
    return std::nullopt;
  }
  add_constants(*this, q, n, p, {cols, k});
  emit_weighted(*this, std::move(q), n, p, "a_zero_point");
  return std::nullopt;
}

Rewriter::Reason Rewriter::matmul(size_t index) {
  const Node& n = src_.nodes[index];
  if (src_.initializer(n.input(1))) return gemm(index);
  if (!is_float_activation(n.input(0)) || !is_float_activation(n.input(1))) {
    return "its inputs are not float32 activations";
  }
  const auto a = params_of(n.input(0));
  const auto b = params_of(n.input(1));
  const ValueType* ta = src_.type(n.input(0));
  if (!a || !b || !ta || !ta->shape_known || ta->dims.empty()) {
    return "its inputs have no calibrated range or known shape";
  }
  const int64_t k = ta->dims.back();
  if (k < 0 || !qm::accumulator_fits_int32(k, 255, 255, 0)) {
    return "its int32 accumulator could overflow (" + std::to_string(k) + " terms)";
  }
  std::string output = n.outputs[0];
  const auto fused = fusable_activation(output);
  if (fused) output = src_.nodes[*fused].outputs[0];
  const auto y = params_of(output);
  if (!y) return "its output has no calibrated range";
  qm::FixedMultiplier m;
  try {
    m = qm::encode_multiplier(a->scale * b->scale / y->scale);
  } catch (const std::invalid_argument& e) {
    return std::string("its scales need a multiplier out of range: ") + e.what();
  }
  int32_t qmin = -128, qmax = 127;
  if (fused) std::tie(qmin, qmax) = clamp_of(*fused, *y);
  Node q;
  q.name = n.name;
  q.op_type = "QMatMul";
  q.domain = sdk::int8_ops::kDomain;
  q.inputs = {int8_of(n.inputs[0]), int8_of(n.inputs[1])};
  q.attributes = {Attr::integer("a_zero_point", a->zero_point),
                  Attr::integer("b_zero_point", b->zero_point),
                  Attr::integer("y_zero_point", y->zero_point),
                  Attr::integer("multiplier", m.multiplier),
                  Attr::integer("shift", m.shift),
                  Attr::integer("qmin", qmin),
                  Attr::integer("qmax", qmax)};
  if (fused) mark_fused(*fused, n.name);
  q.outputs = {define_int8(output, *y, n, "QMatMul")};
  add_node(std::move(q));
  return std::nullopt;
}

}  // namespace eulernpu::int8_quantizer
