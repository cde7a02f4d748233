// Ops of recurrent and cached sequence models (opsets 24 to 28):
// LinearAttention, CausalConvWithState, TensorScatter and SwiGLU.
//
// Precision: as in kernels_transformer.cpp, elements are read into float64,
// recurrences and dot products run there in a fixed order, and each output
// element is rounded once to its storage type, except where the op's
// function body rounds an intermediate to the input type (noted at the
// kernel), which the kernel then does too.
//
// Lowering and the kernels validate shapes with the same functions, so what
// lowers is what runs, and a corrupt artifact is rejected before any access.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/status.hpp"
#include "float16.hpp"
#include "float_storage.hpp"
#include "kernel_util.hpp"
#include "operands.hpp"

namespace eulernpu::kit {
namespace {

constexpr uint32_t kF16 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT16);
constexpr uint32_t kF64 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT64);
constexpr uint32_t kFloats = kF32 | kF16 | kF64;

double silu(double x, double alpha) { return x / (1.0 + std::exp(-alpha * x)); }

// ---------------------------------------------------------------------------
// Operands: dtype and shape as lowering sees them in the graph and the
// kernel in its buffers, so both validate with the same code.

// Declared outputs must have the dtype and shape the op computes.
std::optional<std::string> outputs_problem(const std::vector<Operand>& outs,
                                           const std::vector<Operand>& expected) {
  for (size_t i = 0; i < outs.size() && i < expected.size(); ++i) {
    if (!outs[i].present()) continue;
    if (outs[i].dtype != expected[i].dtype) {
      return "output " + std::to_string(i) + " must be " + sdk::dtype_name(expected[i].dtype);
    }
    if (outs[i].shape != expected[i].shape) {
      return "output " + std::to_string(i) + " has shape " + sdk::shape_string(outs[i].shape) +
             " but the op computes " + sdk::shape_string(expected[i].shape);
    }
  }
  return std::nullopt;
}

void check_outputs(const KernelContext& ctx, const std::vector<Operand>& expected, const char* op) {
  if (auto why = outputs_problem(buffer_operands(ctx.outputs), expected)) {
    corrupt(std::string(op) + ": " + *why);
  }
}

// ---------------------------------------------------------------------------
// SwiGLU (opset 28): Y = Swish_alpha(A) * B, A and B of one shape. The
// function body rounds Swish's result to T before the product.

std::optional<std::string> swiglu_problem(const std::vector<Operand>& in) {
  if (in.size() < 2 || !in[1].present()) return "B (input 1) is required";
  if (in[1].dtype != in[0].dtype) return "B must have A's dtype";
  if (in[1].shape != in[0].shape) {
    return "A " + sdk::shape_string(in[0].shape) + " and B " + sdk::shape_string(in[1].shape) +
           " must have the same shape (SwiGLU does not broadcast)";
  }
  return std::nullopt;
}

template <typename S>
void swiglu_typed(const KernelContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 1.0);
  const S* a = ctx.inputs[0].as<const S>();
  const S* b = ctx.inputs[1].as<const S>();
  S* y = ctx.outputs[0].as<S>();
  const int64_t n = ctx.inputs[0].count();
  parallel_for(n, threads_for(ctx, n), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      y[i] = store<S>(round_to<S>(silu(load(a[i]), alpha)) * load(b[i]));
    }
  });
}

void swiglu_kernel(const KernelContext& ctx) {
  const auto in = buffer_operands(ctx.inputs);
  if (auto why = swiglu_problem(in)) corrupt("SwiGLU: " + *why);
  check_outputs(ctx, {in[0]}, "SwiGLU");
  dispatch_float(in[0].dtype, [&]<typename S>() { swiglu_typed<S>(ctx); });
}

std::optional<std::string> swiglu_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const auto in = graph_operands(node, g);
  if (auto why = swiglu_problem(in)) return why;
  return outputs_problem(graph_operands(node, g, true), {in[0]});
}

// ---------------------------------------------------------------------------
// TensorScatter (opset 24): present = past with update written along
// `axis` at write_indices[b] (0 without it) of each batch b; mode
// "circular" wraps the positions modulo the cache length.

struct ScatterDims {
  size_t axis = 0;
  int64_t outer = 0;      // elements of the dims before axis (batch first)
  int64_t per_batch = 0;  // of those, per batch index
  int64_t cache_len = 0, update_len = 0, inner = 0;
  bool circular = false;
};

