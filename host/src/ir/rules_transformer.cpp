// Shape rules of the transformer ops (see sdk/kit/src/kernels_transformer.cpp).
// Unknown dims (-1) agree with anything and propagate as unknown.
#include <array>

#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

ValueType unknown_like(const ValueType& t) { return ValueType{t.dtype, {}, false}; }

// Head size of a 3-D operand's hidden dim split into `heads`.
int64_t head_size(InferContext& ctx, int64_t hidden, int64_t heads, const char* what) {
  ctx.require(heads > 0, "3-D inputs need q_num_heads and kv_num_heads > 0");
  if (hidden < 0) return -1;
  ctx.require(hidden % heads == 0, std::string(what) + "'s hidden size " + std::to_string(hidden) +
                                       " is not a multiple of its " + std::to_string(heads) +
                                       " heads");
  return hidden / heads;
}

void require_dtype(InferContext& ctx, size_t i, DType want, const char* what) {
  if (!ctx.has_input(i)) return;
  const DType got = ctx.input(i).dtype;
  ctx.require(got == DType::kUndefined || want == DType::kUndefined || got == want,
              std::string(what) + " must be " + dtype_name(want) + ", not " + dtype_name(got));
}

// ---------------------------------------------------------------------------
// Attention (opsets 23, 24). Inputs Q, K, V, attn_mask, past_key,
// past_value, nonpad_kv_seqlen; outputs Y, present_key, present_value,
// qk_matmul_output.

struct AttnDims {
  int64_t batch = -1, q_heads = -1, kv_heads = -1, q_len = -1, kv_len = -1, past = 0;
  int64_t head = -1, v_head = -1;
  bool three_d = false;
  int64_t total() const { return plus(past, kv_len); }
};

void attention_qkv(InferContext& ctx, AttnDims& d) {
  const auto &q = ctx.input(0).dims, &k = ctx.input(1).dims, &v = ctx.input(2).dims;
  ctx.require(q.size() == k.size() && q.size() == v.size() && (q.size() == 3 || q.size() == 4),
              "Q, K and V must all be 3-D or all be 4-D");
  d.three_d = q.size() == 3;
  int64_t k_head = -1, v_heads = -1, v_len = -1;
  const int64_t q_attr = ctx.attr_int("q_num_heads", 0), kv_attr = ctx.attr_int("kv_num_heads", 0);
  if (d.three_d) {
    d.q_heads = q_attr, d.kv_heads = kv_attr, v_heads = kv_attr;
    d.q_len = q[1], d.kv_len = k[1], v_len = v[1];
    d.head = head_size(ctx, q[2], d.q_heads, "Q");
    k_head = head_size(ctx, k[2], d.kv_heads, "K");
    d.v_head = head_size(ctx, v[2], d.kv_heads, "V");
  } else {
    d.q_heads = q[1], d.q_len = q[2], d.head = q[3];
    d.kv_heads = k[1], d.kv_len = k[2], k_head = k[3];
    v_heads = v[1], v_len = v[2], d.v_head = v[3];
    ctx.require(
        (q_attr <= 0 || agree(q_attr, d.q_heads)) && (kv_attr <= 0 || agree(kv_attr, d.kv_heads)),
        "q_num_heads and kv_num_heads must match the 4-D inputs' head counts");
  }
  ctx.require(agree(q[0], k[0]) && agree(q[0], v[0]) && agree(k[0], v[0]),
              "Q, K and V must have the same batch size");
  d.batch = known_of(q[0], known_of(k[0], v[0]));
  ctx.require(agree(d.head, k_head), "Q and K must have the same head size");
  d.head = known_of(d.head, k_head);
  ctx.require(agree(d.kv_heads, v_heads) && agree(d.kv_len, v_len),
              "K and V must have the same heads and sequence length");
  d.kv_heads = known_of(d.kv_heads, v_heads);
  d.kv_len = known_of(d.kv_len, v_len);
  if (d.q_heads >= 0 && d.kv_heads >= 0) {
    ctx.require(d.kv_heads > 0 ? d.q_heads % d.kv_heads == 0 : d.q_heads == 0,
                "q heads (" + std::to_string(d.q_heads) + ") must be a multiple of kv heads (" +
                    std::to_string(d.kv_heads) + ")");
  }
}

