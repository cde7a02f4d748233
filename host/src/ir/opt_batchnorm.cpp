// BatchNormalization (inference form) into the Conv, ConvTranspose or Gemm
// before it, and a BatchNormalization with no such producer into Mul + Add.
//
// With s = scale / sqrt(var + epsilon), BN(y) = (y - mean) · s + B per
// channel, so a producer y = W·x + b becomes W' = W · s (per output channel)
// and b' = (b - mean) · s + B. Computed in float64, stored as float32.
#include <cmath>

#include "ir/graph_edit.hpp"
#include "ir/optimize.hpp"

namespace eulernpu::host::ir {

namespace {

struct BnParams {
  std::vector<double> scale, shift;  // y · scale + shift per channel
};

// The per-channel affine form of BN node `bn`; nullopt if its parameters are
// not float32 constants of one value per channel, or it is not the
// inference form.
std::optional<BnParams> bn_params(const GraphEdit& e, const onnx::NodeProto& bn) {
  if (bn.input_size() != 5 || bn.output_size() != 1) return std::nullopt;
  if (attr_int(bn, "training_mode", 0) != 0 || attr_int(bn, "spatial", 1) != 1) return std::nullopt;
  const auto gamma = e.floats(bn.input(1)), beta = e.floats(bn.input(2)),
             mean = e.floats(bn.input(3)), var = e.floats(bn.input(4));
  if (!gamma || !beta || !mean || !var) return std::nullopt;
  const size_t c = gamma->size();
  if (c == 0 || beta->size() != c || mean->size() != c || var->size() != c) return std::nullopt;
  const double eps = attr_float(bn, "epsilon", 1e-5f);
  BnParams p;
  for (size_t i = 0; i < c; ++i) {
    const double s = (*gamma)[i] / std::sqrt(static_cast<double>((*var)[i]) + eps);
    if (!std::isfinite(s)) return std::nullopt;
    p.scale.push_back(s);
    p.shift.push_back((*beta)[i] - (*mean)[i] * s);
  }
  return p;
}

std::vector<float> narrowed(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());
}

// Conv / ConvTranspose / Gemm `p` followed by the BN: the replacement
// producer, writing the BN's output; nullopt if `p` cannot absorb it.
std::optional<onnx::NodeProto> absorb(GraphEdit& e, const onnx::NodeProto& p, const BnParams& bn,
                                      const std::string& out) {
  const auto w = e.floats(p.input(1));
  const onnx::TensorProto* wt = e.initializer(p.input(1));
  if (!w || !wt) return std::nullopt;
  const std::vector<int64_t> dims(wt->dims().begin(), wt->dims().end());
  const auto channels = static_cast<int64_t>(bn.scale.size());
  std::vector<double> bias(static_cast<size_t>(channels), 0.0);
  const std::string bias_name = p.input_size() > 2 ? p.input(2) : "";
  std::vector<float> w2 = *w;
  onnx::NodeProto q = p;
  if (p.op_type() == "Conv" || p.op_type() == "ConvTranspose") {
    if (dims.size() < 3) return std::nullopt;
    const int64_t group = attr_int(p, "group", 1);
    // Conv W is (O, C/g, k...); ConvTranspose W is (C, O/g, k...).
    const bool transposed = p.op_type() == "ConvTranspose";
    const int64_t out_channels = transposed ? dims[1] * group : dims[0];
    if (out_channels != channels || group <= 0 || (transposed && dims[0] % group != 0))
      return std::nullopt;
    int64_t inner = 1;
    for (size_t d = 2; d < dims.size(); ++d) inner *= dims[d];
    for (int64_t a = 0; a < dims[0]; ++a) {
      for (int64_t b = 0; b < dims[1]; ++b) {
        const int64_t o = transposed ? (a / (dims[0] / group)) * dims[1] + b : a;
        const double s = bn.scale[static_cast<size_t>(o)];
        for (int64_t k = 0; k < inner; ++k) {
          float& v = w2[static_cast<size_t>((a * dims[1] + b) * inner + k)];
          v = static_cast<float>(v * s);
        }
      }
    }
    if (!bias_name.empty()) {
      const auto b = e.floats(bias_name);
      if (!b || b->size() != static_cast<size_t>(channels)) return std::nullopt;
      bias.assign(b->begin(), b->end());
    }
  } else {  // Gemm: Y = alpha · A·op(B) + beta · C, BN over Y's columns
    if (dims.size() != 2 || attr_int(p, "transA", 0) != 0) return std::nullopt;
    const bool trans_b = attr_int(p, "transB", 0) != 0;
    const int64_t cols = trans_b ? dims[0] : dims[1];
    if (cols != channels) return std::nullopt;
    for (int64_t r = 0; r < dims[0]; ++r) {
      for (int64_t c = 0; c < dims[1]; ++c) {
        float& v = w2[static_cast<size_t>(r * dims[1] + c)];
        v = static_cast<float>(v * bn.scale[static_cast<size_t>(trans_b ? r : c)]);
      }
    }
    const double beta = attr_float(p, "beta", 1.0f);
    if (!bias_name.empty()) {
      const auto b = e.floats(bias_name);
      if (!b || (b->size() != 1 && b->size() != static_cast<size_t>(channels))) return std::nullopt;
      // Only a bias per column (or one for all) folds: C must not vary by row.
      const auto ct = e.type(bias_name);
      if (b->size() != 1 && ct && ct->second.size() == 2 && ct->second[0] != 1) return std::nullopt;
      for (size_t c = 0; c < bias.size(); ++c) bias[c] = beta * (*b)[b->size() == 1 ? 0 : c];
    }
    // The new C is already scaled: beta becomes 1.
    q.clear_attribute();
    for (const auto& a : p.attribute()) {
      if (a.name() != "beta") *q.add_attribute() = a;
    }
  }
  for (size_t c = 0; c < bias.size(); ++c) bias[c] = bias[c] * bn.scale[c] + bn.shift[c];
  const std::string name = p.name().empty() ? out : p.name();
  q.set_input(1, e.add_floats(name + ".weight_bn", dims, w2));
  const std::string b = e.add_floats(name + ".bias_bn", {channels}, narrowed(bias));
  if (q.input_size() > 2) {
    q.set_input(2, b);
  } else {
    q.add_input(b);
  }
  q.set_output(0, out);
  return q;
}

}  // namespace