std::optional<std::string> scatter_problem(const std::vector<Operand>& in, int64_t axis_attr,
                                           const std::string& mode, ScatterDims& d) {
  if (mode != "linear" && mode != "circular") {
    return "mode '" + mode + "' is not 'linear' or 'circular'";
  }
  d.circular = mode == "circular";
  if (in.size() < 2 || !in[1].present()) return "update (input 1) is required";
  if (in[1].dtype != in[0].dtype) return "update must have past_cache's dtype";
  const auto &cache = in[0].shape, &update = in[1].shape;
  const auto rank = static_cast<int64_t>(cache.size());
  if (axis_attr < -rank || axis_attr >= rank) {
    return "axis " + std::to_string(axis_attr) + " is out of range for rank " +
           std::to_string(rank);
  }
  const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
  if (axis == 0) return "axis must not be the batch axis 0";
  d.axis = static_cast<size_t>(axis);
  bool same = update.size() == cache.size();
  for (size_t i = 0; same && i < cache.size(); ++i) same = i == d.axis || update[i] == cache[i];
  if (!same || update[d.axis] > cache[d.axis]) {
    return "update " + sdk::shape_string(update) + " must match past_cache " +
           sdk::shape_string(cache) + " but along axis " + std::to_string(axis) +
           ", where it may be shorter";
  }
  d.outer = 1;
  for (size_t i = 0; i < d.axis; ++i) d.outer *= cache[i];
  d.per_batch = cache[0] == 0 ? 0 : d.outer / cache[0];
  d.cache_len = cache[d.axis];
  d.update_len = update[d.axis];
  d.inner = 1;
  for (size_t i = d.axis + 1; i < cache.size(); ++i) d.inner *= cache[i];
  const Operand w = operand_at(in, 2);
  if (w.present() && (w.dtype != ENP_DTYPE_INT64 || w.shape != std::vector<int64_t>{cache[0]})) {
    return "write_indices must be int64 of shape (batch,)";
  }
  return std::nullopt;
}

void scatter_kernel(const KernelContext& ctx) {
  ScatterDims d;
  const auto in = buffer_operands(ctx.inputs);
  if (auto why =
          scatter_problem(in, ctx.attr_int("axis", -2), ctx.attr_string("mode", "linear"), d)) {
    corrupt("TensorScatter: " + *why);
  }
  check_outputs(ctx, {in[0]}, "TensorScatter");
  const int64_t* write = ctx.has_input(2) ? ctx.inputs[2].as<const int64_t>() : nullptr;
  const int64_t batch = in[0].shape[0];
  // Every position is checked before anything is written.
  for (int64_t b = 0; write && b < batch; ++b) {
    const int64_t w = write[b];
    const bool ok = d.circular ? w >= 0 : w >= 0 && w <= d.cache_len - d.update_len;
    if (!ok) {
      index_out_of_range("TensorScatter: write_indices[" + std::to_string(b) + "] = " +
                         std::to_string(w) + " does not fit " + std::to_string(d.update_len) +
                         " positions into a cache of " + std::to_string(d.cache_len) +
                         (d.circular ? " (circular mode needs a non-negative index)" : ""));
    }
  }
  const size_t width = sdk::dtype_size(in[0].dtype);
  const auto* past = static_cast<const uint8_t*>(ctx.inputs[0].data);
  const auto* update = static_cast<const uint8_t*>(ctx.inputs[1].data);
  auto* present = static_cast<uint8_t*>(ctx.outputs[0].data);
  const size_t row = static_cast<size_t>(d.inner) * width;
  if (present != past)
    std::memcpy(present, past, static_cast<size_t>(ctx.inputs[0].count()) * width);
  if (d.cache_len == 0) return;
  for (int64_t o = 0; o < d.outer; ++o) {
    // Reduced first, so a huge circular index cannot overflow.
    const int64_t start = (write ? write[o / d.per_batch] : 0) % d.cache_len;
    for (int64_t s = 0; s < d.update_len; ++s) {
      const int64_t pos = d.circular ? (start + s) % d.cache_len : start + s;
      std::memcpy(present + static_cast<size_t>(o * d.cache_len + pos) * row,
                  update + static_cast<size_t>(o * d.update_len + s) * row, row);
    }
  }
}

