// A zero Pad of the spatial dims into the Conv that alone reads it:
//   Conv(Pad(x, pads, 0)) -> Conv(x) with the Pad's pads added to its own.
// tf2onnx writes TensorFlow's asymmetric "SAME" padding of a strided conv
// this way (M-LSD has three, before its stride-2 depthwise convs); the Pad
// then writes a padded copy of the whole map that the Conv reads once.
// The Conv's own padding reads the same zeros, so the outputs are the
// same values (ONNX Runtime's PadFusion does the same); a Pad of -0 stays,
// since the Conv's zeros are +0.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ir/graph_edit.hpp"
#include "ir/optimize.hpp"

namespace eulernpu::host::ir {

namespace {

// The values of an int64 initializer; nullopt if `name` is not one.
std::optional<std::vector<int64_t>> int64s(const GraphEdit& e, const std::string& name) {
  const onnx::TensorProto* t = e.initializer(name);
  if (!t || t->data_type() != onnx::TensorProto::INT64 || t->has_data_location()) {
    return std::nullopt;
  }
  if (t->int64_data_size() > 0)
    return std::vector<int64_t>(t->int64_data().begin(), t->int64_data().end());
  const std::string& raw = t->raw_data();
  if (raw.size() % sizeof(int64_t) != 0) return std::nullopt;
  std::vector<int64_t> v(raw.size() / sizeof(int64_t));
  if (!v.empty()) std::memcpy(v.data(), raw.data(), raw.size());
  return v;
}

// The Pad's begin and end pads of every dim, if it pads with zeros in
// constant mode, spatial dims only and by non-negative amounts.
std::optional<std::vector<int64_t>> zero_spatial_pads(const GraphEdit& e,
                                                      const onnx::NodeProto& pad) {
  std::string mode = "constant";
  std::vector<int64_t> pads;
  float value = 0.0f;
  for (const auto& a : pad.attribute()) {
    if (a.name() == "mode") mode = a.s();
    if (a.name() == "pads") pads.assign(a.ints().begin(), a.ints().end());
    if (a.name() == "value") value = a.f();
  }
  if (mode != "constant") return std::nullopt;
  if (e.opset() >= 11) {
    // pads, constant_value and (opset 18) axes as inputs; all axes only.
    if (pad.input_size() < 2 || pad.input_size() > 3) return std::nullopt;
    const auto p = int64s(e, pad.input(1));
    if (!p) return std::nullopt;
    pads = *p;
    if (pad.input_size() == 3 && !pad.input(2).empty()) {
      const auto c = e.scalar(pad.input(2));
      if (!c) return std::nullopt;
      value = *c;
    }
  }
  if (value != 0.0f || std::signbit(value) || pads.size() < 6 || pads.size() % 2 != 0)
    return std::nullopt;
  const size_t rank = pads.size() / 2;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t begin = pads[d], end = pads[d + rank];
    if (begin < 0 || end < 0 || (d < 2 && (begin != 0 || end != 0))) return std::nullopt;
  }
  return pads;
}

}  // namespace

std::vector<AppliedRewrite> fold_pads(GraphEdit& e) {
  std::vector<AppliedRewrite> done;
  for (int i = 0; i < e.node_count(); ++i) {
    const onnx::NodeProto& conv = e.node(i);
    if (conv.op_type() != "Conv" || !conv.domain().empty() || e.edited(i) ||
        conv.input_size() < 2) {
      continue;
    }
    const int p = e.producer(conv.input(0));
    if (p < 0 || e.edited(p) || !e.only_read_by(conv.input(0), i)) continue;
    const onnx::NodeProto& pad = e.node(p);
    if (pad.op_type() != "Pad" || !pad.domain().empty()) continue;
    // The Conv reads the padded map as its data only (not as W or B too).
    bool data_only = true;
    for (int k = 1; k < conv.input_size(); ++k) data_only &= conv.input(k) != conv.input(0);
    if (!data_only) continue;
    const auto x = e.type(pad.input(0));
    if (!x || x->first != onnx::TensorProto::FLOAT) continue;
    const auto pads = zero_spatial_pads(e, pad);
    if (!pads || pads->size() != 2 * x->second.size()) continue;
    const size_t rank = x->second.size(), spatial = rank - 2;
    std::string auto_pad = "NOTSET";
    std::vector<int64_t> own(2 * spatial, 0);
    for (const auto& a : conv.attribute()) {
      if (a.name() == "auto_pad") auto_pad = a.s();
      if (a.name() == "pads") own.assign(a.ints().begin(), a.ints().end());
    }
    if (auto_pad != "NOTSET" || own.size() != 2 * spatial) continue;
    for (size_t d = 0; d < spatial; ++d) {
      own[d] += (*pads)[2 + d];
      own[d + spatial] += (*pads)[rank + 2 + d];
    }
    onnx::NodeProto q = conv;
    q.set_input(0, pad.input(0));
    q.clear_attribute();
    for (const auto& a : conv.attribute()) {
      if (a.name() != "pads" && a.name() != "auto_pad") *q.add_attribute() = a;
    }
    auto* a = q.add_attribute();
    a->set_name("pads");
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : own) a->add_ints(v);
    e.replace(i, {q});
    e.remove(p);
    done.push_back({"fold-pad", pad.name(), "into Conv '" + conv.name() + "'"});
  }
  return done;
}

}  // namespace eulernpu::host::ir
