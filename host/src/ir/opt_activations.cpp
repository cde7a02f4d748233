// Exporters' spellings of HardSigmoid and HardSwish as the ONNX ops:
//   Mul(Clip(Add(x, b), 0, u), a) with a · u = 1  ->  HardSigmoid(x; alpha a, beta a·b)
//   Mul(Mul(x, Clip(Add(x, 3), 0, 6)), 1/6)       ->  Mul(x, HardSigmoid(x; 1/6, 1/2))
//   Mul(x, HardSigmoid(x; 1/6, 1/2))              ->  HardSwish(x)   (opset 14 and newer)
// (Div by 6 has become Mul by 1/6 in constant_arithmetic.) Each becomes one
// int8 table instead of three or four requantized steps.
#include <cmath>

#include "ir/graph_edit.hpp"
#include "ir/optimize.hpp"

namespace eulernpu::host::ir {

namespace {

bool near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

// The producer of `value` if it is `op` in the default domain, unedited,
// read only by `reader`.
const onnx::NodeProto* sole_producer(const GraphEdit& e, const std::string& value, const char* op,
                                     int reader, int* index = nullptr) {
  const int p = e.producer(value);
  if (p < 0 || e.edited(p) || !e.only_read_by(value, reader)) return nullptr;
  const onnx::NodeProto& n = e.node(p);
  if (n.op_type() != op || !n.domain().empty()) return nullptr;
  if (index) *index = p;
  return &n;
}

// Mul(v, c) or Mul(c, v) with c a constant: (v, c).
std::optional<std::pair<std::string, float>> mul_by_constant(const GraphEdit& e,
                                                             const onnx::NodeProto& n) {
  if (n.op_type() != "Mul" || !n.domain().empty() || n.input_size() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    if (e.initializer(n.input(k))) continue;
    if (const auto c = e.scalar(n.input(1 - k))) return std::make_pair(n.input(k), *c);
  }
  return std::nullopt;
}

struct ClipOfShift {
  std::string x;
  double shift = 0, lo = 0, hi = 0;
  int clip = -1, add = -1;
};

// Clip(Add(x, b), lo, hi) producing `value` for `reader`, bounds constant.
std::optional<ClipOfShift> clip_of_shift(const GraphEdit& e, const std::string& value, int reader) {
  ClipOfShift m;
  const onnx::NodeProto* clip = sole_producer(e, value, "Clip", reader, &m.clip);
  if (!clip || clip->input_size() < 1) return std::nullopt;
  m.lo = attr_float(*clip, "min", -INFINITY);
  m.hi = attr_float(*clip, "max", INFINITY);
  for (int k = 1; k <= 2 && k < clip->input_size(); ++k) {
    if (clip->input(k).empty()) continue;
    const auto b = e.scalar(clip->input(k));
    if (!b) return std::nullopt;
    (k == 1 ? m.lo : m.hi) = *b;
  }
  const onnx::NodeProto* add = sole_producer(e, clip->input(0), "Add", m.clip, &m.add);
  if (!add || add->input_size() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    if (e.initializer(add->input(k))) continue;
    if (const auto b = e.scalar(add->input(1 - k))) {
      m.x = add->input(k);
      m.shift = *b;
      return m;
    }
  }
  return std::nullopt;
}

onnx::NodeProto hard_sigmoid(const std::string& name, const std::string& x, double alpha,
                             double beta, const std::string& out) {
  onnx::NodeProto n = make_node("HardSigmoid", name, {x}, out);
  auto* a = n.add_attribute();
  a->set_name("alpha");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(static_cast<float>(alpha));
  auto* b = n.add_attribute();
  b->set_name("beta");
  b->set_type(onnx::AttributeProto::FLOAT);
  b->set_f(static_cast<float>(beta));
  return n;
}

bool is_float(const GraphEdit& e, const std::string& v) {
  const auto t = e.type(v);
  return t && t->first == onnx::TensorProto::FLOAT;
}

}  // namespace

std::vector<AppliedRewrite> fuse_activations(GraphEdit& e) {
  std::vector<AppliedRewrite> done;
  for (int i = 0; i < e.node_count(); ++i) {
    const onnx::NodeProto& n = e.node(i);
    if (e.edited(i) || !n.domain().empty() || n.op_type() != "Mul" || !is_float(e, n.output(0)))
      continue;
    const std::string base = n.name().empty() ? n.output(0) : n.name();
    // HardSwish as x · HardSigmoid(x), when the opset has the op.
    if (e.opset() >= 14 && n.input_size() == 2) {
      bool fused = false;
      for (int k = 0; k < 2 && !fused; ++k) {
        int h = -1;
        const onnx::NodeProto* hs = sole_producer(e, n.input(k), "HardSigmoid", i, &h);
        if (!hs || hs->input(0) != n.input(1 - k)) continue;
        if (!near(attr_float(*hs, "alpha", 0.2f), 1.0 / 6) ||
            !near(attr_float(*hs, "beta", 0.5f), 0.5))
          continue;
        e.remove(h);
        e.replace(i, {make_node("HardSwish", base, {n.input(1 - k)}, n.output(0))});
        done.push_back({"hardswish", n.name(), "x · HardSigmoid(x) as HardSwish"});
        fused = true;
      }
      if (fused) continue;
    }
    const auto mc = mul_by_constant(e, n);
    if (!mc) continue;
    // HardSigmoid: a · Clip(x + b, 0, u) with a · u = 1.
    if (const auto m = clip_of_shift(e, mc->first, i)) {
      if (m->lo == 0.0 && m->hi > 0 && std::isfinite(m->hi) && near(mc->second * m->hi, 1.0)) {
        e.remove(m->add);
        e.remove(m->clip);
        e.replace(i, {hard_sigmoid(base, m->x, mc->second, mc->second * m->shift, n.output(0))});
        done.push_back({"hardsigmoid", n.name(), "a · Clip(x + b, 0, 1/a) as HardSigmoid"});
      }
      continue;
    }
    // HardSwish spelled x · Clip(x + 3, 0, 6) · (1/6).
    int inner = -1;
    const onnx::NodeProto* prod = sole_producer(e, mc->first, "Mul", i, &inner);
    if (!prod || prod->input_size() != 2 || !near(mc->second, 1.0 / 6)) continue;
    for (int k = 0; k < 2; ++k) {
      const auto m = clip_of_shift(e, prod->input(k), inner);
      if (!m || m->x != prod->input(1 - k) || m->lo != 0.0 || !near(m->hi, 6.0) ||
          !near(m->shift, 3.0))
        continue;
      e.remove(m->add);
      e.remove(m->clip);
      e.remove(inner);
      const std::string x = m->x;
      if (e.opset() >= 14) {
        e.replace(i, {make_node("HardSwish", base, {x}, n.output(0))});
      } else {
        const std::string gate = e.unique(base + ".gate");
        e.replace(i, {hard_sigmoid(e.unique(base + ".hardsigmoid"), x, 1.0 / 6, 0.5, gate),
                      make_node("Mul", base, {x, gate}, n.output(0))});
      }
      done.push_back({"hardswish", n.name(), "x · Clip(x + 3, 0, 6) / 6 as HardSwish"});
      break;
    }
  }
  return done;
}

}  // namespace eulernpu::host::ir
