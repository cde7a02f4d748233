// Transformer ops: Attention, RMSNormalization, RotaryEmbedding, Swish.
//
// Precision: every kernel reads its elements into float64, computes there
// (dot products, softmax and norms accumulate in float64 in a fixed order)
// and rounds each output element once to the storage type. float16 is IEEE
// half; ONNX's float16 attention cases expect exactly this rounding.
//
// Lowering and the kernels validate shapes with the same functions
// (attention_problem, rotary_problem, rms_problem), so what lowers is
// exactly what runs, and a corrupt artifact is rejected before any access.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

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
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------
// Operands: an input's dtype and shape, as lowering sees it in the graph
// and the kernel in its buffers, so both validate with the same code.

std::string input_name(size_t i) { return "input " + std::to_string(i); }

// Present inputs in `which` have the first input's dtype.
std::optional<std::string> same_dtype(const std::vector<Operand>& in,
                                      std::initializer_list<size_t> which) {
  for (size_t i : which) {
    const Operand op = operand_at(in, i);
    if (op.present() && op.dtype != in[0].dtype) {
      return input_name(i) + " must be " + sdk::dtype_name(in[0].dtype) + " like input 0";
    }
  }
  return std::nullopt;
}

// Declared output shapes must be what the op computes.
std::optional<std::string> outputs_problem(const std::vector<Operand>& outs,
                                           const std::vector<std::vector<int64_t>>& expected) {
  for (size_t i = 0; i < outs.size() && i < expected.size(); ++i) {
    if (outs[i].present() && outs[i].shape != expected[i]) {
      return "output " + std::to_string(i) + " has shape " + sdk::shape_string(outs[i].shape) +
             " but the op computes " + sdk::shape_string(expected[i]);
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Swish (opset 24): y = x * sigmoid(alpha * x).

template <typename S>
void swish_typed(const KernelContext& ctx) {
  const Buffer& x = ctx.inputs[0];
  if (ctx.outputs[0].count() != x.count()) corrupt("Swish's output does not match its input");
  const double alpha = ctx.attr_float("alpha", 1.0);
  const S* in = x.as<const S>();
  S* out = ctx.outputs[0].as<S>();
  parallel_for(x.count(), threads_for(ctx, x.count()), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const double v = load(in[i]);
      out[i] = store<S>(v / (1.0 + std::exp(-alpha * v)));
    }
  });
}

void swish_kernel(const KernelContext& ctx) {
  dispatch_float(ctx.inputs[0].dtype, [&]<typename S>() { swish_typed<S>(ctx); });
}

// ---------------------------------------------------------------------------
// RMSNormalization (opset 23): y = x / sqrt(mean(x^2) + epsilon) * scale,
// the mean over the dims from `axis` on; scale broadcasts to X.

std::optional<std::string> rms_problem(const std::vector<Operand>& in, int64_t axis) {
  if (in.size() < 2 || !in[1].present()) return "Scale (input 1) is required";
  if (auto why = same_dtype(in, {1})) return why;
  const auto rank = static_cast<int64_t>(in[0].shape.size());
  if (axis < -rank || axis >= rank) {
    return "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank);
  }
  if (!broadcasts_to(in[1].shape, in[0].shape)) {
    return "Scale " + sdk::shape_string(in[1].shape) + " does not broadcast to X " +
           sdk::shape_string(in[0].shape);
  }
  return std::nullopt;
}

// Flat offsets, in row-major order over `dims`, of the elements `strides`
// address.
std::vector<int64_t> offsets(const std::vector<int64_t>& dims,
                             const std::vector<int64_t>& strides) {
  std::vector<int64_t> out(static_cast<size_t>(product(dims)));
  std::vector<int64_t> idx(dims.size(), 0);
  for (int64_t& o : out) {
    o = 0;
    for (size_t d = 0; d < dims.size(); ++d) o += idx[d] * strides[d];
    for (size_t d = dims.size(); d-- > 0;) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

template <typename S>
void rms_typed(const KernelContext& ctx, size_t axis) {
  const Buffer& x = ctx.inputs[0];
  const Buffer& w = ctx.inputs[1];
  // Scale's offset splits into a part from the leading dims and one from
  // the normalized dims, since broadcast strides are linear.
  const auto strides = broadcast_strides(w.shape, x.shape.size());
  const std::vector<int64_t> lead(x.shape.begin(), x.shape.begin() + axis);
  const std::vector<int64_t> norm(x.shape.begin() + axis, x.shape.end());
  const auto group_offset = offsets(lead, {strides.begin(), strides.begin() + axis});
  const auto inner_offset = offsets(norm, {strides.begin() + axis, strides.end()});
  const int64_t n = product(norm);
  const double eps = ctx.attr_float("epsilon", 1e-5);
  const S* in = x.as<const S>();
  const S* scale = w.as<const S>();
  S* out = ctx.outputs[0].as<S>();
  const auto groups = static_cast<int64_t>(group_offset.size());
  parallel_for(groups, threads_for(ctx, x.count()), [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g) {
      const S* xs = in + g * n;
      S* ys = out + g * n;
      double sq = 0;
      for (int64_t i = 0; i < n; ++i) sq += load(xs[i]) * load(xs[i]);
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
      const S* ws = scale + group_offset[static_cast<size_t>(g)];
      for (int64_t i = 0; i < n; ++i) {
        ys[i] = store<S>(load(xs[i]) * inv * load(ws[inner_offset[static_cast<size_t>(i)]]));
      }
    }
  });
}

void rms_kernel(const KernelContext& ctx) {
  const auto in = buffer_operands(ctx.inputs);
  int64_t axis = ctx.attr_int("axis", -1);
  if (auto why = rms_problem(in, axis)) corrupt("RMSNormalization: " + *why);
  if (ctx.outputs[0].shape != ctx.inputs[0].shape) corrupt("RMSNormalization's output shape");
  if (axis < 0) axis += static_cast<int64_t>(in[0].shape.size());
  dispatch_float(in[0].dtype, [&]<typename S>() { rms_typed<S>(ctx, static_cast<size_t>(axis)); });
}

std::optional<std::string> rms_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (node.attr_int("stash_type", 1) != 1) {
    return "stash_type other than 1 (float32) is not supported";
  }
  return rms_problem(graph_operands(node, g), node.attr_int("axis", -1));
}

// ---------------------------------------------------------------------------
// RotaryEmbedding (opset 23): rotates pairs of each head's first
// rotary_embedding_dim channels by the angle cached for the token's
// position. X is (B, H, S, D), or (B, S, H*D) with num_heads; the caches are
// (max_position, rot/2) indexed by position_ids (B, S), or (B, S, rot/2).

struct RotaryDims {
  int64_t batch = 0, heads = 0, seq = 0, head = 0, half = 0, max_position = 0;
  bool three_d = false;
};

std::optional<std::string> rotary_problem(const std::vector<Operand>& in, int64_t num_heads,
                                          int64_t rotary_dim, RotaryDims& d) {
  if (in.size() < 3 || !in[1].present() || !in[2].present()) {
    return "cos_cache and sin_cache are required";
  }
  if (auto why = same_dtype(in, {1, 2})) return why;
  const auto& x = in[0].shape;
  if (x.size() != 3 && x.size() != 4) return "input must be 3-D or 4-D";
  d.three_d = x.size() == 3;
  d.batch = x[0];
  if (d.three_d) {
    if (num_heads <= 0) return "a 3-D input needs num_heads > 0";
    if (x[2] % num_heads != 0) {
      return "hidden size " + std::to_string(x[2]) + " is not a multiple of num_heads " +
             std::to_string(num_heads);
    }
    d.heads = num_heads, d.seq = x[1], d.head = x[2] / num_heads;
  } else {
    d.heads = x[1], d.seq = x[2], d.head = x[3];
  }
  const int64_t rot = rotary_dim == 0 ? d.head : rotary_dim;
  if (rot < 0 || rot > d.head || rot % 2 != 0) {
    return "rotary_embedding_dim " + std::to_string(rot) + " must be even and at most the head " +
           "size " + std::to_string(d.head);
  }
  d.half = rot / 2;
  const Operand pos = operand_at(in, 3);
  std::vector<int64_t> cache{d.batch, d.seq, d.half};
  if (pos.present()) {
    if (pos.dtype != ENP_DTYPE_INT64) return "position_ids must be int64";
    if (pos.shape != std::vector<int64_t>{d.batch, d.seq}) {
      return "position_ids " + sdk::shape_string(pos.shape) + " must be (batch, sequence) " +
             sdk::shape_string(std::vector<int64_t>{d.batch, d.seq});
    }
    if (in[1].shape.size() != 2) return "with position_ids, the caches must be 2-D";
    d.max_position = in[1].shape[0];
    cache = {d.max_position, d.half};
  }
  for (size_t i = 1; i <= 2; ++i) {
    if (in[i].shape != cache) {
      return input_name(i) + " " + sdk::shape_string(in[i].shape) + " must be " +
             sdk::shape_string(cache);
    }
  }
  return std::nullopt;
}

// Cache rows (offsets into cos/sin) of each (batch, position), checking
// position_ids before any thread reads through them.
std::vector<int64_t> cache_rows(const KernelContext& ctx, const RotaryDims& d) {
  std::vector<int64_t> rows(static_cast<size_t>(d.batch * d.seq));
  const int64_t* pos = ctx.has_input(3) ? ctx.inputs[3].as<const int64_t>() : nullptr;
  for (size_t r = 0; r < rows.size(); ++r) {
    int64_t p = static_cast<int64_t>(r);
    if (pos) {
      p = pos[r];
      if (p < 0 || p >= d.max_position) {
        index_out_of_range("RotaryEmbedding: position_ids holds " + std::to_string(p) +
                           ", outside the caches' " + std::to_string(d.max_position) +
                           " positions");
      }
    }
    rows[r] = p * d.half;
  }
  return rows;
}

template <typename S>
void rotary_typed(const KernelContext& ctx, const RotaryDims& d) {
  const auto rows = cache_rows(ctx, d);
  const bool interleaved = ctx.attr_int("interleaved", 0) != 0;
  const S* x = ctx.inputs[0].as<const S>();
  const S* cos = ctx.inputs[1].as<const S>();
  const S* sin = ctx.inputs[2].as<const S>();
  S* y = ctx.outputs[0].as<S>();
  const int64_t lines = d.batch * d.heads * d.seq;
  parallel_for(lines, threads_for(ctx, lines * d.head), [&](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      // line enumerates (b, h, s); the element offset depends on the layout.
      const int64_t b = line / (d.heads * d.seq), h = line / d.seq % d.heads, s = line % d.seq;
      const int64_t base =
          (d.three_d ? (b * d.seq + s) * d.heads + h : (b * d.heads + h) * d.seq + s) * d.head;
      const int64_t row = rows[static_cast<size_t>(b * d.seq + s)];
      for (int64_t k = 0; k < d.half; ++k) {
        const int64_t i1 = interleaved ? 2 * k : k, i2 = interleaved ? 2 * k + 1 : k + d.half;
        const double c = load(cos[row + k]), sn = load(sin[row + k]);
        const double x1 = load(x[base + i1]), x2 = load(x[base + i2]);
        y[base + i1] = store<S>(c * x1 - sn * x2);
        y[base + i2] = store<S>(sn * x1 + c * x2);
      }
      for (int64_t k = 2 * d.half; k < d.head; ++k) y[base + k] = x[base + k];
    }
  });
}

