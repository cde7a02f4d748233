#include "rewrite.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tables.hpp"

namespace eulernpu::int8_quantizer {

namespace qm = sdk::qmath;

bool is_matrix_op(const std::string& op) {
  return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul";
}

bool is_elementwise_op(const std::string& op) { return op == "Add" || op == "Sub" || op == "Mul"; }

bool is_pooling_op(const std::string& op) {
  return op == "AveragePool" || op == "GlobalAveragePool" || op == "Concat";
}

QParams to_qparams(const QuantParams& p) {
  return {static_cast<double>(static_cast<float>(p.scale)), p.zero_point};
}

Rewriter::Rewriter(const OwnedGraph& source, std::map<std::string, QParams> calibrated,
                   RewriteSettings settings)
    : src_(source), calibrated_(std::move(calibrated)), settings_(std::move(settings)) {
  for (size_t i = 0; i < src_.nodes.size(); ++i) {
    const Node& n = src_.nodes[i];
    for (const auto& in : n.inputs) {
      if (!in.empty()) consumers_[in].push_back(i);
    }
    for (const auto& o : n.outputs) used_names_.insert(o);
    for (const auto& in : n.inputs) used_names_.insert(in);
  }
  for (const auto& [name, t] : src_.inputs) {
    used_names_.insert(name);
    float_ready_.insert(name);
  }
  for (const auto& [name, t] : src_.outputs) graph_outputs_.insert(name);
  for (const auto& [name, t] : src_.initializers) {
    used_names_.insert(name);
    float_ready_.insert(name);
  }
}

std::string Rewriter::unique(const std::string& hint) {
  std::string name = hint;
  for (int k = 2; used_names_.count(name); ++k) name = hint + "_" + std::to_string(k);
  used_names_.insert(name);
  return name;
}

bool Rewriter::is_float_activation(const std::string& name) const {
  if (name.empty() || src_.initializer(name)) return false;
  const ValueType* t = src_.type(name);
  return t && t->dtype == ENP_DTYPE_FLOAT32;
}

std::optional<QParams> Rewriter::params_of(const std::string& name) const {
  if (const auto it = int8_params_.find(name); it != int8_params_.end()) return it->second;
  if (const auto it = calibrated_.find(name); it != calibrated_.end()) return it->second;
  return std::nullopt;
}

std::string Rewriter::int8_of(const std::string& name) {
  if (const auto it = int8_name_.find(name); it != int8_name_.end()) return it->second;
  const QParams p = *params_of(name);
  const float scale = static_cast<float>(p.scale);
  const auto zp = static_cast<int8_t>(p.zero_point);
  Node q;
  q.op_type = "QuantizeLinear";
  q.name = unique(name + ".quantize");
  q.inputs = {float_of(name), add_initializer(name + "_scale", ENP_DTYPE_FLOAT32, {}, &scale, 4),
              add_initializer(name + "_zero_point", ENP_DTYPE_INT8, {}, &zp, 1)};
  q.outputs = {unique(name + "_int8")};
  int8_name_[name] = q.outputs[0];
  int8_params_[name] = p;
  values_.push_back({{"int8", q.outputs[0]},
                     {"float", name},
                     {"scale", p.scale},
                     {"zero_point", p.zero_point},
                     {"node", q.name},
                     {"op", "QuantizeLinear"}});
  note_method(name);
  const std::string out = q.outputs[0];
  add_node(std::move(q));
  return out;
}

std::string Rewriter::float_of(const std::string& name) {
  if (float_ready_.count(name)) return name;
  const auto it = int8_name_.find(name);
  if (it == int8_name_.end()) return name;  // not float32 (an index, a shape): passes as is
  const QParams p = int8_params_.at(name);
  const float scale = static_cast<float>(p.scale);
  const auto zp = static_cast<int8_t>(p.zero_point);
  Node d;
  d.op_type = "DequantizeLinear";
  d.name = unique(name + ".dequantize");
  d.inputs = {it->second, add_initializer(name + "_scale", ENP_DTYPE_FLOAT32, {}, &scale, 4),
              add_initializer(name + "_zero_point", ENP_DTYPE_INT8, {}, &zp, 1)};
  d.outputs = {name};
  float_ready_.insert(name);
  add_node(std::move(d));
  return name;
}

std::optional<std::pair<std::string, QParams>> Rewriter::int8_constant(const std::string& name) {
  const sdk::OwnedTensor* t = src_.initializer(name);
  if (!t || t->dtype != ENP_DTYPE_FLOAT32) return std::nullopt;
  const std::vector<float> v = float_values(*t);
  TensorObserver obs;
  obs.observe(v);
  if (!std::isfinite(obs.min()) || !std::isfinite(obs.max())) return std::nullopt;
  const QParams p = to_qparams(activation_params(choose_range(obs, Method::kMinMax)));
  std::vector<int8_t> q(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const double c = qm::round_half_even(v[i] / p.scale) + p.zero_point;
    q[i] = static_cast<int8_t>(std::clamp(c, -128.0, 127.0));
  }
  return std::make_pair(add_int8s(name + "_int8", t->dims, q), p);
}

void Rewriter::note_method(const std::string& float_name) {
  const auto it = settings_.value_methods.find(float_name);
  if (it != settings_.value_methods.end()) values_.back()["calibration"] = it->second;
}

std::string Rewriter::define_int8(const std::string& float_name, QParams p, const Node& node,
                                  const std::string& op) {
  const std::string name = unique(float_name + "_int8");
  int8_name_[float_name] = name;
  int8_params_[float_name] = p;
  values_.push_back({{"int8", name},
                     {"float", float_name},
                     {"scale", p.scale},
                     {"zero_point", p.zero_point},
                     {"node", node.name},
                     {"op", op}});
  note_method(float_name);
  return name;
}

std::string Rewriter::add_initializer(const std::string& hint, int32_t dtype,
                                      std::vector<int64_t> dims, const void* data, size_t bytes) {
  sdk::OwnedTensor t;
  t.name = unique(hint);
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.bytes.resize(bytes);
  if (bytes) std::memcpy(t.bytes.data(), data, bytes);
  const std::string name = t.name;
  out_.initializers.emplace(name, std::move(t));
  return name;
}

std::string Rewriter::add_int32s(const std::string& hint, const std::vector<int32_t>& v) {
  return add_initializer(hint, ENP_DTYPE_INT32, {static_cast<int64_t>(v.size())}, v.data(),
                         v.size() * sizeof(int32_t));
}

std::string Rewriter::add_int8s(const std::string& hint, std::vector<int64_t> dims,
                                const std::vector<int8_t>& v) {
  return add_initializer(hint, ENP_DTYPE_INT8, std::move(dims), v.data(), v.size());
}

const std::vector<size_t>& Rewriter::consumers(const std::string& value) const {
  static const std::vector<size_t> kNone;
  const auto it = consumers_.find(value);
  return it == consumers_.end() ? kNone : it->second;
}

bool Rewriter::is_graph_output(const std::string& value) const {
  return graph_outputs_.count(value) != 0;
}

bool Rewriter::per_tensor(const Node& n) const {
  return settings_.per_tensor_weights || settings_.per_tensor_nodes.count(n.name);
}

std::optional<size_t> Rewriter::fusable_activation(const std::string& value) const {
  const auto& readers = consumers(value);
  if (readers.size() != 1 || is_graph_output(value)) return std::nullopt;
  const Node& n = src_.nodes[readers[0]];
  if (!n.domain.empty() || settings_.keep_fp32.count(n.name)) return std::nullopt;
  if (n.op_type == "Relu" || (n.op_type == "Clip" && clip_bounds(n, src_))) {
    if (!params_of(n.outputs[0])) return std::nullopt;
    return readers[0];
  }
  return std::nullopt;
}

std::pair<int32_t, int32_t> Rewriter::clamp_of(size_t index, QParams p) const {
  const Node& n = src_.nodes[index];
  double lo = 0, hi = INFINITY;
  if (n.op_type == "Clip") std::tie(lo, hi) = *clip_bounds(n, src_);
  auto code = [&](double v) {
    if (std::isinf(v)) return v < 0 ? -128.0 : 127.0;
    return std::clamp(qm::round_half_even(v / p.scale) + p.zero_point, -128.0, 127.0);
  };
  return {static_cast<int32_t>(code(lo)), static_cast<int32_t>(code(hi))};
}

void Rewriter::mark_fused(size_t index, const std::string& into) {
  fused_.insert(index);
  fused_json_.push_back(
      {{"node", src_.nodes[index].name}, {"op", src_.nodes[index].op_type}, {"into", into}});
}

void Rewriter::define_float_output(const std::string& name, const Node& node,
                                   const std::string& how) {
  float_ready_.insert(name);
  float_outputs_json_.push_back({{"node", node.name}, {"op", node.op_type}, {"as", how}});
}

void Rewriter::keep_float(size_t index, const std::string& reason) {
  Node n = src_.nodes[index];
  for (auto& in : n.inputs) {
    if (!in.empty()) in = float_of(in);
  }
  for (const auto& o : n.outputs) float_ready_.insert(o);
  bool computes_float = false;
  for (const auto& v : n.inputs) computes_float |= is_float_activation(v);
  for (const auto& v : n.outputs) computes_float |= is_float_activation(v);
  if (computes_float) {
    float_nodes_.push_back({{"node", n.name}, {"op", n.op_type}, {"reason", reason}});
  }
  add_node(std::move(n));
}

Rewriter::Reason Rewriter::quantize_node(size_t index) {
  const Node& n = src_.nodes[index];
  if (settings_.keep_fp32.count(n.name)) return "kept in float32 by the config";
  // A Relu/Clip is part of the layer before it (it would fuse into it), so
  // it stays float32 with that layer.
  if ((n.op_type == "Relu" || n.op_type == "Clip") && consumers(n.input(0)).size() == 1) {
    for (const Node& p : src_.nodes) {
      if (settings_.keep_fp32.count(p.name) &&
          std::find(p.outputs.begin(), p.outputs.end(), n.input(0)) != p.outputs.end()) {
        return "follows " + p.name + ", kept in float32 by the config";
      }
    }
  }
  if (!n.domain.empty() && n.domain != "ai.onnx") {
    return "domain '" + n.domain + "' has no int8 form";
  }
  if (islands_.count(index)) {
    return "float32 nodes enclose it and no matrix op: int8 would only add rounding";
  }
  if (auto handled = pointwise_region(index)) return *handled;
  const std::string& op = n.op_type;
  if (is_matrix_op(op)) return linear(index);
  if (is_elementwise_op(op)) return elementwise(index);
  if (is_pooling_op(op)) return pooling(index);
  if (is_movement_op(op)) return movement(index);
  return unary(index);
}

void Rewriter::note_rounding(const std::string& node, const RoundingResult& r) {
  // The errors relative to nearest's: a ratio reads the same at any scale.
  rounding_json_.push_back(
      {{"node", node},
       {"flipped", r.flipped},
       {"error_vs_nearest", r.nearest_error > 0 ? r.adaptive_error / r.nearest_error : 1.0}});
}

OwnedGraph Rewriter::run() {
  out_.name = src_.name;
  out_.inputs = src_.inputs;
  out_.outputs = src_.outputs;
  out_.opsets = src_.opsets;
  out_.opsets[std::string(sdk::int8_ops::kDomain)] = sdk::int8_ops::kOpsetVersion;
  out_.metadata = src_.metadata;
  islands_ = enclosed_islands(src_, settings_);
  float_read_ = float_read_values(src_, settings_);
  // Initializers the float part still reads are copied at the end.
  for (size_t i = 0; i < src_.nodes.size(); ++i) {
    if (fused_.count(i)) continue;
    if (Reason why = quantize_node(i)) keep_float(i, *why);
  }
  for (const auto& [name, t] : src_.outputs) {
    const std::string f = float_of(name);
    (void)f;
  }
  // Copy the float initializers some remaining node reads.
  std::set<std::string> read;
  for (const Node& n : out_.nodes) read.insert(n.inputs.begin(), n.inputs.end());
  for (const auto& [name, t] : src_.initializers) {
    if (read.count(name) && !out_.initializers.count(name)) out_.initializers.emplace(name, t);
  }
  out_.metadata["eulernpu.quantization"] =
      nlohmann::json{{"format", 1},
                     {"method", settings_.method},
                     {"values", values_},
                     {"float_nodes", float_nodes_},
                     {"fused", fused_json_},
                     {"tables", region_json_},
                     {"float_outputs", float_outputs_json_},
                     {"rounding", {{"method", settings_.rounding}, {"layers", rounding_json_}}}}
          .dump();
  return std::move(out_);
}

}  // namespace eulernpu::int8_quantizer
