#include "quant/sensitivity.hpp"

#include "quant/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "core/error.hpp"
#include "formats/artifact.hpp"
#include "ir/finalize.hpp"

namespace eulernpu::host {

namespace {

onnx::TensorProto scalar(const std::string& name, int type, double v) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  if (type == onnx::TensorProto::FLOAT) {
    t.add_float_data(static_cast<float>(v));
  } else {
    t.add_int32_data(static_cast<int32_t>(v));
  }
  return t;
}

onnx::NodeProto node(const std::string& name, const std::string& op,
                     std::vector<std::string> inputs, const std::string& output) {
  onnx::NodeProto n;
  n.set_name(name);
  n.set_op_type(op);
  for (auto& i : inputs) n.add_input(std::move(i));
  n.add_output(output);
  return n;
}

// Whether every data input of `batched` takes the samples stacked along
// its first dimension. An input that keeps its own first size (an LSTM
// state of (2, batch, hidden)) does not: its samples cannot be stacked.
bool follows_batch(const onnx::ModelProto& batched,
                   const std::vector<std::vector<Tensor>>& samples) {
  std::set<std::string> weights;
  for (const auto& t : batched.graph().initializer()) weights.insert(t.name());
  for (const auto& v : batched.graph().input()) {
    if (weights.count(v.name())) continue;
    const auto& shape = v.type().tensor_type().shape();
    if (shape.dim_size() == 0 || !shape.dim(0).has_dim_value() ||
        shape.dim(0).dim_value() != static_cast<int64_t>(samples.size())) {
      return false;
    }
  }
  return true;
}

}  // namespace

SwitchedModel with_fake_quant_switches(const onnx::ModelProto& model,
                                       const std::vector<FakeQuantValue>& values) {
  SwitchedModel out;
  out.model = model;
  onnx::GraphProto& g = *out.model.mutable_graph();
  std::set<std::string> inputs, produced;
  for (const auto& v : g.input()) inputs.insert(v.name());
  for (const auto& n : g.node()) produced.insert(n.output().begin(), n.output().end());
  for (const FakeQuantValue& v : values) {
    const std::string sw = v.name + "__fq_switch";
    out.switches.push_back(sw);
    const bool is_input = inputs.count(v.name) && !produced.count(v.name);
    out.switchable.push_back(is_input || produced.count(v.name));
    if (!out.switchable.back()) continue;
    // The original value keeps flowing under `raw`; `v.name` becomes the
    // switch's choice, so every reader (and a graph output) sees it.
    const std::string raw = v.name + "__fq_raw";
    if (is_input) {
      for (auto& n : *g.mutable_node()) {
        for (auto& i : *n.mutable_input()) {
          if (i == v.name) i = raw;
        }
      }
    } else {
      for (auto& n : *g.mutable_node()) {
        for (auto& o : *n.mutable_output()) {
          if (o == v.name) o = raw;
        }
      }
    }
    const std::string src = is_input ? v.name : raw;
    const std::string dst = is_input ? raw : v.name;
    *g.add_initializer() = scalar(v.name + "__fq_scale", onnx::TensorProto::FLOAT, v.scale);
    *g.add_initializer() =
        scalar(v.name + "__fq_zero_point", onnx::TensorProto::INT8, v.zero_point);
    *g.add_node() =
        node(v.name + "__fq_q", "QuantizeLinear",
             {src, v.name + "__fq_scale", v.name + "__fq_zero_point"}, v.name + "__fq_int8");
    *g.add_node() = node(v.name + "__fq_dq", "DequantizeLinear",
                         {v.name + "__fq_int8", v.name + "__fq_scale", v.name + "__fq_zero_point"},
                         v.name + "__fq");
    *g.add_node() = node(v.name + "__fq_where", "Where", {sw, v.name + "__fq", src}, dst);
    auto* in = g.add_input();
    in->set_name(sw);
    in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
    in->mutable_type()->mutable_tensor_type()->mutable_shape();  // a scalar
  }
  // Sorting and typing the new nodes is finalize_model's job.
  g.clear_value_info();
  finalize_model(out.model, "the float model with fake-quantization switches");
  return out;
}