void rotary_kernel(const KernelContext& ctx) {
  RotaryDims d;
  if (auto why = rotary_problem(buffer_operands(ctx.inputs), ctx.attr_int("num_heads", 0),
                                ctx.attr_int("rotary_embedding_dim", 0), d)) {
    corrupt("RotaryEmbedding: " + *why);
  }
  if (ctx.outputs[0].shape != ctx.inputs[0].shape) corrupt("RotaryEmbedding's output shape");
  dispatch_float(ctx.inputs[0].dtype, [&]<typename S>() { rotary_typed<S>(ctx, d); });
}

std::optional<std::string> rotary_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  RotaryDims d;
  return rotary_problem(graph_operands(node, g), node.attr_int("num_heads", 0),
                        node.attr_int("rotary_embedding_dim", 0), d);
}

// ---------------------------------------------------------------------------
// Attention (opsets 23, 24): Y = softmax(softcap(scale * Q K^T) + bias) V
// per head, with grouped K/V heads (GQA), a KV cache (past + new = present),
// and a bias from attn_mask (bool: attend or not; float: added; its last
// axis padded with "masked" up to the total length), is_causal and
// nonpad_kv_seqlen. A row every bias masks gets zero weights, as ONNX's
// function body defines it, rather than softmax's NaN.