std::optional<std::string> scatter_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  ScatterDims d;
  const auto in = graph_operands(node, g);
  if (auto why =
          scatter_problem(in, node.attr_int("axis", -2), node.attr_string("mode", "linear"), d)) {
    return why;
  }
  return outputs_problem(graph_operands(node, g, true), {in[0]});
}

// ---------------------------------------------------------------------------
// CausalConvWithState (opset 27): a depthwise 1-D convolution over
// (past_state or zeros) ++ input, with bias and an optional SiLU; the new
// state is the last k - 1 positions of that padded sequence. Inputs
// (B, C, L), weight (C, 1, k), bias (C), past_state (B, C, k - 1).

enum ConvInput : size_t { kX, kWeight, kBias, kPast };

struct CausalDims {
  int64_t batch = 0, channels = 0, length = 0, kernel = 0;
  int64_t state() const { return kernel - 1; }
};

std::optional<std::string> causal_problem(const std::vector<Operand>& in,
                                          const std::string& activation, CausalDims& d) {
  if (activation != "none" && activation != "silu" && activation != "swish") {
    return "activation '" + activation + "' is not 'none', 'silu' or 'swish'";
  }
  if (in.size() < 2 || !in[kWeight].present()) return "weight (input 1) is required";
  const auto &x = in[kX].shape, &w = in[kWeight].shape;
  if (x.size() != 3) return "input must be 3-D (batch, channels, length)";
  d.batch = x[0], d.channels = x[1], d.length = x[2];
  if (w.size() != 3 || w[0] != d.channels || w[1] != 1 || w[2] < 1) {
    return "weight " + sdk::shape_string(w) + " must be (channels, 1, k) with k >= 1 and " +
           std::to_string(d.channels) + " channels";
  }
  d.kernel = w[2];
  for (size_t i : {kWeight, kBias, kPast}) {
    const Operand op = operand_at(in, i);
    if (op.present() && op.dtype != in[kX].dtype) {
      return "weight, bias and past_state must have the input's dtype";
    }
  }
  const Operand bias = operand_at(in, kBias);
  if (bias.present() && bias.shape != std::vector<int64_t>{d.channels}) {
    return "bias " + sdk::shape_string(bias.shape) + " must be (channels,)";
  }
  const Operand past = operand_at(in, kPast);
  const std::vector<int64_t> state{d.batch, d.channels, d.state()};
  if (past.present() && past.shape != state) {
    return "past_state " + sdk::shape_string(past.shape) + " must be " + sdk::shape_string(state);
  }
  return std::nullopt;
}

std::vector<Operand> causal_outputs(const std::vector<Operand>& in, const CausalDims& d) {
  return {in[kX], {in[kX].dtype, {d.batch, d.channels, d.state()}}};
}

template <typename S>
void causal_typed(const KernelContext& ctx, const CausalDims& d) {
  const bool act = ctx.attr_string("activation", "none") != "none";
  const S* x = ctx.inputs[kX].as<const S>();
  const S* w = ctx.inputs[kWeight].as<const S>();
  const S* bias = ctx.has_input(kBias) ? ctx.inputs[kBias].as<const S>() : nullptr;
  const S* past = ctx.has_input(kPast) ? ctx.inputs[kPast].as<const S>() : nullptr;
  S* y = ctx.outputs[0].as<S>();
  S* present = wants(ctx, 1) ? ctx.outputs[1].as<S>() : nullptr;
  const int64_t k = d.kernel, state = d.state(), padded = state + d.length;
  parallel_for(d.batch * d.channels, threads_for(ctx, d.batch * d.channels * padded * k),
               [&](int64_t begin, int64_t end) {
                 std::vector<double> seq(static_cast<size_t>(padded));
                 for (int64_t bc = begin; bc < end; ++bc) {
                   const int64_t c = bc % d.channels;
                   for (int64_t t = 0; t < state; ++t) {
                     seq[static_cast<size_t>(t)] = past ? load(past[bc * state + t]) : 0.0;
                   }
                   for (int64_t t = 0; t < d.length; ++t) {
                     seq[static_cast<size_t>(state + t)] = load(x[bc * d.length + t]);
                   }
                   const S* wc = w + c * k;
                   for (int64_t t = 0; t < d.length; ++t) {
                     double acc = bias ? load(bias[c]) : 0.0;
                     for (int64_t j = 0; j < k; ++j) {
                       acc += load(wc[j]) * seq[static_cast<size_t>(t + j)];
                     }
                     // The function body's Conv yields T; SiLU then runs on
                     // that rounded value.
                     y[bc * d.length + t] =
                         act ? store<S>(silu(round_to<S>(acc), 1.0)) : store<S>(acc);
                   }
                   if (!present) continue;
                   for (int64_t t = 0; t < state; ++t) {
                     present[bc * state + t] = store<S>(seq[static_cast<size_t>(d.length + t)]);
                   }
                 }
               });
}