void attention_cache(InferContext& ctx, AttnDims& d) {
  ctx.require(ctx.has_input(4) == ctx.has_input(5),
              "past_key and past_value must be given together");
  if (!ctx.has_input(4)) return;
  const ValueType &pk = ctx.input(4), &pv = ctx.input(5);
  if (!pk.known || !pv.known) {
    d.past = -1;
    return;
  }
  ctx.require(pk.dims.size() == 4 && pv.dims.size() == 4, "past_key and past_value must be 4-D");
  const std::array<int64_t, 4> key{d.batch, d.kv_heads, pk.dims[2], d.head};
  const std::array<int64_t, 4> value{d.batch, d.kv_heads, pk.dims[2], d.v_head};
  for (size_t i = 0; i < 4; ++i) {
    ctx.require(agree(pk.dims[i], key[i]) && agree(pv.dims[i], value[i]),
                "past_key " + shape_string(pk.dims) + " and past_value " + shape_string(pv.dims) +
                    " do not match K and V");
  }
  d.past = known_of(pk.dims[2], pv.dims[2]);
}

void attention_mask(InferContext& ctx, const AttnDims& d) {
  if (!ctx.has_input(3) || !ctx.input(3).known) return;
  const ValueType& mask = ctx.input(3);
  const auto& m = mask.dims;
  ctx.require(mask.dtype == DType::kBool || mask.dtype == ctx.input(0).dtype ||
                  mask.dtype == DType::kUndefined,
              "attn_mask must be bool or Q's dtype");
  ctx.require(!m.empty() && m.size() <= 4, "attn_mask must have rank 1 to 4");
  const int64_t total = d.total();
  ctx.require(m.back() < 0 || total < 0 || m.back() <= total,
              "attn_mask's last dim " + std::to_string(m.back()) +
                  " exceeds the total sequence length " + std::to_string(total));
  const std::array<int64_t, 3> lead{d.batch, d.q_heads, d.q_len};
  for (size_t i = 0; i + 1 < m.size(); ++i) {
    const int64_t want = lead[3 - (m.size() - 1) + i];
    ctx.require(m[i] == 1 || agree(m[i], want),
                "attn_mask " + shape_string(m) +
                    " does not broadcast to (batch, q heads, q length, total length)");
  }
}

void attention_nonpad(InferContext& ctx, const AttnDims& d) {
  if (!ctx.has_input(6)) return;
  require_dtype(ctx, 6, DType::kInt64, "nonpad_kv_seqlen");
  ctx.require(!ctx.has_input(4), "nonpad_kv_seqlen cannot be used with past_key");
  const ValueType& n = ctx.input(6);
  ctx.require(!n.known || (n.dims.size() == 1 && agree(n.dims[0], d.batch)),
              "nonpad_kv_seqlen must have shape (batch,)");
}

void attention(InferContext& ctx) {
  const ValueType& q = ctx.input(0);
  const DType dtype = q.dtype;
  for (size_t i : {1, 2, 4, 5}) require_dtype(ctx, i, dtype, "K, V, past_key and past_value");
  if (!q.known || !ctx.input(1).known || !ctx.input(2).known) {
    for (size_t i = 0; i < ctx.output_count(); ++i) ctx.set_output(i, unknown_like(q));
    return;
  }
  AttnDims d;
  attention_qkv(ctx, d);
  attention_cache(ctx, d);
  attention_mask(ctx, d);
  attention_nonpad(ctx, d);
  const int64_t total = d.total();
  const std::vector<int64_t> y =
      d.three_d ? std::vector<int64_t>{d.batch, d.q_len, times(d.q_heads, d.v_head)}
                : std::vector<int64_t>{d.batch, d.q_heads, d.q_len, d.v_head};
  ctx.set_output(0, ValueType{dtype, y, true});
  ctx.set_output(1, ValueType{dtype, {d.batch, d.kv_heads, total, d.head}, true});
  ctx.set_output(2, ValueType{dtype, {d.batch, d.kv_heads, total, d.v_head}, true});
  ctx.set_output(3, ValueType{dtype, {d.batch, d.q_heads, d.q_len, total}, true});
}