enum AttentionInput : size_t { kQ, kK, kV, kMask, kPastKey, kPastValue, kNonpad };

struct AttnDims {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, past = 0, total = 0;
  int64_t head = 0, v_head = 0;
  bool three_d = false;

  int64_t group() const { return kv_heads > 0 ? q_heads / kv_heads : 1; }
  std::vector<int64_t> y_shape() const {
    if (three_d) return {batch, q_len, q_heads * v_head};
    return {batch, q_heads, q_len, v_head};
  }
  std::vector<std::vector<int64_t>> output_shapes() const {
    return {y_shape(),
            {batch, kv_heads, total, head},
            {batch, kv_heads, total, v_head},
            {batch, q_heads, q_len, total}};
  }
};

// Heads and head size of a 3-D (B, L, heads * size) operand.
std::optional<std::string> split_hidden(int64_t hidden, int64_t heads, const char* what,
                                        int64_t& size) {
  if (heads <= 0) return std::string("3-D inputs need q_num_heads and kv_num_heads > 0");
  if (hidden % heads != 0) {
    return std::string(what) + "'s hidden size " + std::to_string(hidden) +
           " is not a multiple of its " + std::to_string(heads) + " heads";
  }
  size = hidden / heads;
  return std::nullopt;
}

std::optional<std::string> qkv_dims(const std::vector<Operand>& in, int64_t q_heads_attr,
                                    int64_t kv_heads_attr, AttnDims& d) {
  const auto &q = in[kQ].shape, &k = in[kK].shape, &v = in[kV].shape;
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4)) {
    return "Q, K and V must all be 3-D or all be 4-D";
  }
  d.three_d = q.size() == 3;
  d.batch = q[0];
  int64_t k_head = 0;
  if (d.three_d) {
    d.q_heads = q_heads_attr, d.kv_heads = kv_heads_attr, d.q_len = q[1], d.kv_len = k[1];
    if (auto why = split_hidden(q[2], d.q_heads, "Q", d.head)) return why;
    if (auto why = split_hidden(k[2], d.kv_heads, "K", k_head)) return why;
    if (auto why = split_hidden(v[2], d.kv_heads, "V", d.v_head)) return why;
    if (v[1] != d.kv_len) return "K and V must have the same sequence length";
  } else {
    d.q_heads = q[1], d.kv_heads = k[1], d.q_len = q[2], d.head = q[3];
    d.kv_len = k[2], k_head = k[3], d.v_head = v[3];
    if (v[1] != d.kv_heads || v[2] != d.kv_len) {
      return "V " + sdk::shape_string(v) + " must have K's heads and sequence length";
    }
    if ((q_heads_attr > 0 && q_heads_attr != d.q_heads) ||
        (kv_heads_attr > 0 && kv_heads_attr != d.kv_heads)) {
      return "q_num_heads and kv_num_heads must match the 4-D inputs' head counts";
    }
  }
  if (k[0] != d.batch || v[0] != d.batch) return "Q, K and V must have the same batch size";
  if (k_head != d.head) return "Q and K must have the same head size";
  if (d.kv_heads > 0 ? d.q_heads % d.kv_heads != 0 : d.q_heads != 0) {
    return "q heads (" + std::to_string(d.q_heads) + ") must be a multiple of kv heads (" +
           std::to_string(d.kv_heads) + ")";
  }
  return std::nullopt;
}