namespace {

// Adds Σ f² and Σ (f - g)² of two float32 tensors (finite f only) to
// `signal` and `noise`; other dtypes or sizes add nothing.
void add_sqnr_sums(const Tensor& a, const Tensor& b, double& signal, double& noise) {
  if (a.dtype != DType::kFloat32 || b.dtype != DType::kFloat32 || a.data.size() != b.data.size()) {
    return;
  }
  const size_t n = a.data.size() / 4;
  for (size_t i = 0; i < n; ++i) {
    float f = 0, x = 0;
    std::memcpy(&f, a.data.data() + 4 * i, 4);
    std::memcpy(&x, b.data.data() + 4 * i, 4);
    if (!std::isfinite(f)) continue;
    const double d = static_cast<double>(f) - x;
    signal += static_cast<double>(f) * f;
    noise += d * d;
  }
}

double sqnr_of(double signal, double noise) {
  if (noise == 0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

}  // namespace

double outputs_sqnr_db(const std::vector<std::vector<Tensor>>& reference,
                       const std::vector<std::vector<Tensor>>& got) {
  double signal = 0, noise = 0;
  for (size_t s = 0; s < reference.size() && s < got.size(); ++s) {
    for (size_t t = 0; t < reference[s].size() && t < got[s].size(); ++t) {
      add_sqnr_sums(reference[s][t], got[s][t], signal, noise);
    }
  }
  return sqnr_of(signal, noise);
}

double worst_output_sqnr_db(const std::vector<std::vector<Tensor>>& reference,
                            const std::vector<std::vector<Tensor>>& got) {
  size_t outputs = 0;
  for (const auto& r : reference) outputs = std::max(outputs, r.size());
  double worst = std::numeric_limits<double>::infinity();
  for (size_t t = 0; t < outputs; ++t) {
    double signal = 0, noise = 0;
    for (size_t s = 0; s < reference.size() && s < got.size(); ++s) {
      if (t < reference[s].size() && t < got[s].size()) {
        add_sqnr_sums(reference[s][t], got[s][t], signal, noise);
      }
    }
    worst = std::min(worst, sqnr_of(signal, noise));
  }
  return worst;
}

std::vector<Tensor> stack_samples(const std::vector<std::vector<Tensor>>& samples) {
  std::vector<Tensor> out;
  if (samples.empty()) return out;
  out = samples[0];
  for (size_t j = 0; j < out.size(); ++j) {
    if (!out[j].shape.empty()) out[j].shape[0] = static_cast<int64_t>(samples.size());
    for (size_t s = 1; s < samples.size(); ++s) {
      const auto& d = samples[s][j].data;
      out[j].data.insert(out[j].data.end(), d.begin(), d.end());
    }
  }
  return out;
}

FakeQuantRunner::FakeQuantRunner(const LoadedPlugin& reference, KeyValues options,
                                 const onnx::ModelProto& float_model,
                                 const std::vector<FakeQuantValue>& values,
                                 const std::string& source,
                                 const std::vector<std::vector<Tensor>>& samples)
    : reference_(reference), options_(std::move(options)) {
  if (samples.size() > 1) {
    try {
      const onnx::ModelProto batched =
          at_batch(float_model, source, static_cast<int64_t>(samples.size()));
      if (follows_batch(batched, samples)) {
        switched_ = with_fake_quant_switches(batched, values);
        artifact_.emplace(Artifact::from_files(lower(reference_, switched_.model, options_)));
        batches_ = {stack_samples(samples)};
        return;
      }
    } catch (const UserError&) {
      // A graph that cannot run at another batch (a batch-1 constant
      // concatenated with the data, as tf2onnx writes them): below.
    }
  }
  // One run per sample at the model's own batch: the same figures, more
  // runs.
  switched_ = with_fake_quant_switches(float_model, values);
  artifact_.emplace(Artifact::from_files(lower(reference_, switched_.model, options_)));
  batches_ = samples;
}

std::vector<std::vector<Tensor>> FakeQuantRunner::run(const std::vector<bool>& on) const {
  std::vector<std::vector<Tensor>> got;
  for (const auto& batch : batches_) {
    std::vector<Tensor> inputs = batch;
    for (size_t i = 0; i < switched_.switches.size(); ++i) {
      if (!switched_.switchable[i]) continue;
      Tensor t;
      t.name = switched_.switches[i];
      t.dtype = DType::kBool;
      t.data = {static_cast<uint8_t>(i < on.size() && on[i] ? 1 : 0)};
      inputs.push_back(std::move(t));
    }
    got.push_back(run_artifact(reference_, *artifact_, options_, inputs));
  }
  return got;
}

std::vector<double> value_sensitivity(const LoadedPlugin& reference, const KeyValues& options,
                                      const onnx::ModelProto& float_model,
                                      const std::vector<FakeQuantValue>& values,
                                      const std::string& source,
                                      const std::vector<std::vector<Tensor>>& samples) {
  std::vector<double> out(values.size(), std::numeric_limits<double>::quiet_NaN());
  if (samples.empty()) return out;
  const FakeQuantRunner runner(reference, options, float_model, values, source, samples);
  const auto expected = runner.run({});  // every switch off
  for (size_t i = 0; i < values.size(); ++i) {
    if (!runner.switchable(i)) continue;
    std::vector<bool> on(values.size(), false);
    on[i] = true;
    out[i] = outputs_sqnr_db(expected, runner.run(on));
  }
  return out;
}

}  // namespace eulernpu::host