void causal_kernel(const KernelContext& ctx) {
  CausalDims d;
  const auto in = buffer_operands(ctx.inputs);
  if (auto why = causal_problem(in, ctx.attr_string("activation", "none"), d)) {
    corrupt("CausalConvWithState: " + *why);
  }
  check_outputs(ctx, causal_outputs(in, d), "CausalConvWithState");
  dispatch_float(in[kX].dtype, [&]<typename S>() { causal_typed<S>(ctx, d); });
}

std::optional<std::string> causal_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  CausalDims d;
  const auto in = graph_operands(node, g);
  if (auto why = causal_problem(in, node.attr_string("activation", "none"), d)) return why;
  return outputs_problem(graph_operands(node, g, true), causal_outputs(in, d));
}

// ---------------------------------------------------------------------------
// LinearAttention (opset 27): per kv head a (d_k x d_v) state S runs over
// the tokens:
//   linear:      S = S + k v^T
//   gated:       S = exp(g) * S + k v^T
//   delta:       S = S + k (beta (v - S^T k))^T
//   gated_delta: S = exp(g) * S, then the delta update on that S
// and each query head reads o = scale * q^T S after its kv head's update;
// q heads share kv heads in consecutive groups (GQA). Q (B, T, Hq*dk),
// K (B, T, Hkv*dk), V (B, T, Hkv*dv), decay (B, T, Hkv*dk) or (B, T, Hkv),
// beta (B, T, Hkv) or (B, T, 1), past_state (B, Hkv, dk, dv) of T or
// float32. The state stays in float64 across tokens; present_state is
// rounded once at the end (the function body keeps it in float32).

enum LinearInput : size_t { kQuery, kKey, kValue, kState, kDecay, kBeta };

struct LinearDims {
  int64_t batch = 0, seq = 0, q_heads = 0, kv_heads = 0, dk = 0, dv = 0;
  bool gated = false, delta = false;
  bool head_decay = false;   // decay has one value per head, not per key channel
  bool shared_beta = false;  // beta has one value for all heads
  int32_t state_dtype = ENP_DTYPE_UNDEFINED;
};

std::optional<std::string> linear_problem(const std::vector<Operand>& in, int64_t q_heads,
                                          int64_t kv_heads, const std::string& rule,
                                          LinearDims& d) {
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta") {
    return "update_rule '" + rule + "' is not linear, gated, delta or gated_delta";
  }
  d.gated = rule == "gated" || rule == "gated_delta";
  d.delta = rule == "delta" || rule == "gated_delta";
  if (q_heads <= 0 || kv_heads <= 0 || q_heads % kv_heads != 0) {
    return "q_num_heads (" + std::to_string(q_heads) + ") must be a positive multiple of " +
           "kv_num_heads (" + std::to_string(kv_heads) + ")";
  }
  d.q_heads = q_heads, d.kv_heads = kv_heads;
  if (in.size() < 3 || !in[kKey].present() || !in[kValue].present()) {
    return "query, key and value are required";
  }
  const int32_t t = in[kQuery].dtype;
  const auto &q = in[kQuery].shape, &k = in[kKey].shape, &v = in[kValue].shape;
  if (q.size() != 3 || k.size() != 3 || v.size() != 3) {
    return "query, key and value must be 3-D (batch, sequence, heads * size)";
  }
  d.batch = q[0], d.seq = q[1];
  if (k[0] != d.batch || v[0] != d.batch || k[1] != d.seq || v[1] != d.seq) {
    return "query, key and value must have the same batch and sequence length";
  }
  if (q[2] % q_heads != 0 || v[2] % kv_heads != 0) {
    return "query's and value's last dims must divide into their heads";
  }
  d.dk = q[2] / q_heads, d.dv = v[2] / kv_heads;
  if (k[2] != kv_heads * d.dk) {
    return "key " + sdk::shape_string(k) + " must hold kv_num_heads heads of query's head size " +
           std::to_string(d.dk);
  }
  for (size_t i : {kKey, kValue, kDecay, kBeta}) {
    const Operand op = operand_at(in, i);
    if (op.present() && op.dtype != t) return "key, value, decay and beta must have query's dtype";
  }
  const Operand decay = operand_at(in, kDecay);
  if (d.gated) {
    if (!decay.present()) return "update_rule '" + rule + "' needs decay (input 4)";
    const auto& g = decay.shape;
    if (g.size() != 3 || g[0] != d.batch || g[1] != d.seq ||
        (g[2] != kv_heads * d.dk && g[2] != kv_heads)) {
      return "decay " + sdk::shape_string(g) + " must be (batch, sequence, kv_num_heads * d_k) " +
             "or (batch, sequence, kv_num_heads)";
    }
    d.head_decay = g[2] != kv_heads * d.dk;
  }
  const Operand beta = operand_at(in, kBeta);
  if (d.delta) {
    if (!beta.present()) return "update_rule '" + rule + "' needs beta (input 5)";
    const auto& b = beta.shape;
    if (b.size() != 3 || b[0] != d.batch || b[1] != d.seq || (b[2] != kv_heads && b[2] != 1)) {
      return "beta " + sdk::shape_string(b) + " must be (batch, sequence, kv_num_heads) or " +
             "(batch, sequence, 1)";
    }
    d.shared_beta = b[2] != kv_heads;
  }
  const Operand past = operand_at(in, kState);
  d.state_dtype = t;
  if (past.present()) {
    if (past.dtype != t && past.dtype != ENP_DTYPE_FLOAT32) {
      return "past_state must be float32 or query's dtype";
    }
    const std::vector<int64_t> want{d.batch, kv_heads, d.dk, d.dv};
    if (past.shape != want) {
      return "past_state " + sdk::shape_string(past.shape) + " must be " + sdk::shape_string(want);
    }
    d.state_dtype = past.dtype;
  }
  return std::nullopt;
}