std::optional<std::string> cache_dims(const std::vector<Operand>& in, AttnDims& d) {
  const Operand pk = operand_at(in, kPastKey), pv = operand_at(in, kPastValue);
  if (pk.present() != pv.present()) return "past_key and past_value must be given together";
  d.past = 0;
  if (pk.present()) {
    if (pk.shape.size() != 4) return "past_key must be 4-D";
    d.past = pk.shape[2];
    const std::vector<int64_t> key{d.batch, d.kv_heads, d.past, d.head};
    const std::vector<int64_t> value{d.batch, d.kv_heads, d.past, d.v_head};
    if (pk.shape != key || pv.shape != value) {
      return "past_key " + sdk::shape_string(pk.shape) + " and past_value " +
             sdk::shape_string(pv.shape) + " must be " + sdk::shape_string(key) + " and " +
             sdk::shape_string(value);
    }
  }
  d.total = d.past + d.kv_len;
  return std::nullopt;
}

// attn_mask broadcasts to (B, q heads, q_len, L) with L <= total length.
std::optional<std::string> mask_problem(const Operand& mask, const AttnDims& d) {
  if (!mask.present()) return std::nullopt;
  const auto& m = mask.shape;
  if (m.empty() || m.size() > 4) return "attn_mask must have rank 1 to 4";
  if (m.back() > d.total) {
    return "attn_mask's last dim " + std::to_string(m.back()) + " exceeds the total sequence " +
           "length " + std::to_string(d.total);
  }
  const std::array<int64_t, 3> lead{d.batch, d.q_heads, d.q_len};
  for (size_t i = 0; i + 1 < m.size(); ++i) {
    const int64_t want = lead[3 - (m.size() - 1) + i];
    if (m[i] != 1 && m[i] != want) {
      return "attn_mask " + sdk::shape_string(m) + " does not broadcast to (batch, q heads, " +
             "q length, total length)";
    }
  }
  return std::nullopt;
}

