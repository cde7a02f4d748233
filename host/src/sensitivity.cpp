#include "sensitivity.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "model.hpp"

namespace eulernpu::host {

onnx::ModelProto with_fake_quant(const onnx::ModelProto& model, const std::string& value,
                                 double scale, int32_t zero_point) {
  onnx::ModelProto m = model;
  onnx::GraphProto& g = *m.mutable_graph();
  const std::string raw = value + "__before_fake_quant";
  bool found = false;
  // The producer writes `raw`; Q/DQ turn it back into `value`, so every
  // reader (and a graph output of that name) sees the quantized value.
  for (auto& n : *g.mutable_node()) {
    for (auto& o : *n.mutable_output()) {
      if (o == value) {
        o = raw;
        found = true;
      }
    }
  }
  if (!found) {
    // A graph input: its readers take the fake-quantized copy instead.
    for (auto& n : *g.mutable_node()) {
      for (auto& i : *n.mutable_input()) {
        if (i == value) {
          i = raw;
          found = true;
        }
      }
    }
    if (!found) return {};
    // Q/DQ read the input under its own name and write `raw`.
  }
  const bool is_input = [&] {
    for (const auto& v : g.input()) {
      if (v.name() == value) return true;
    }
    return false;
  }();
  const std::string src = is_input ? value : raw;
  const std::string dst = is_input ? raw : value;
  auto* s = g.add_initializer();
  s->set_name(value + "__fq_scale");
  s->set_data_type(onnx::TensorProto::FLOAT);
  s->add_float_data(static_cast<float>(scale));
  auto* z = g.add_initializer();
  z->set_name(value + "__fq_zero_point");
  z->set_data_type(onnx::TensorProto::INT8);
  z->add_int32_data(zero_point);
  auto* q = g.add_node();
  q->set_name(value + "__fake_quantize");
  q->set_op_type("QuantizeLinear");
  q->add_input(src);
  q->add_input(s->name());
  q->add_input(z->name());
  q->add_output(value + "__fq_int8");
  auto* dq = g.add_node();
  dq->set_name(value + "__fake_dequantize");
  dq->set_op_type("DequantizeLinear");
  dq->add_input(value + "__fq_int8");
  dq->add_input(s->name());
  dq->add_input(z->name());
  dq->add_output(dst);
  // Sorting and typing the new nodes is finalize_model's job.
  g.clear_value_info();
  finalize_model(m, "the float model with '" + value + "' quantized");
  return m;
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
        float f = 0, g = 0;
        std::memcpy(&f, a.data.data() + 4 * i, 4);
        std::memcpy(&g, b.data.data() + 4 * i, 4);
        if (!std::isfinite(f)) continue;
        signal += static_cast<double>(f) * f;
        noise += (static_cast<double>(f) - g) * (static_cast<double>(f) - g);
      }
    }
  }
  if (noise == 0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

}  // namespace eulernpu::host
