// Recurrent layers: RNN, GRU and LSTM (ONNX opsets 7 and later), float32.
//
// Each direction first projects every time step's input at once (one sgemm
// of all seq_length * batch rows against W), then walks the steps: one sgemm
// of the previous hidden state against R, and the gates elementwise in
// float64, each state element rounded once to float32. sgemm_f32 fixes its
// blocking by shape, so the bytes do not depend on the thread count.
//
// Lowering and the kernels resolve shapes and attributes with the same
// function (resolve_problem), so what lowers is exactly what runs, and a
// corrupt artifact is rejected before any access.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/status.hpp"
#include "float16.hpp"
#include "kernel_util.hpp"

namespace eulernpu::kit {
namespace {

enum class Cell { kRnn, kGru, kLstm };

// Gate blocks stacked in W, R and B: RNN i; GRU z, r, h; LSTM i, o, f, c.
int64_t gate_count(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }
// Activations per direction: RNN f; GRU f, g; LSTM f, g, h.
size_t activation_count(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3; }
const char* cell_name(Cell cell) {
  return cell == Cell::kRnn ? "RNN" : cell == Cell::kGru ? "GRU" : "LSTM";
}

// Input slots: X, W, R, B, sequence_lens, initial_h, initial_c, P (the last
// two only for LSTM).
enum Slot : size_t { kX, kW, kR, kB, kSeqLens, kInitH, kInitC, kP, kSlots };

// ---------------------------------------------------------------------------
// Activations, with the defaults of the ONNX operators of the same name.

enum class Act {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus
};

struct ActInfo {
  const char* name;
  Act act;
  int params;  // how many of (alpha, beta) it reads from the attribute lists
  double alpha, beta;
};

constexpr std::array<ActInfo, 11> kActs{{
    {"relu", Act::kRelu, 0, 0, 0},
    {"tanh", Act::kTanh, 0, 0, 0},
    {"sigmoid", Act::kSigmoid, 0, 0, 0},
    {"affine", Act::kAffine, 2, 1.0, 0.0},
    {"leakyrelu", Act::kLeakyRelu, 1, 0.01, 0},
    {"thresholdedrelu", Act::kThresholdedRelu, 1, 1.0, 0},
    {"scaledtanh", Act::kScaledTanh, 2, 1.0, 1.0},
    {"hardsigmoid", Act::kHardSigmoid, 2, 0.2, 0.5},
    {"elu", Act::kElu, 1, 1.0, 0},
    {"softsign", Act::kSoftsign, 0, 0, 0},
    {"softplus", Act::kSoftplus, 0, 0, 0},
}};

struct Activation {
  Act act = Act::kTanh;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    switch (act) {
      case Act::kRelu:
        return x > 0 ? x : 0.0;
      case Act::kTanh:
        return std::tanh(x);
      case Act::kSigmoid:
        // Split by sign so exp never overflows.
        return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
      case Act::kAffine:
        return alpha * x + beta;
      case Act::kLeakyRelu:
        return x >= 0 ? x : alpha * x;
      case Act::kThresholdedRelu:
        return x > alpha ? x : 0.0;
      case Act::kScaledTanh:
        return alpha * std::tanh(beta * x);
      case Act::kHardSigmoid:
        return std::clamp(alpha * x + beta, 0.0, 1.0);
      case Act::kElu:
        return x >= 0 ? x : alpha * std::expm1(x);
      case Act::kSoftsign:
        return x / (1.0 + std::fabs(x));
      case Act::kSoftplus:
        return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    }
    return x;
  }
};

// ---------------------------------------------------------------------------
// Attributes and shapes, resolved once for lowering and for the kernel.

struct RnnAttrs {
  std::string direction = "forward";
  int64_t hidden_size = -1;  // -1: absent, taken from R
  int64_t layout = 0;
  bool has_clip = false;
  double clip = 0;
  int64_t input_forget = 0;
  int64_t linear_before_reset = 0;
  bool has_activations = false;
  std::vector<std::string> activations;
  std::vector<double> alphas, betas;
};

struct RnnProblem {
  Cell cell = Cell::kRnn;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1;
  bool reverse_only = false;  // direction=reverse
  bool batch_major = false;   // layout=1
  bool has_clip = false;
  double clip = 0;
  bool input_forget = false, linear_before_reset = false;
  std::vector<Activation> acts;  // activation_count(cell) per direction