std::optional<std::string> attention_problem(const std::vector<Operand>& in, int64_t q_heads_attr,
                                             int64_t kv_heads_attr, AttnDims& d) {
  if (in.size() < 3 || !in[kK].present() || !in[kV].present()) return "Q, K and V are required";
  if (auto why = same_dtype(in, {kK, kV, kPastKey, kPastValue})) return why;
  if (auto why = qkv_dims(in, q_heads_attr, kv_heads_attr, d)) return why;
  if (auto why = cache_dims(in, d)) return why;
  const Operand mask = operand_at(in, kMask);
  if (mask.present() && mask.dtype != ENP_DTYPE_BOOL && mask.dtype != in[kQ].dtype) {
    return "attn_mask must be bool or Q's dtype";
  }
  if (auto why = mask_problem(mask, d)) return why;
  const Operand nonpad = operand_at(in, kNonpad);
  if (nonpad.present()) {
    if (nonpad.dtype != ENP_DTYPE_INT64 || nonpad.shape != std::vector<int64_t>{d.batch}) {
      return "nonpad_kv_seqlen must be int64 of shape (batch,)";
    }
    if (operand_at(in, kPastKey).present()) {
      return "nonpad_kv_seqlen together with past_key is not supported";
    }
  }
  return std::nullopt;
}

// What the kernel needs besides the dims, read once.
struct AttnParams {
  double scale = 1;
  double softcap = 0;
  bool causal = false;
  int64_t qk_mode = 0;
};

AttnParams attention_params(const KernelContext& ctx, const AttnDims& d) {
  AttnParams p;
  p.scale = ctx.has_attr("scale") ? ctx.attr_float("scale", 1.0)
                                  : 1.0 / std::sqrt(static_cast<double>(d.head));
  p.softcap = ctx.attr_float("softcap", 0.0);
  p.causal = ctx.attr_int("is_causal", 0) != 0;
  p.qk_mode = ctx.attr_int("qk_matmul_output_mode", 0);
  return p;
}

