// Shape rules of the sequence-model ops (see
// sdk/kit/src/kernels_sequence.cpp): LinearAttention,
// CausalConvWithState, TensorScatter, SwiGLU. Unknown dims (-1) agree with
// anything and propagate as unknown.
#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

void require_dtype(InferContext& ctx, size_t i, DType want, const std::string& what) {
  if (!ctx.has_input(i)) return;
  const DType got = ctx.input(i).dtype;
  ctx.require(got == DType::kUndefined || want == DType::kUndefined || got == want,
              what + " must be " + dtype_name(want) + ", not " + dtype_name(got));
}

// A known input of `rank` dims; false if its shape is unknown.
bool ranked(InferContext& ctx, size_t i, size_t rank, const std::string& what) {
  const ValueType& t = ctx.input(i);
  if (!t.known) return false;
  ctx.require(t.dims.size() == rank,
              what + " must be " + std::to_string(rank) + "-D, not " + shape_string(t.dims));
  return true;
}

// ---------------------------------------------------------------------------
// SwiGLU (opset 28): Y like A; B has A's dtype and shape (no broadcasting).

void swiglu(InferContext& ctx) {
  const ValueType &a = ctx.input(0), &b = ctx.input(1);
  require_dtype(ctx, 1, a.dtype, "B");
  if (a.known && b.known) {
    bool same = a.dims.size() == b.dims.size();
    for (size_t i = 0; same && i < a.dims.size(); ++i) same = agree(a.dims[i], b.dims[i]);
    ctx.require(same, "A " + shape_string(a.dims) + " and B " + shape_string(b.dims) +
                          " must have the same shape (SwiGLU does not broadcast)");
    ValueType y = a;
    for (size_t i = 0; i < y.dims.size(); ++i) y.dims[i] = known_of(a.dims[i], b.dims[i]);
    ctx.set_output(0, y);
    return;
  }
  ctx.set_output(0, a.known ? a : ValueType{a.dtype, b.dims, b.known});
}

// ---------------------------------------------------------------------------
// TensorScatter (opset 24): present_cache like past_cache; update differs
// from it only along `axis` (not the batch axis), where it is no longer.

void tensor_scatter(InferContext& ctx) {
  const ValueType &cache = ctx.input(0), &update = ctx.input(1);
  require_dtype(ctx, 1, cache.dtype, "update");
  require_dtype(ctx, 2, DType::kInt64, "write_indices");
  const std::string mode = ctx.attr_string("mode", "linear");
  ctx.require(mode == "linear" || mode == "circular",
              "mode '" + mode + "' is not 'linear' or 'circular'");
  ctx.set_output(0, cache);
  if (!cache.known) return;
  const auto rank = static_cast<int64_t>(cache.dims.size());
  const auto axis = static_cast<size_t>(ctx.axis(ctx.attr_int("axis", -2), rank));
  ctx.require(axis != 0, "axis must not be the batch axis 0");
  if (update.known) {
    bool ok = update.dims.size() == cache.dims.size();
    for (size_t i = 0; ok && i < cache.dims.size(); ++i) {
      ok = i == axis ? update.dims[i] < 0 || cache.dims[i] < 0 || update.dims[i] <= cache.dims[i]
                     : agree(update.dims[i], cache.dims[i]);
    }
    ctx.require(ok, "update " + shape_string(update.dims) + " must match past_cache " +
                        shape_string(cache.dims) + " but along axis " + std::to_string(axis) +
                        ", where it may be shorter");
  }
  if (ctx.has_input(2) && ranked(ctx, 2, 1, "write_indices")) {
    ctx.require(agree(ctx.input(2).dims[0], cache.dims[0]),
                "write_indices must have one entry per batch");
  }
}

// ---------------------------------------------------------------------------
// CausalConvWithState (opset 27): input (B, C, L), weight (C, 1, k), bias
// (C), past_state (B, C, k - 1); output like the input, present_state
// (B, C, k - 1).

void causal_conv(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  for (size_t i = 1; i <= 3; ++i) require_dtype(ctx, i, x.dtype, "weight, bias and past_state");
  const std::string act = ctx.attr_string("activation", "none");
  ctx.require(act == "none" || act == "silu" || act == "swish",
              "activation '" + act + "' is not 'none', 'silu' or 'swish'");
  int64_t batch = -1, channels = -1, state = -1;
  if (ranked(ctx, 0, 3, "input")) batch = x.dims[0], channels = x.dims[1];
  if (ranked(ctx, 1, 3, "weight")) {
    const auto& w = ctx.input(1).dims;
    ctx.require(agree(w[0], channels) && agree(w[1], 1) && (w[2] < 0 || w[2] >= 1),
                "weight " + shape_string(w) + " must be (channels, 1, k) with k >= 1");
    channels = known_of(channels, w[0]);
    if (w[2] >= 1) state = w[2] - 1;
  }
  if (ctx.has_input(2) && ranked(ctx, 2, 1, "bias")) {
    ctx.require(agree(ctx.input(2).dims[0], channels), "bias must have one entry per channel");
  }
  if (ctx.has_input(3) && ranked(ctx, 3, 3, "past_state")) {
    const auto& p = ctx.input(3).dims;
    ctx.require(agree(p[0], batch) && agree(p[1], channels) && agree(p[2], state),
                "past_state " + shape_string(p) + " must be (batch, channels, k - 1)");
    batch = known_of(batch, p[0]), channels = known_of(channels, p[1]);
    state = known_of(state, p[2]);
  }
  ctx.set_output(0, x);
  ctx.set_output(1, ValueType{x.dtype, {batch, channels, state}, true});
}