std::vector<Operand> linear_outputs(const std::vector<Operand>& in, const LinearDims& d) {
  return {{in[kQuery].dtype, {d.batch, d.seq, d.q_heads * d.dv}},
          {d.state_dtype, {d.batch, d.kv_heads, d.dk, d.dv}}};
}

// Reads every element of a float buffer into double.
std::vector<double> widen(const Buffer& b) {
  std::vector<double> out(static_cast<size_t>(b.count()));
  dispatch_float(b.dtype, [&]<typename S>() {
    const S* p = b.as<const S>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = load(p[i]);
  });
  return out;
}

template <typename S>
void linear_typed(const KernelContext& ctx, const LinearDims& d) {
  const double scale_attr = ctx.attr_float("scale", 0.0);
  const double scale = scale_attr != 0.0 ? scale_attr : 1.0 / std::sqrt(static_cast<double>(d.dk));
  const S* q = ctx.inputs[kQuery].as<const S>();
  const S* k = ctx.inputs[kKey].as<const S>();
  const S* v = ctx.inputs[kValue].as<const S>();
  const S* decay = d.gated ? ctx.inputs[kDecay].as<const S>() : nullptr;
  const S* beta = d.delta ? ctx.inputs[kBeta].as<const S>() : nullptr;
  const std::vector<double> past =
      ctx.has_input(kState) ? widen(ctx.inputs[kState]) : std::vector<double>{};
  S* y = ctx.outputs[0].as<S>();
  const int64_t group = d.q_heads / d.kv_heads, dk = d.dk, dv = d.dv;
  const int64_t state_size = dk * dv;
  std::vector<double> states(static_cast<size_t>(d.batch * d.kv_heads * state_size), 0.0);
  if (!past.empty()) states = past;
  const int64_t work = d.batch * d.seq * d.q_heads * state_size * 4;
  // Each (batch, kv head) runs its own recurrence and writes its own output
  // columns, so the split never changes a result.
  parallel_for(d.batch * d.kv_heads, threads_for(ctx, work), [&](int64_t begin, int64_t end) {
    std::vector<double> retrieved(static_cast<size_t>(dv));
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / d.kv_heads, h = bh % d.kv_heads;
      double* s = states.data() + bh * state_size;
      for (int64_t t = 0; t < d.seq; ++t) {
        const int64_t token = b * d.seq + t;
        const S* kt = k + (token * d.kv_heads + h) * dk;
        const S* vt = v + (token * d.kv_heads + h) * dv;
        if (decay) {
          for (int64_t i = 0; i < dk; ++i) {
            const int64_t gi =
                d.head_decay ? token * d.kv_heads + h : (token * d.kv_heads + h) * dk + i;
            const double g = std::exp(load(decay[gi]));
            for (int64_t j = 0; j < dv; ++j) s[i * dv + j] *= g;
          }
        }
        if (beta) {
          // The write is beta * (v - S^T k), S already decayed.
          std::fill(retrieved.begin(), retrieved.end(), 0.0);
          for (int64_t i = 0; i < dk; ++i) {
            const double ki = load(kt[i]);
            for (int64_t j = 0; j < dv; ++j) {
              retrieved[static_cast<size_t>(j)] += s[i * dv + j] * ki;
            }
          }
          const double bt = load(beta[d.shared_beta ? token : token * d.kv_heads + h]);
          for (int64_t j = 0; j < dv; ++j) {
            auto& r = retrieved[static_cast<size_t>(j)];
            r = bt * (load(vt[j]) - r);
          }
        } else {
          for (int64_t j = 0; j < dv; ++j) {
            retrieved[static_cast<size_t>(j)] = load(vt[j]);
          }
        }
        for (int64_t i = 0; i < dk; ++i) {
          const double ki = load(kt[i]);
          for (int64_t j = 0; j < dv; ++j) {
            s[i * dv + j] += ki * retrieved[static_cast<size_t>(j)];
          }
        }
        for (int64_t qh = h * group; qh < (h + 1) * group; ++qh) {
          const S* qt = q + (token * d.q_heads + qh) * dk;
          S* out = y + (token * d.q_heads + qh) * dv;
          for (int64_t j = 0; j < dv; ++j) {
            double acc = 0;
            for (int64_t i = 0; i < dk; ++i) acc += load(qt[i]) * s[i * dv + j];
            out[j] = store<S>(scale * acc);
          }
        }
      }
    }
  });
  if (!wants(ctx, 1)) return;
  dispatch_float(ctx.outputs[1].dtype, [&]<typename P>() {
    P* present = ctx.outputs[1].as<P>();
    for (size_t i = 0; i < states.size(); ++i) present[i] = store<P>(states[i]);
  });
}