// Row t of K's or V's kv head (b, g) in the present sequence: a cached row
// below the past length, else a new one in the 3-D or 4-D layout.
template <typename S>
const S* kv_row(const S* past, const S* fresh, const AttnDims& d, int64_t b, int64_t g, int64_t t,
                int64_t size) {
  if (t < d.past) return past + ((b * d.kv_heads + g) * d.past + t) * size;
  const int64_t n = t - d.past;
  if (d.three_d) return fresh + ((b * d.kv_len + n) * d.kv_heads + g) * size;
  return fresh + ((b * d.kv_heads + g) * d.kv_len + n) * size;
}

// Present K or V, (B, kv heads, total, size), in double.
template <typename S>
std::vector<double> present(const Buffer* past, const Buffer& fresh, const AttnDims& d,
                            int64_t size) {
  std::vector<double> out(static_cast<size_t>(d.batch * d.kv_heads * d.total * size));
  const S* p = past ? past->as<const S>() : nullptr;
  size_t o = 0;
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t g = 0; g < d.kv_heads; ++g) {
      for (int64_t t = 0; t < d.total; ++t) {
        const S* row = kv_row(p, fresh.as<const S>(), d, b, g, t, size);
        for (int64_t i = 0; i < size; ++i) out[o++] = load(row[i]);
      }
    }
  }
  return out;
}

template <typename S>
void write_all(const std::vector<double>& values, const Buffer& out) {
  S* dst = out.as<S>();
  for (size_t i = 0; i < values.size(); ++i) dst[i] = store<S>(values[i]);
}

// The additive bias of one query row: attn_mask, causal frontier and
// key padding, each 0 or -inf (a float mask adds its values). Added in the
// order ONNX's function body adds them, so +inf + -inf gives its NaN.
template <typename S>
class BiasRow {
 public:
  BiasRow(const KernelContext& ctx, const AttnDims& d, bool causal) : d_(d), causal_(causal) {
    if (ctx.has_input(kMask)) {
      mask_ = &ctx.inputs[kMask];
      strides_ = broadcast_strides(mask_->shape, 4);
      mask_len_ = mask_->shape.back();
    }
    if (ctx.has_input(kNonpad)) nonpad_ = ctx.inputs[kNonpad].as<const int64_t>();
  }

  void fill(int64_t b, int64_t h, int64_t i, std::vector<double>& bias) const {
    for (int64_t j = 0; j < d_.total; ++j) {
      double v = mask_ ? mask_value(b, h, i, j) : 0.0;
      if (causal_ && !causal_allows(b, i, j)) v += -kInf;
      if (nonpad_ && !(j < nonpad_[b])) v += -kInf;
      bias[static_cast<size_t>(j)] = v;
    }
  }

 private:
  double mask_value(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (j >= mask_len_) return -kInf;  // the padded tail
    const int64_t off = b * strides_[0] + h * strides_[1] + i * strides_[2] + j * strides_[3];
    if (mask_->dtype == ENP_DTYPE_BOOL) return mask_->as<const uint8_t>()[off] != 0 ? 0.0 : -kInf;
    return load(mask_->as<const S>()[off]);
  }

  // Query i sees key j up to i + offset: offset is the past length with a
  // cache, nonpad_kv_seqlen[b] - q_len with key padding, else 0. Compared
  // without forming the offset, which an extreme nonpad value overflows.
  bool causal_allows(int64_t b, int64_t i, int64_t j) const {
    if (nonpad_ && d_.past == 0) return j - i + d_.q_len <= nonpad_[b];
    return j - i <= d_.past;
  }

  const AttnDims& d_;
  bool causal_;
  const Buffer* mask_ = nullptr;
  std::vector<int64_t> strides_;
  int64_t mask_len_ = 0;
  const int64_t* nonpad_ = nullptr;
};

