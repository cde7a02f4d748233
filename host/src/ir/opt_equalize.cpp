// Cross-layer equalization (Nagel et al. 2019, "Data-Free Quantization
// Through Weight Equalization and Bias Correction"; AIMET implements it):
// for two weighted layers with a Relu between them, y = W2 · relu(W1·x + b1),
// scaling output channel i of the first by 1/s_i and input channel i of the
// second by s_i leaves y unchanged (relu(x / s) = relu(x) / s for s > 0).
// With s_i = sqrt(r1_i / r2_i), r1_i = max|W1[i, :]| and r2_i = max|W2[:, i]|,
// both layers' channel ranges become sqrt(r1_i · r2_i): a channel far larger
// than its neighbours no longer takes the per-tensor activation range (and
// per-tensor weight scales) from them.
//
// Pairs: Conv -> Relu -> Conv (the second ungrouped, or depthwise with one
// filter per channel) and Gemm -> Relu -> Gemm (2-D, no transA), each
// intermediate value read only by the next node.
#include <cmath>

#include "ir/graph_edit.hpp"
#include "ir/optimize.hpp"

namespace eulernpu::host::ir {

namespace {

struct Layer {
  int node = -1;
  std::vector<float> w;
  std::vector<int64_t> dims;
  std::vector<float> bias;  // empty if none
  bool gemm = false;
  bool trans_b = false;
  int64_t group = 1;
};

std::optional<Layer> layer_of(const GraphEdit& e, int i) {
  const onnx::NodeProto& n = e.node(i);
  Layer l;
  l.node = i;
  l.gemm = n.op_type() == "Gemm";
  if ((!l.gemm && n.op_type() != "Conv") || !n.domain().empty() || n.input_size() < 2)
    return std::nullopt;
  const auto w = e.floats(n.input(1));
  const onnx::TensorProto* wt = e.initializer(n.input(1));
  if (!w || !wt) return std::nullopt;
  l.w = *w;
  l.dims.assign(wt->dims().begin(), wt->dims().end());
  if (n.input_size() > 2 && !n.input(2).empty()) {
    const auto b = e.floats(n.input(2));
    if (!b) return std::nullopt;
    l.bias = *b;
  }
  if (l.gemm) {
    if (l.dims.size() != 2 || attr_int(n, "transA", 0) != 0) return std::nullopt;
    l.trans_b = attr_int(n, "transB", 0) != 0;
    // Only a bias of one value per column scales with its column.
    const int64_t cols = l.trans_b ? l.dims[0] : l.dims[1];
    if (!l.bias.empty() && static_cast<int64_t>(l.bias.size()) != cols) return std::nullopt;
    if (attr_float(n, "alpha", 1.0f) != 1.0f) return std::nullopt;
  } else {
    if (l.dims.size() < 3) return std::nullopt;
    l.group = attr_int(n, "group", 1);
  }
  return l;
}

int64_t inner(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (size_t d = 2; d < dims.size(); ++d) p *= dims[d];
  return p;
}

// Output channels of the first layer and, per channel, its max |w|.
std::vector<double> out_ranges(const Layer& l) {
  std::vector<double> r;
  if (l.gemm) {
    const int64_t k = l.trans_b ? l.dims[1] : l.dims[0], n = l.trans_b ? l.dims[0] : l.dims[1];
    r.assign(static_cast<size_t>(n), 0.0);
    for (int64_t a = 0; a < k; ++a) {
      for (int64_t j = 0; j < n; ++j) {
        const size_t idx = static_cast<size_t>(l.trans_b ? j * k + a : a * n + j);
        r[static_cast<size_t>(j)] =
            std::max(r[static_cast<size_t>(j)], std::fabs(double{l.w[idx]}));
      }
    }
    return r;
  }
  const int64_t per = static_cast<int64_t>(l.w.size()) / l.dims[0];
  r.assign(static_cast<size_t>(l.dims[0]), 0.0);
  for (int64_t o = 0; o < l.dims[0]; ++o) {
    for (int64_t k = 0; k < per; ++k) {
      r[static_cast<size_t>(o)] = std::max(
          r[static_cast<size_t>(o)], std::fabs(double{l.w[static_cast<size_t>(o * per + k)]}));
    }
  }
  return r;
}

// Input channels of the second layer: max |w| per channel; empty if its
// layout does not give one weight slice per input channel.
std::vector<double> in_ranges(const Layer& l, int64_t channels) {
  std::vector<double> r(static_cast<size_t>(channels), 0.0);
  if (l.gemm) {
    const int64_t k = l.trans_b ? l.dims[1] : l.dims[0], n = l.trans_b ? l.dims[0] : l.dims[1];
    if (k != channels) return {};
    for (int64_t a = 0; a < k; ++a) {
      for (int64_t j = 0; j < n; ++j) {
        const size_t idx = static_cast<size_t>(l.trans_b ? j * k + a : a * n + j);
        r[static_cast<size_t>(a)] =
            std::max(r[static_cast<size_t>(a)], std::fabs(double{l.w[idx]}));
      }
    }
    return r;
  }
  const int64_t kk = inner(l.dims);
  if (l.group == 1 && l.dims[1] == channels) {
    for (int64_t o = 0; o < l.dims[0]; ++o) {
      for (int64_t c = 0; c < channels; ++c) {
        for (int64_t k = 0; k < kk; ++k) {
          const size_t idx = static_cast<size_t>((o * channels + c) * kk + k);
          r[static_cast<size_t>(c)] =
              std::max(r[static_cast<size_t>(c)], std::fabs(double{l.w[idx]}));
        }
      }
    }
    return r;
  }
  if (l.group == channels && l.dims[0] == channels && l.dims[1] == 1) {  // depthwise
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t k = 0; k < kk; ++k) {
        r[static_cast<size_t>(c)] = std::max(
            r[static_cast<size_t>(c)], std::fabs(double{l.w[static_cast<size_t>(c * kk + k)]}));
      }
    }
    return r;
  }
  return {};
}