LinearDims linear_dims(const KernelContext& ctx) {
  LinearDims d;
  const auto in = buffer_operands(ctx.inputs);
  if (auto why = linear_problem(in, ctx.attr_int("q_num_heads", 0), ctx.attr_int("kv_num_heads", 0),
                                ctx.attr_string("update_rule", "gated_delta"), d)) {
    corrupt("LinearAttention: " + *why);
  }
  check_outputs(ctx, linear_outputs(in, d), "LinearAttention");
  return d;
}

void linear_kernel(const KernelContext& ctx) {
  const LinearDims d = linear_dims(ctx);
  dispatch_float(ctx.inputs[kQuery].dtype, [&]<typename S>() { linear_typed<S>(ctx, d); });
}

std::optional<std::string> linear_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  LinearDims d;
  const auto in = graph_operands(node, g);
  if (auto why =
          linear_problem(in, node.attr_int("q_num_heads", 0), node.attr_int("kv_num_heads", 0),
                         node.attr_string("update_rule", "gated_delta"), d)) {
    return why;
  }
  // chunk_size only tunes chunk-parallel prefill; this kernel runs the
  // recurrence token by token, which the spec defines as the result.
  return outputs_problem(graph_operands(node, g, true), linear_outputs(in, d));
}

}  // namespace

std::vector<OpEntry> sequence_ops() {
  return {
      {"CausalConvWithState", 27, 0, kFloats,
       "depthwise (C, 1, k) weight, optional bias and past_state, activation none/silu/swish; "
       "float64 math",
       &causal_check, &causal_kernel},
      {"LinearAttention", 27, 0, kFloats,
       "update_rule linear/gated/delta/gated_delta, GQA, per-channel or per-head decay, "
       "per-head or shared beta, past_state of T or float32; sequential float64 recurrence",
       &linear_check, &linear_kernel},
      {"SwiGLU", 28, 0, kFloats, "A and B of one shape; float64 math", &swiglu_check,
       &swiglu_kernel},
      {"TensorScatter", 24, 0, kAnyDtype,
       "axis not 0, modes linear and circular, int64 write_indices range-checked", &scatter_check,
       &scatter_kernel},
  };
}

}  // namespace eulernpu::kit