// Softmax of one row into `prob`; a row the bias masks entirely gets zeros.
void softmax_row(const std::vector<double>& logits, const std::vector<double>& bias,
                 std::vector<double>& prob) {
  const bool all_masked =
      std::all_of(bias.begin(), bias.end(), [](double b) { return b == -kInf; });
  if (all_masked) {
    std::fill(prob.begin(), prob.end(), 0.0);
    return;
  }
  double max = -kInf;
  for (double x : logits) max = std::max(max, x);
  double sum = 0;
  for (size_t j = 0; j < logits.size(); ++j) {
    prob[j] = std::exp(logits[j] - max);
    sum += prob[j];
  }
  for (double& p : prob) p /= sum;
}

// One worker's rows, reused from query to query.
struct Scratch {
  explicit Scratch(const AttnDims& d)
      : q(static_cast<size_t>(d.head)),
        y(static_cast<size_t>(d.v_head)),
        raw(static_cast<size_t>(d.total)),
        capped(raw.size()),
        bias(raw.size()),
        logits(raw.size()),
        prob(raw.size()) {}
  std::vector<double> q, y, raw, capped, bias, logits, prob;
};

// Scores of the query in s.q against the keys of one kv head: raw (scaled
// Q K^T), capped (after softcap) and logits (plus the bias in s.bias).
void score_row(const AttnParams& p, const AttnDims& d, const double* keys, Scratch& s) {
  for (size_t j = 0; j < s.raw.size(); ++j) {
    const double* k = keys + static_cast<int64_t>(j) * d.head;
    double dot = 0;
    for (size_t c = 0; c < s.q.size(); ++c) dot += s.q[c] * k[c];
    // An empty head gives a zero product whatever the scale (1/sqrt(0)).
    s.raw[j] = d.head > 0 ? p.scale * dot : 0.0;
    s.capped[j] = p.softcap != 0 ? p.softcap * std::tanh(s.raw[j] / p.softcap) : s.raw[j];
    s.logits[j] = s.capped[j] + s.bias[j];
  }
}

// s.y = s.prob . V for the values of one kv head.
void weigh_values(const AttnDims& d, const double* values, Scratch& s) {
  std::fill(s.y.begin(), s.y.end(), 0.0);
  for (size_t j = 0; j < s.prob.size(); ++j) {
    const double* v = values + static_cast<int64_t>(j) * d.v_head;
    for (size_t c = 0; c < s.y.size(); ++c) s.y[c] += s.prob[j] * v[c];
  }
}

// qk_matmul_output_mode: 0 scaled Q K^T, 1 after softcap, 2 plus the bias,
// 3 the softmax.
const std::vector<double>& qk_row(const Scratch& s, int64_t mode) {
  if (mode == 0) return s.raw;
  if (mode == 1) return s.capped;
  return mode == 2 ? s.logits : s.prob;
}

template <typename S>
void attention_typed(const KernelContext& ctx, const AttnDims& d) {
  const AttnParams p = attention_params(ctx, d);
  const bool cached = ctx.has_input(kPastKey);
  const auto keys = present<S>(cached ? &ctx.inputs[kPastKey] : nullptr, ctx.inputs[kK], d, d.head);
  const auto values =
      present<S>(cached ? &ctx.inputs[kPastValue] : nullptr, ctx.inputs[kV], d, d.v_head);
  if (wants(ctx, 1)) write_all<S>(keys, ctx.outputs[1]);
  if (wants(ctx, 2)) write_all<S>(values, ctx.outputs[2]);
  S* qk_out = wants(ctx, 3) ? ctx.outputs[3].as<S>() : nullptr;
  const S* q = ctx.inputs[kQ].as<const S>();
  S* y = ctx.outputs[0].as<S>();
  const BiasRow<S> bias_row(ctx, d, p.causal);
  const int64_t work = d.batch * d.q_heads * d.q_len * d.total * (d.head + d.v_head);
  parallel_for(d.batch * d.q_heads, threads_for(ctx, work), [&](int64_t begin, int64_t end) {
    Scratch s(d);
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / d.q_heads, h = bh % d.q_heads;
      const int64_t kv = b * d.kv_heads + h / d.group();  // GQA: heads share K/V in groups
      for (int64_t i = 0; i < d.q_len; ++i) {
        // Q's and Y's rows of (b, h, i) in the 3-D or 4-D layout.
        const int64_t row = d.three_d ? (b * d.q_len + i) * d.q_heads + h : bh * d.q_len + i;
        for (int64_t c = 0; c < d.head; ++c)
          s.q[static_cast<size_t>(c)] = load(q[row * d.head + c]);
        bias_row.fill(b, h, i, s.bias);
        score_row(p, d, keys.data() + kv * d.total * d.head, s);
        softmax_row(s.logits, s.bias, s.prob);
        weigh_values(d, values.data() + kv * d.total * d.v_head, s);
        for (int64_t c = 0; c < d.v_head; ++c) {
          y[row * d.v_head + c] = store<S>(s.y[static_cast<size_t>(c)]);
        }
        if (!qk_out) continue;
        const std::vector<double>& qk = qk_row(s, p.qk_mode);
        S* out = qk_out + (bh * d.q_len + i) * d.total;
        for (size_t j = 0; j < qk.size(); ++j) out[j] = store<S>(qk[j]);
      }
    }
  });
}