// ---------------------------------------------------------------------------
// LinearAttention (opset 27): Q (B, T, Hq*dk), K (B, T, Hkv*dk),
// V (B, T, Hkv*dv); output (B, T, Hq*dv) of Q's dtype, present_state
// (B, Hkv, dk, dv) of past_state's dtype (float32 or Q's), else Q's.

int64_t split(InferContext& ctx, int64_t hidden, int64_t heads, const char* what) {
  if (hidden < 0) return -1;
  ctx.require(hidden % heads == 0, std::string(what) + "'s last dim " + std::to_string(hidden) +
                                       " is not a multiple of its " + std::to_string(heads) +
                                       " heads");
  return hidden / heads;
}

void linear_attention(InferContext& ctx) {
  const ValueType& q = ctx.input(0);
  const int64_t hq = ctx.attr_int("q_num_heads", 0), hkv = ctx.attr_int("kv_num_heads", 0);
  ctx.require(hq > 0 && hkv > 0 && hq % hkv == 0, "q_num_heads (" + std::to_string(hq) +
                                                      ") must be a positive multiple of " +
                                                      "kv_num_heads (" + std::to_string(hkv) + ")");
  const std::string rule = ctx.attr_string("update_rule", "gated_delta");
  ctx.require(rule == "linear" || rule == "gated" || rule == "delta" || rule == "gated_delta",
              "update_rule '" + rule + "' is not linear, gated, delta or gated_delta");
  const bool gated = rule == "gated" || rule == "gated_delta";
  const bool delta = rule == "delta" || rule == "gated_delta";
  ctx.require(!gated || ctx.has_input(4), "update_rule '" + rule + "' needs decay (input 4)");
  ctx.require(!delta || ctx.has_input(5), "update_rule '" + rule + "' needs beta (input 5)");
  for (size_t i : {1, 2, 4, 5}) require_dtype(ctx, i, q.dtype, "key, value, decay and beta");
  DType state_dtype = q.dtype;
  if (ctx.has_input(3)) {
    state_dtype = ctx.input(3).dtype;
    ctx.require(state_dtype == q.dtype || state_dtype == DType::kFloat32 ||
                    state_dtype == DType::kUndefined || q.dtype == DType::kUndefined,
                "past_state must be float32 or query's dtype");
  }
  int64_t batch = -1, seq = -1, dk = -1, dv = -1;
  if (ranked(ctx, 0, 3, "query")) {
    batch = q.dims[0], seq = q.dims[1];
    dk = split(ctx, q.dims[2], hq, "query");
  }
  if (ranked(ctx, 1, 3, "key")) {
    const auto& k = ctx.input(1).dims;
    ctx.require(agree(k[0], batch) && agree(k[1], seq), "key must have query's batch and length");
    const int64_t kd = split(ctx, k[2], hkv, "key");
    ctx.require(agree(kd, dk), "key's head size must be query's");
    batch = known_of(batch, k[0]), seq = known_of(seq, k[1]), dk = known_of(dk, kd);
  }
  if (ranked(ctx, 2, 3, "value")) {
    const auto& v = ctx.input(2).dims;
    ctx.require(agree(v[0], batch) && agree(v[1], seq), "value must have query's batch and length");
    batch = known_of(batch, v[0]), seq = known_of(seq, v[1]);
    dv = split(ctx, v[2], hkv, "value");
  }
  if (gated && ranked(ctx, 4, 3, "decay")) {
    const auto& g = ctx.input(4).dims;
    ctx.require(agree(g[0], batch) && agree(g[1], seq) &&
                    (g[2] < 0 || g[2] == hkv || agree(g[2], times(hkv, dk))),
                "decay " + shape_string(g) +
                    " must be (batch, sequence, kv_num_heads * d_k) or (batch, sequence, "
                    "kv_num_heads)");
  }
  if (delta && ranked(ctx, 5, 3, "beta")) {
    const auto& b = ctx.input(5).dims;
    ctx.require(agree(b[0], batch) && agree(b[1], seq) && (b[2] < 0 || b[2] == hkv || b[2] == 1),
                "beta " + shape_string(b) +
                    " must be (batch, sequence, kv_num_heads) or (batch, sequence, 1)");
  }
  if (ctx.has_input(3) && ranked(ctx, 3, 4, "past_state")) {
    const auto& p = ctx.input(3).dims;
    ctx.require(agree(p[0], batch) && agree(p[1], hkv) && agree(p[2], dk) && agree(p[3], dv),
                "past_state " + shape_string(p) + " must be (batch, kv_num_heads, d_k, d_v)");
    batch = known_of(batch, p[0]), dk = known_of(dk, p[2]), dv = known_of(dv, p[3]);
  }
  ctx.set_output(0, ValueType{q.dtype, {batch, seq, times(hq, dv)}, true});
  ctx.set_output(1, ValueType{state_dtype, {batch, hkv, dk, dv}, true});
}

}  // namespace

std::vector<OpRule> sequence_rules() {
  return {
      {"CausalConvWithState", &causal_conv, nullptr},
      {"LinearAttention", &linear_attention, nullptr},
      {"SwiGLU", &swiglu, nullptr},
      {"TensorScatter", &tensor_scatter, nullptr},
  };
}

}  // namespace eulernpu::host::ir