void scale_out(Layer& l, const std::vector<double>& s) {
  if (l.gemm) {
    const int64_t k = l.trans_b ? l.dims[1] : l.dims[0], n = l.trans_b ? l.dims[0] : l.dims[1];
    for (int64_t a = 0; a < k; ++a) {
      for (int64_t j = 0; j < n; ++j) {
        float& v = l.w[static_cast<size_t>(l.trans_b ? j * k + a : a * n + j)];
        v = static_cast<float>(v / s[static_cast<size_t>(j)]);
      }
    }
  } else {
    const int64_t per = static_cast<int64_t>(l.w.size()) / l.dims[0];
    for (int64_t o = 0; o < l.dims[0]; ++o) {
      for (int64_t k = 0; k < per; ++k) {
        float& v = l.w[static_cast<size_t>(o * per + k)];
        v = static_cast<float>(v / s[static_cast<size_t>(o)]);
      }
    }
  }
  for (size_t c = 0; c < l.bias.size(); ++c) l.bias[c] = static_cast<float>(l.bias[c] / s[c]);
}

void scale_in(Layer& l, const std::vector<double>& s) {
  const auto channels = static_cast<int64_t>(s.size());
  if (l.gemm) {
    const int64_t k = l.trans_b ? l.dims[1] : l.dims[0], n = l.trans_b ? l.dims[0] : l.dims[1];
    for (int64_t a = 0; a < k; ++a) {
      for (int64_t j = 0; j < n; ++j) {
        float& v = l.w[static_cast<size_t>(l.trans_b ? j * k + a : a * n + j)];
        v = static_cast<float>(v * s[static_cast<size_t>(a)]);
      }
    }
    return;
  }
  const int64_t kk = inner(l.dims);
  for (int64_t o = 0; o < l.dims[0]; ++o) {
    for (int64_t c = 0; c < l.dims[1]; ++c) {
      const int64_t channel = l.group == 1 ? c : o;  // depthwise: filter o reads channel o
      if (channel >= channels) continue;
      for (int64_t k = 0; k < kk; ++k) {
        float& v = l.w[static_cast<size_t>((o * l.dims[1] + c) * kk + k)];
        v = static_cast<float>(v * s[static_cast<size_t>(channel)]);
      }
    }
  }
}

onnx::NodeProto rewritten(GraphEdit& e, const Layer& l) {
  onnx::NodeProto q = e.node(l.node);
  const std::string base = q.name().empty() ? q.output(0) : q.name();
  q.set_input(1, e.add_floats(base + ".weight_eq", l.dims, l.w));
  if (!l.bias.empty()) {
    q.set_input(2, e.add_floats(base + ".bias_eq", {static_cast<int64_t>(l.bias.size())}, l.bias));
  }
  return q;
}

}  // namespace

std::vector<AppliedRewrite> equalize_layers(GraphEdit& e) {
  std::vector<AppliedRewrite> done;
  for (int i = 0; i < e.node_count(); ++i) {
    if (e.edited(i)) continue;
    auto first = layer_of(e, i);
    if (!first || e.node(i).output_size() != 1) continue;
    const std::string y1 = e.node(i).output(0);
    if (e.consumers(y1).size() != 1 || e.is_graph_output(y1)) continue;
    const int act = e.consumers(y1)[0];
    const onnx::NodeProto& relu = e.node(act);
    if (relu.op_type() != "Relu" || !relu.domain().empty() || e.edited(act)) continue;
    if (e.consumers(relu.output(0)).size() != 1 || e.is_graph_output(relu.output(0))) continue;
    const int j = e.consumers(relu.output(0))[0];
    if (e.edited(j) || e.node(j).input(0) != relu.output(0)) continue;
    auto second = layer_of(e, j);
    if (!second || second->gemm != first->gemm) continue;
    if (!first->gemm && first->group != 1 && first->group != first->dims[0]) continue;
    const std::vector<double> r1 = out_ranges(*first);
    const std::vector<double> r2 = in_ranges(*second, static_cast<int64_t>(r1.size()));
    if (r2.empty()) continue;
    std::vector<double> s(r1.size(), 1.0);
    bool changes = false;
    for (size_t c = 0; c < s.size(); ++c) {
      // A channel dead on either side keeps its scale.
      if (r1[c] > 0 && r2[c] > 0) s[c] = std::sqrt(r1[c] / r2[c]);
      changes |= std::fabs(s[c] - 1.0) > 1e-3;
    }
    if (!changes) continue;
    scale_out(*first, s);
    scale_in(*second, s);
    e.replace(i, {rewritten(e, *first)});
    e.replace(j, {rewritten(e, *second)});
    done.push_back({"equalize", e.node(i).name(),
                    "channels balanced with '" + e.node(j).name() + "' across its Relu"});
  }
  return done;
}

}  // namespace eulernpu::host::ir
