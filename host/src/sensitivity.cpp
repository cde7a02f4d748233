#include "sensitivity.hpp"

#include "quantize.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "artifact.hpp"
#include "error.hpp"
#include "model.hpp"

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

double outputs_sqnr_db(const std::vector<std::vector<Tensor>>& reference,
                       const std::vector<std::vector<Tensor>>& got) {
  double signal = 0, noise = 0;
  for (size_t s = 0; s < reference.size() && s < got.size(); ++s) {
    for (size_t t = 0; t < reference[s].size() && t < got[s].size(); ++t) {
      const Tensor& a = reference[s][t];
      const Tensor& b = got[s][t];
      if (a.dtype != DType::kFloat32 || b.dtype != DType::kFloat32 ||
          a.data.size() != b.data.size()) {
        continue;
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
  }
  if (noise == 0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

std::vector<double> measure_sensitivity(const LoadedPlugin& reference, const KeyValues& options,
                                        const SwitchedModel& switched,
                                        const std::vector<Tensor>& batch) {
  const Artifact artifact = Artifact::from_files(lower(reference, switched.model, options));
  auto run_with = [&](size_t on) {
    std::vector<Tensor> inputs = batch;
    for (size_t i = 0; i < switched.switches.size(); ++i) {
      if (!switched.switchable[i]) continue;
      Tensor t;
      t.name = switched.switches[i];
      t.dtype = DType::kBool;
      t.data = {static_cast<uint8_t>(i == on ? 1 : 0)};
      inputs.push_back(std::move(t));
    }
    return std::vector<std::vector<Tensor>>{run_artifact(reference, artifact, options, inputs)};
  };
  const auto expected = run_with(switched.switches.size());  // every switch off
  std::vector<double> out(switched.switches.size(), std::numeric_limits<double>::quiet_NaN());
  for (size_t i = 0; i < switched.switches.size(); ++i) {
    if (switched.switchable[i]) out[i] = outputs_sqnr_db(expected, run_with(i));
  }
  return out;
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

std::vector<double> value_sensitivity(const LoadedPlugin& reference, const KeyValues& options,
                                      const onnx::ModelProto& float_model,
                                      const std::vector<FakeQuantValue>& values,
                                      const std::string& source,
                                      const std::vector<std::vector<Tensor>>& samples) {
  if (samples.empty()) {
    return std::vector<double>(values.size(), std::numeric_limits<double>::quiet_NaN());
  }
  if (samples.size() > 1) {
    try {
      const onnx::ModelProto batched =
          at_batch(float_model, source, static_cast<int64_t>(samples.size()));
      return measure_sensitivity(reference, options, with_fake_quant_switches(batched, values),
                                 stack_samples(samples));
    } catch (const UserError&) {
      // A graph that cannot run at another batch (a batch-1 constant
      // concatenated with the data, as tf2onnx writes them): the first
      // sample alone, at the model's own batch.
    }
  }
  const std::vector<std::vector<Tensor>> first(samples.begin(), samples.begin() + 1);
  return measure_sensitivity(reference, options, with_fake_quant_switches(float_model, values),
                             stack_samples(first));
}

}  // namespace eulernpu::host