  // Offsets (in elements) into X, Y and the (num_directions, batch, hidden)
  // state tensors, for either layout.
  int64_t x_row(int64_t t, int64_t b) const { return batch_major ? b * seq + t : t * batch + b; }
  int64_t y_offset(int64_t t, int64_t d, int64_t b) const {
    return (batch_major ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b) * hidden;
  }
  int64_t state_offset(int64_t d, int64_t b) const {
    return (batch_major ? b * dirs + d : d * batch + b) * hidden;
  }
};

using Shape = std::vector<int64_t>;
using Shapes = std::array<std::optional<Shape>, kSlots>;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool same(const std::optional<Shape>& s, const Shape& want) { return s && *s == want; }

std::optional<std::string> shape_problem(const std::optional<Shape>& got, const Shape& want,
                                         const char* name) {
  if (same(got, want)) return std::nullopt;
  return std::string(name) + " must have shape " + sdk::shape_string(want) + ", not " +
         sdk::shape_string(got ? *got : Shape{});
}

std::optional<std::string> resolve_problem(Cell cell, const RnnAttrs& a, const Shapes& s,
                                           RnnProblem& p) {
  p = RnnProblem{};
  p.cell = cell;
  p.gates = gate_count(cell);
  if (a.direction == "forward" || a.direction == "reverse") {
    p.dirs = 1;
    p.reverse_only = a.direction == "reverse";
  } else if (a.direction == "bidirectional") {
    p.dirs = 2;
  } else {
    return "direction '" + a.direction + "' is not forward, reverse or bidirectional";
  }
  if (a.layout != 0 && a.layout != 1)
    return "layout " + std::to_string(a.layout) + " is not 0 or 1";
  p.batch_major = a.layout == 1;
  if (a.has_clip && !(a.clip > 0)) return "clip must be positive";
  p.has_clip = a.has_clip;
  p.clip = a.clip;
  if (a.input_forget != 0 && a.input_forget != 1) return "input_forget must be 0 or 1";
  p.input_forget = a.input_forget == 1;
  p.linear_before_reset = a.linear_before_reset != 0;

  for (size_t i : {kX, kW, kR}) {
    if (!s[i]) return std::string(i == kX ? "X" : i == kW ? "W" : "R") + " is required";
  }
  const Shape& x = *s[kX];
  const Shape& r = *s[kR];
  if (x.size() != 3) return "X must have rank 3, not " + std::to_string(x.size());
  if (r.size() != 3) return "R must have rank 3, not " + std::to_string(r.size());
  p.seq = p.batch_major ? x[1] : x[0];
  p.batch = p.batch_major ? x[0] : x[1];
  p.input = x[2];
  p.hidden = a.hidden_size >= 0 ? a.hidden_size : r[2];
  if (p.hidden <= 0) return "hidden_size must be positive";
  // Keeps every product below int64 (and each tensor below BLAS's int).
  constexpr int64_t kMaxDim = int64_t{1} << 24;
  for (int64_t d : {p.seq, p.batch, p.input, p.hidden}) {
    if (d < 0 || d > kMaxDim) return "a dimension of X or hidden_size is out of range";
  }
  const int64_t gh = p.gates * p.hidden;
  // The input projection of all steps is held at once (seq * batch * gh
  // floats); beyond 2^30 of them, refuse rather than fail to allocate.
  if (static_cast<double>(p.seq) * static_cast<double>(p.batch) * static_cast<double>(gh) >
      static_cast<double>(int64_t{1} << 30)) {
    return "seq_length * batch * " + std::to_string(p.gates) +
           " * hidden_size exceeds 2^30 (the input projection's scratch)";
  }
  if (auto why = shape_problem(s[kW], {p.dirs, gh, p.input}, "W")) return why;
  if (auto why = shape_problem(s[kR], {p.dirs, gh, p.hidden}, "R")) return why;
  if (s[kB]) {
    if (auto why = shape_problem(s[kB], {p.dirs, 2 * gh}, "B")) return why;
  }
  if (s[kSeqLens]) {
    if (auto why = shape_problem(s[kSeqLens], {p.batch}, "sequence_lens")) return why;
  }
  const Shape state =
      p.batch_major ? Shape{p.batch, p.dirs, p.hidden} : Shape{p.dirs, p.batch, p.hidden};
  if (s[kInitH]) {
    if (auto why = shape_problem(s[kInitH], state, "initial_h")) return why;
  }
  if (cell == Cell::kLstm) {
    if (s[kInitC]) {
      if (auto why = shape_problem(s[kInitC], state, "initial_c")) return why;
    }
    if (s[kP]) {
      if (auto why = shape_problem(s[kP], {p.dirs, 3 * p.hidden}, "P")) return why;
    }
  }

  // Activation names: activation_count per direction, forward first; one
  // direction's list also serves both directions of a bidirectional layer.
  const size_t per_dir = activation_count(cell);
  std::vector<std::string> names = a.activations;
  if (!a.has_activations) {
    static const std::array<const char*, 3> rnn{"tanh"}, gru{"sigmoid", "tanh"},
        lstm{"sigmoid", "tanh", "tanh"};
    const auto& defaults = cell == Cell::kRnn ? rnn : cell == Cell::kGru ? gru : lstm;
    names.assign(defaults.begin(), defaults.begin() + static_cast<ptrdiff_t>(per_dir));
  }
  const auto dirs = static_cast<size_t>(p.dirs);
  if (names.size() == per_dir && dirs == 2) {
    const std::vector<std::string> once = names;
    names.insert(names.end(), once.begin(), once.end());
  }
  if (names.size() != per_dir * dirs) {
    return "activations must list " + std::to_string(per_dir * dirs) + " functions for " +
           cell_name(cell) + " with direction " + a.direction + ", not " +
           std::to_string(names.size());
  }
  // activation_alpha and activation_beta are consumed in order by the
  // functions that take them (as ONNX Runtime does); the rest get defaults.
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    const std::string key = lower(name);
    const auto it = std::find_if(kActs.begin(), kActs.end(),
                                 [&](const ActInfo& info) { return key == info.name; });
    if (it == kActs.end()) return "activation '" + name + "' is not defined by ONNX";
    Activation act{it->act, it->alpha, it->beta};
    if (it->params >= 1 && next_alpha < a.alphas.size()) act.alpha = a.alphas[next_alpha++];
    if (it->params >= 2 && next_beta < a.betas.size()) act.beta = a.betas[next_beta++];
    p.acts.push_back(act);
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// The recurrence.

struct Weights {
  const float* x = nullptr;
  const float* w = nullptr;
  const float* r = nullptr;
  const float* b = nullptr;           // may be null
  const int32_t* seq_lens = nullptr;  // may be null
  const float* init_h = nullptr;      // may be null
  const float* init_c = nullptr;      // may be null
  const float* p = nullptr;           // may be null
};

struct Outputs {
  float* y = nullptr;  // each may be null
  float* y_h = nullptr;
  float* y_c = nullptr;
};

double clipped(const RnnProblem& p, double v) {
  return p.has_clip ? std::clamp(v, -p.clip, p.clip) : v;
}

// One direction `d`, walking time backwards if `reverse`.
void run_direction(const RnnProblem& p, const Weights& in, const Outputs& out,
                   const std::vector<int64_t>& lens, int64_t d, bool reverse, int threads) {
  const int64_t H = p.hidden, G = p.gates, GH = G * H, batch = p.batch;
  const auto bh = static_cast<size_t>(batch * H);
  const auto gh = static_cast<size_t>(GH);
  const float* w = in.w + d * GH * p.input;
  const float* r = in.r + d * GH * H;
  const Activation* act = p.acts.data() + static_cast<size_t>(d) * activation_count(p.cell);

  // Every step's input projection X_t W^T, rows in X's order.
  std::vector<float> xw(static_cast<size_t>(p.seq * batch) * gh);
  sgemm_f32(false, true, p.seq * batch, GH, p.input, 1.0f, in.x, w, 0.0f, xw.data(), threads);

  // Wb + Rb per gate; GRU with linear_before_reset keeps Rbh apart, since
  // the reset gate scales it.
  std::vector<double> bias(gh, 0.0), rb_h(static_cast<size_t>(H), 0.0);
  if (in.b) {
    const float* wb = in.b + d * 2 * GH;
    const float* rb = wb + GH;
    for (int64_t i = 0; i < GH; ++i) bias[static_cast<size_t>(i)] = double{wb[i]} + rb[i];
    if (p.cell == Cell::kGru && p.linear_before_reset) {
      for (int64_t j = 0; j < H; ++j) {
        bias[static_cast<size_t>(2 * H + j)] = wb[2 * H + j];
        rb_h[static_cast<size_t>(j)] = rb[2 * H + j];
      }
    }
  }
  const float* peep = in.p ? in.p + d * 3 * H : nullptr;

  std::vector<float> h(bh, 0.0f), c(p.cell == Cell::kLstm ? bh : 0, 0.0f);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t off = p.state_offset(d, b);
    if (in.init_h)
      std::memcpy(&h[static_cast<size_t>(b * H)], in.init_h + off,
                  static_cast<size_t>(H) * sizeof(float));
    if (in.init_c && p.cell == Cell::kLstm) {
      std::memcpy(&c[static_cast<size_t>(b * H)], in.init_c + off,
                  static_cast<size_t>(H) * sizeof(float));
    }
  }

  std::vector<float> hr(static_cast<size_t>(batch) * gh), gated(bh), hh(bh);
  int64_t steps = 0;
  for (int64_t len : lens) steps = std::max(steps, len);
  for (int64_t s = 0; s < steps; ++s) {
    // GRU without linear_before_reset multiplies R_h by (r . H), known only
    // after the gates: its columns get their own product below.
    const bool split = p.cell == Cell::kGru && !p.linear_before_reset;
    if (split) {
      // hr is (batch, 3H); write the z and r columns row by row.
      std::vector<float> zr(static_cast<size_t>(batch * 2 * H));
      sgemm_f32(false, true, batch, 2 * H, H, 1.0f, h.data(), r, 0.0f, zr.data(), threads);
      for (int64_t b = 0; b < batch; ++b) {
        std::memcpy(&hr[static_cast<size_t>(b * GH)], &zr[static_cast<size_t>(b * 2 * H)],
                    static_cast<size_t>(2 * H) * sizeof(float));
      }
    } else {
      sgemm_f32(false, true, batch, GH, H, 1.0f, h.data(), r, 0.0f, hr.data(), threads);
    }

    // Pre-activations of gate `k` for row b, element j.
    auto pre = [&](int64_t b, int64_t t, int64_t k, int64_t j) {
      const auto col = static_cast<size_t>(k * H + j);
      return double{xw[static_cast<size_t>(p.x_row(t, b)) * gh + col]} +
             hr[static_cast<size_t>(b) * gh + col] + bias[col];
    };
    auto time_of = [&](int64_t b) { return reverse ? lens[static_cast<size_t>(b)] - 1 - s : s; };

    if (p.cell == Cell::kRnn) {
      for (int64_t b = 0; b < batch; ++b) {
        if (s >= lens[static_cast<size_t>(b)]) continue;
        const int64_t t = time_of(b);
        for (int64_t j = 0; j < H; ++j) {
          gated[static_cast<size_t>(b * H + j)] =
              narrow_to_float(act[0](clipped(p, pre(b, t, 0, j))));
        }
      }
    } else if (p.cell == Cell::kGru) {
      // z and r first; then the candidate h, whose recurrent term needs r.
      std::vector<double> z(bh), rg(bh);
      for (int64_t b = 0; b < batch; ++b) {
        if (s >= lens[static_cast<size_t>(b)]) continue;
        const int64_t t = time_of(b);
        for (int64_t j = 0; j < H; ++j) {
          const auto i = static_cast<size_t>(b * H + j);
          z[i] = act[0](clipped(p, pre(b, t, 0, j)));
          rg[i] = act[0](clipped(p, pre(b, t, 1, j)));
          if (split) hh[i] = narrow_to_float(rg[i] * h[i]);
        }
      }
      std::vector<float> rh;
      if (split) {
        rh.resize(bh);
        sgemm_f32(false, true, batch, H, H, 1.0f, hh.data(), r + 2 * H * H, 0.0f, rh.data(),
                  threads);
      }
      for (int64_t b = 0; b < batch; ++b) {
        if (s >= lens[static_cast<size_t>(b)]) continue;
        const int64_t t = time_of(b);
        for (int64_t j = 0; j < H; ++j) {
          const auto i = static_cast<size_t>(b * H + j);
          const auto col = static_cast<size_t>(2 * H + j);
          const double x_part =
              double{xw[static_cast<size_t>(p.x_row(t, b)) * gh + col]} + bias[col];
          const double rec = split ? double{rh[i]}
                                   : rg[i] * (double{hr[static_cast<size_t>(b) * gh + col]} +
                                              rb_h[static_cast<size_t>(j)]);
          const double cand = act[1](clipped(p, x_part + rec));
          gated[i] = narrow_to_float((1.0 - z[i]) * cand + z[i] * h[i]);
        }
      }
    } else {
      for (int64_t b = 0; b < batch; ++b) {
        if (s >= lens[static_cast<size_t>(b)]) continue;
        const int64_t t = time_of(b);
        for (int64_t j = 0; j < H; ++j) {
          const auto i = static_cast<size_t>(b * H + j);
          const double c_prev = c[i];
          double pi = pre(b, t, 0, j), po = pre(b, t, 1, j), pf = pre(b, t, 2, j);
          if (peep) {
            pi += double{peep[j]} * c_prev;
            pf += double{peep[2 * H + j]} * c_prev;
          }
          const double ig = act[0](clipped(p, pi));
          // input_forget couples the gates as ONNX Runtime does: f = 1 - i.
          const double fg = p.input_forget ? 1.0 - ig : act[0](clipped(p, pf));
          const double cand = act[1](clipped(p, pre(b, t, 3, j)));
          const float c_new = narrow_to_float(fg * c_prev + ig * cand);
          if (peep) po += double{peep[H + j]} * c_new;
          const double og = act[0](clipped(p, po));
          c[i] = c_new;
          gated[i] = narrow_to_float(og * act[2](c_new));
        }
      }
    }

    for (int64_t b = 0; b < batch; ++b) {
      if (s >= lens[static_cast<size_t>(b)]) continue;
      const auto row = static_cast<size_t>(b * H);
      std::memcpy(&h[row], &gated[row], static_cast<size_t>(H) * sizeof(float));
      if (out.y)
        std::memcpy(out.y + p.y_offset(time_of(b), d, b), &h[row],
                    static_cast<size_t>(H) * sizeof(float));
    }
  }

  for (int64_t b = 0; b < batch; ++b) {
    const int64_t off = p.state_offset(d, b);
    const auto row = static_cast<size_t>(b * H);
    if (out.y_h) std::memcpy(out.y_h + off, &h[row], static_cast<size_t>(H) * sizeof(float));
    if (out.y_c) std::memcpy(out.y_c + off, &c[row], static_cast<size_t>(H) * sizeof(float));
  }
}

// ---------------------------------------------------------------------------
// Kernel and lowering entry points.

size_t slot_count(Cell cell) { return cell == Cell::kLstm ? kSlots : kInitC; }

RnnAttrs attrs_of(const KernelContext& ctx) {
  RnnAttrs a;
  a.direction = ctx.attr_string("direction", "forward");
  a.hidden_size = ctx.attr_int("hidden_size", -1);
  a.layout = ctx.attr_int("layout", 0);
  a.has_clip = ctx.has_attr("clip");
  a.clip = ctx.attr_float("clip", 0);
  a.input_forget = ctx.attr_int("input_forget", 0);
  a.linear_before_reset = ctx.attr_int("linear_before_reset", 0);
  auto it = ctx.attributes.find("activations");
  if (it != ctx.attributes.end()) {
    if (!it->is_array()) corrupt("an RNN's activations are not a list");
    a.has_activations = true;
    for (const auto& v : *it) {
      if (!v.is_string()) corrupt("an RNN's activations are not strings");
      a.activations.push_back(v.get<std::string>());
    }
  }
  a.alphas = ctx.attr_floats("activation_alpha");
  a.betas = ctx.attr_floats("activation_beta");
  return a;
}

RnnAttrs attrs_of(const sdk::NodeView& node) {
  RnnAttrs a;
  a.direction = node.attr_string("direction", "forward");
  a.hidden_size = node.attr_int("hidden_size", -1);
  a.layout = node.attr_int("layout", 0);
  if (const enp_attribute_t* clip = node.find_attribute("clip")) {
    a.has_clip = true;
    a.clip = clip->type == ENP_ATTR_FLOAT ? clip->f : 0;
  }
  a.input_forget = node.attr_int("input_forget", 0);
  a.linear_before_reset = node.attr_int("linear_before_reset", 0);
  if (const enp_attribute_t* acts = node.find_attribute("activations")) {
    a.has_activations = true;
    if (acts->type == ENP_ATTR_STRINGS) {
      for (uint64_t i = 0; i < acts->count; ++i) a.activations.emplace_back(acts->strings[i]);
    }
  }
  for (auto [name, list] :
       {std::pair{"activation_alpha", &a.alphas}, std::pair{"activation_beta", &a.betas}}) {
    const enp_attribute_t* f = node.find_attribute(name);
    if (f && f->type == ENP_ATTR_FLOATS) list->assign(f->floats, f->floats + f->count);
  }
  return a;
}

template <Cell kCell>
void rnn_kernel(const KernelContext& ctx) {
  Shapes shapes;
  for (size_t i = 0; i < slot_count(kCell); ++i) {
    if (!ctx.has_input(i)) continue;
    const int32_t want = i == kSeqLens ? ENP_DTYPE_INT32 : ENP_DTYPE_FLOAT32;
    if (ctx.inputs[i].dtype != want) corrupt(std::string(cell_name(kCell)) + " input dtype");
    shapes[i] = ctx.inputs[i].shape;
  }
  RnnProblem p;
  if (auto why = resolve_problem(kCell, attrs_of(ctx), shapes, p)) {
    corrupt(std::string(cell_name(kCell)) + ": " + *why);
  }
  auto output = [&](size_t i, const Shape& shape) -> float* {
    if (i >= ctx.outputs.size() || ctx.outputs[i].dtype == ENP_DTYPE_UNDEFINED) return nullptr;
    if (ctx.outputs[i].dtype != ENP_DTYPE_FLOAT32 || ctx.outputs[i].shape != shape) {
      corrupt(std::string(cell_name(kCell)) + " output " + std::to_string(i) + " shape");
    }
    return ctx.outputs[i].as<float>();
  };
  const Shape state =
      p.batch_major ? Shape{p.batch, p.dirs, p.hidden} : Shape{p.dirs, p.batch, p.hidden};
  const Outputs out{output(0, p.batch_major ? Shape{p.batch, p.seq, p.dirs, p.hidden}
                                            : Shape{p.seq, p.dirs, p.batch, p.hidden}),
                    output(1, state), kCell == Cell::kLstm ? output(2, state) : nullptr};

  auto data = [&](size_t i) -> const void* {
    return i < slot_count(kCell) && ctx.has_input(i) ? ctx.inputs[i].data : nullptr;
  };
  const Weights in{
      static_cast<const float*>(data(kX)),         static_cast<const float*>(data(kW)),
      static_cast<const float*>(data(kR)),         static_cast<const float*>(data(kB)),
      static_cast<const int32_t*>(data(kSeqLens)), static_cast<const float*>(data(kInitH)),
      static_cast<const float*>(data(kInitC)),     static_cast<const float*>(data(kP))};

  std::vector<int64_t> lens(static_cast<size_t>(p.batch), p.seq);
  if (in.seq_lens) {
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t len = in.seq_lens[b];
      if (len < 0 || len > p.seq) {
        index_out_of_range(std::string(cell_name(kCell)) + ": sequence_lens[" + std::to_string(b) +
                           "] = " + std::to_string(len) + " is outside [0, " +
                           std::to_string(p.seq) + "]");
      }
      lens[static_cast<size_t>(b)] = len;
    }
  }
  // Steps past a sequence's length stay zero in Y; a sequence of length 0
  // leaves Y_h (and Y_c) at the initial state.
  if (out.y) std::fill_n(out.y, ctx.outputs[0].count(), 0.0f);
  for (int64_t d = 0; d < p.dirs; ++d) {
    run_direction(p, in, out, lens, d, p.reverse_only || d == 1, ctx.threads);
  }
}