// ---------------------------------------------------------------------------
// RMSNormalization: Y like X; Scale broadcasts to X.

bool broadcasts_to(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    const int64_t d = from[from.size() - 1 - i];
    if (d != 1 && !agree(d, to[to.size() - 1 - i])) return false;
  }
  return true;
}

void rms_norm(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  require_dtype(ctx, 1, x.dtype, "Scale");
  if (x.known) {
    ctx.axis(ctx.attr_int("axis", -1), static_cast<int64_t>(x.dims.size()));
    const ValueType& scale = ctx.input(1);
    ctx.require(
        !scale.known || broadcasts_to(scale.dims, x.dims),
        "Scale " + shape_string(scale.dims) + " does not broadcast to X " + shape_string(x.dims));
  }
  ctx.set_output(0, x);
}

// ---------------------------------------------------------------------------
// RotaryEmbedding: output like the input. X is (B, H, S, D), or (B, S, H*D)
// with num_heads; caches (max_position, rot/2) with position_ids (B, S), or
// (B, S, rot/2) without.

void require_shape(InferContext& ctx, const ValueType& t, const std::vector<int64_t>& want,
                   const std::string& what) {
  if (!t.known) return;
  bool ok = t.dims.size() == want.size();
  for (size_t i = 0; ok && i < want.size(); ++i) ok = agree(t.dims[i], want[i]);
  ctx.require(ok, what + " " + shape_string(t.dims) + " must be " + shape_string(want));
}

void rotary(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  require_dtype(ctx, 1, x.dtype, "cos_cache");
  require_dtype(ctx, 2, x.dtype, "sin_cache");
  require_dtype(ctx, 3, DType::kInt64, "position_ids");
  ctx.set_output(0, x);
  if (!x.known) return;
  ctx.require(x.dims.size() == 3 || x.dims.size() == 4, "input must be 3-D or 4-D");
  const bool three_d = x.dims.size() == 3;
  const int64_t batch = x.dims[0], seq = three_d ? x.dims[1] : x.dims[2];
  const int64_t head =
      three_d ? head_size(ctx, x.dims[2], ctx.attr_int("num_heads", 0), "input") : x.dims[3];
  const int64_t rot_attr = ctx.attr_int("rotary_embedding_dim", 0);
  const int64_t rot = rot_attr == 0 ? head : rot_attr;
  if (rot >= 0 || rot_attr != 0) {
    ctx.require(rot >= 0 && rot % 2 == 0 && (head < 0 || rot <= head),
                "rotary_embedding_dim " + std::to_string(rot) +
                    " must be even and at most the head size " + std::to_string(head));
  }
  const int64_t half = rot < 0 ? -1 : rot / 2;
  if (ctx.has_input(3)) {
    require_shape(ctx, ctx.input(3), {batch, seq}, "position_ids");
    const ValueType& cos = ctx.input(1);
    const int64_t positions = cos.known && cos.dims.size() == 2 ? cos.dims[0] : -1;
    require_shape(ctx, ctx.input(1), {positions, half}, "cos_cache");
    require_shape(ctx, ctx.input(2), {positions, half}, "sin_cache");
  } else {
    require_shape(ctx, ctx.input(1), {batch, seq, half}, "cos_cache");
    require_shape(ctx, ctx.input(2), {batch, seq, half}, "sin_cache");
  }
}

}  // namespace

std::vector<OpRule> transformer_rules() {
  return {
      {"Attention", &attention, nullptr},
      {"RMSNormalization", &rms_norm, nullptr},
      {"RotaryEmbedding", &rotary, nullptr},
      {"Swish", &same_as_input, nullptr},
  };
}

}  // namespace eulernpu::host::ir