void attention_kernel(const KernelContext& ctx) {
  AttnDims d;
  if (auto why = attention_problem(buffer_operands(ctx.inputs), ctx.attr_int("q_num_heads", 0),
                                   ctx.attr_int("kv_num_heads", 0), d)) {
    corrupt("Attention: " + *why);
  }
  if (auto why = outputs_problem(buffer_operands(ctx.outputs), d.output_shapes())) {
    corrupt("Attention: " + *why);
  }
  dispatch_float(ctx.inputs[kQ].dtype, [&]<typename S>() { attention_typed<S>(ctx, d); });
}

std::optional<std::string> attention_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const int64_t mode = node.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) {
    return "qk_matmul_output_mode " + std::to_string(mode) + " is not 0, 1, 2 or 3";
  }
  // Softmax runs in float64, at least the precision any allowed value asks.
  constexpr int64_t kBFloat16 = 16;  // ONNX's number; enp_dtype_t has no bfloat16
  const int64_t precision = node.attr_int("softmax_precision", ENP_DTYPE_FLOAT32);
  if (precision != ENP_DTYPE_FLOAT32 && precision != ENP_DTYPE_FLOAT16 &&
      precision != ENP_DTYPE_FLOAT64 && precision != kBFloat16) {
    return "softmax_precision " + std::to_string(precision) + " is not a float type";
  }
  AttnDims d;
  const auto in = graph_operands(node, g);
  if (auto why = attention_problem(in, node.attr_int("q_num_heads", 0),
                                   node.attr_int("kv_num_heads", 0), d)) {
    return why;
  }
  const auto outs = graph_operands(node, g, true);
  for (const Operand& o : outs) {
    if (o.present() && o.dtype != in[kQ].dtype) {
      return "outputs must have Q's dtype";
    }
  }
  return outputs_problem(outs, d.output_shapes());
}

}  // namespace

std::vector<OpEntry> transformer_ops() {
  return {
      {"Attention", 23, 0, kFloats,
       "3-D or 4-D Q/K/V, GQA, KV cache, bool or float attn_mask (broadcast, padded), "
       "is_causal, nonpad_kv_seqlen (not with past_key), softcap, qk_matmul_output_mode 0-3; "
       "float64 math",
       &attention_check, &attention_kernel},
      {"RMSNormalization", 23, 0, kFloats, "Scale broadcast to X; stash_type 1; float64 math",
       &rms_check, &rms_kernel},
      {"RotaryEmbedding", 23, 0, kFloats,
       "3-D (num_heads) or 4-D input; interleaved; partial rotary_embedding_dim; int64 "
       "position_ids range-checked",
       &rotary_check, &rotary_kernel},
      {"Swish", 24, 0, kFloats, "float64 math", nullptr, &swish_kernel},
  };
}

}  // namespace eulernpu::kit