template <Cell kCell>
std::optional<std::string> rnn_check(const sdk::NodeView& node, const sdk::GraphView& graph) {
  static const std::array<const char*, kSlots> names{
      "X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
  if (node.input_count() > slot_count(kCell)) {
    return std::string(cell_name(kCell)) + " takes at most " + std::to_string(slot_count(kCell)) +
           " inputs";
  }
  Shapes shapes;
  for (size_t i = 0; i < slot_count(kCell); ++i) {
    if (node.input(i).empty()) continue;
    const auto v = graph.value(node.input(i));
    if (!v) return std::string(names[i]) + " has no type";
    const int32_t want = i == kSeqLens ? ENP_DTYPE_INT32 : ENP_DTYPE_FLOAT32;
    if (v->dtype() != want) {
      return std::string(names[i]) + " must be " + sdk::dtype_name(want) + ", not " +
             sdk::dtype_name(v->dtype());
    }
    shapes[i] = v->shape();
  }
  if (node.output_count() > (kCell == Cell::kLstm ? 3u : 2u)) {
    return std::string(cell_name(kCell)) + " has too many outputs";
  }
  for (size_t i = 0; i < node.output_count(); ++i) {
    if (node.output(i).empty()) continue;
    const auto v = graph.value(node.output(i));
    if (!v || v->dtype() != ENP_DTYPE_FLOAT32) return "outputs must be float32";
  }
  RnnProblem p;
  if (auto why = resolve_problem(kCell, attrs_of(node), shapes, p)) return why;
  const bool has_layout = node.find_attribute("layout") != nullptr;
  if (has_layout && graph.opset("") < 14) return "layout is an attribute of opset 14 and later";
  return std::nullopt;
}

}  // namespace

std::vector<OpEntry> rnn_ops() {
  constexpr const char* kCommon =
      "float32 (int32 sequence_lens); forward, reverse, bidirectional; layout 0/1; every ONNX "
      "activation with alpha/beta; clip";
  return {
      {"GRU", 7, 0, kF32, "as RNN, plus linear_before_reset", &rnn_check<Cell::kGru>,
       &rnn_kernel<Cell::kGru>},
      {"LSTM", 7, 0, kF32, "as RNN, plus peepholes and input_forget", &rnn_check<Cell::kLstm>,
       &rnn_kernel<Cell::kLstm>},
      {"RNN", 7, 0, kF32, kCommon, &rnn_check<Cell::kRnn>, &rnn_kernel<Cell::kRnn>},
  };
}

}  // namespace eulernpu::kit