std::vector<AppliedRewrite> fold_batchnorm(GraphEdit& e) {
  std::vector<AppliedRewrite> done;
  for (int i = 0; i < e.node_count(); ++i) {
    const onnx::NodeProto& bn = e.node(i);
    if (bn.op_type() != "BatchNormalization" || !bn.domain().empty() || e.edited(i)) continue;
    const auto params = bn_params(e, bn);
    if (!params) continue;
    const int p = e.producer(bn.input(0));
    if (p >= 0 && !e.edited(p) && e.only_read_by(bn.input(0), i)) {
      const onnx::NodeProto& prod = e.node(p);
      const bool weighted = prod.domain().empty() &&
                            (prod.op_type() == "Conv" || prod.op_type() == "ConvTranspose" ||
                             prod.op_type() == "Gemm") &&
                            prod.output_size() == 1;
      if (weighted) {
        if (auto q = absorb(e, prod, *params, bn.output(0))) {
          e.replace(p, {*q});
          e.remove(i);
          done.push_back({"fold-batchnorm", bn.name(),
                          "folded into " + prod.op_type() + " '" + prod.name() + "'"});
          continue;
        }
      }
    }
    // No producer to absorb it: the same affine map as Mul + Add, which int8
    // has (QMul, QAdd), with constants broadcast over the channel axis 1.
    const auto x = e.type(bn.input(0));
    if (!x || x->first != onnx::TensorProto::FLOAT || x->second.size() < 2) continue;
    std::vector<int64_t> dims(x->second.size() - 1, 1);
    dims[0] = static_cast<int64_t>(params->scale.size());
    if (x->second[1] >= 0 && x->second[1] != dims[0]) continue;
    const std::string base = bn.name().empty() ? bn.output(0) : bn.name();
    const std::string s = e.add_floats(base + ".scale", dims, narrowed(params->scale));
    const std::string t = e.add_floats(base + ".shift", dims, narrowed(params->shift));
    const std::string mid = e.unique(base + ".scaled");
    e.replace(i, {make_node("Mul", e.unique(base + ".mul"), {bn.input(0), s}, mid),
                  make_node("Add", e.unique(base + ".add"), {mid, t}, bn.output(0))});
    done.push_back({"batchnorm-to-affine", bn.name(), "Mul + Add per channel"});
  }
  return done;
}

}  // namespace eulernpu::host::ir
