// Rules of the integer ops of domain ai.eulernpu, opset 1
// (docs/quantization.md, "The quantized graph"). Shapes come from the ONNX
// op each one extends (Conv, ConvTranspose, MatMul, AveragePool, Concat,
// numpy broadcasting), through infer_as, so padding and broadcasting follow
// the same code. On top of that every rule checks what makes the integer
// arithmetic well defined: dtypes, per-channel vector lengths, table sizes,
// zero points and clamps inside int8, multipliers and shifts inside their
// encoding, and, where the weights are constants, the int32 accumulator
// bound the quantizer promises. A backend may then run the op without
// checking any value again.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "eulernpu/sdk/qmath.hpp"
#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

namespace qmath = sdk::qmath;

constexpr int64_t kInt8Min = -128, kInt8Max = 127;

// More terms than this overflow int32 whatever the values; capping k here
// keeps qmath's bound arithmetic inside int64 for absurd shapes.
constexpr int64_t kMaxTerms = int64_t{1} << 31;

bool fits_int32(int64_t terms, int64_t max_x, int64_t max_w, int64_t max_bias) {
  return terms <= kMaxTerms && qmath::accumulator_fits_int32(terms, max_x, max_w, max_bias);
}

// The op's inputs as sdk/int8_ops.hpp lists them, all present, and one output.
void require_arity(InferContext& ctx, std::string_view op) {
  const auto inputs = static_cast<size_t>(sdk::int8_ops::find(op)->min_inputs);
  ctx.require(ctx.input_count() == inputs && ctx.output_count() == 1,
              "takes " + std::to_string(inputs) + " inputs and one output, not " +
                  std::to_string(ctx.input_count()) + " and " + std::to_string(ctx.output_count()));
  for (size_t i = 0; i < inputs; ++i) ctx.input(i);  // fails if omitted
}

void require_dtype(InferContext& ctx, size_t i, DType want, const char* name) {
  const DType d = ctx.input(i).dtype;
  ctx.require(d == DType::kUndefined || d == want,
              std::string(name) + " must be " + dtype_name(want) + ", not " + dtype_name(d));
}

// A required INT attribute.
int64_t required_int(InferContext& ctx, const char* name) {
  ctx.require(ctx.has_attr(name), std::string("attribute '") + name + "' is required");
  return ctx.attr_int(name, 0);
}

int64_t zero_point(InferContext& ctx, const char* name) {
  const int64_t z = ctx.attr_int(name, 0);
  ctx.require(z >= kInt8Min && z <= kInt8Max,
              std::string(name) + " " + std::to_string(z) + " is outside int8 [-128, 127]");
  return z;
}

// qmin/qmax: inside int8 and ordered.
void require_clamp(InferContext& ctx) {
  const int64_t lo = ctx.attr_int("qmin", kInt8Min), hi = ctx.attr_int("qmax", kInt8Max);
  ctx.require(lo >= kInt8Min && hi <= kInt8Max && lo <= hi,
              "qmin " + std::to_string(lo) + " and qmax " + std::to_string(hi) +
                  " must satisfy -128 <= qmin <= qmax <= 127");
}

// A fixed-point multiplier: M in [2^30, 2^31) or 0, S in [1, 62]
// (qmath::FixedMultiplier); `min_shift` narrows S where the op needs a
// ratio below 1.
void require_multiplier(InferContext& ctx, int64_t m, int64_t s, const std::string& what,
                        int64_t min_shift = 1) {
  ctx.require(sdk::qmath::is_valid_multiplier(m, s, min_shift),
              what + " (" + std::to_string(m) + ", " + std::to_string(s) +
                  ") is not a fixed-point multiplier: M must be 0 or in [2^30, 2^31), S in [" +
                  std::to_string(min_shift) + ", 62]");
}

void require_multiplier_attrs(InferContext& ctx, const char* m, const char* s,
                              int64_t min_shift = 1) {
  require_multiplier(ctx, required_int(ctx, m), required_int(ctx, s),
                     std::string(m) + "/" + std::string(s), min_shift);
}

// Input i is a 1-D tensor of `dtype` with `length` entries (-1: unknown).
void require_vector(InferContext& ctx, size_t i, DType dtype, int64_t length, const char* name) {
  require_dtype(ctx, i, dtype, name);
  const ValueType& t = ctx.input(i);
  if (!t.known) return;
  ctx.require(t.dims.size() == 1 && agree(t.dims[0], length),
              std::string(name) + " " + shape_string(t.dims) + " must be a vector of " +
                  (length < 0 ? std::string("one entry per output channel")
                              : std::to_string(length) + " entries"));
}

// Constant M and S (inputs m, s): every pair a valid multiplier.
void require_multiplier_inputs(InferContext& ctx, size_t m, size_t s) {
  const auto ms = ctx.constant_ints(m), ss = ctx.constant_ints(s);
  if (!ms || !ss || ms->size() != ss->size()) return;
  for (size_t i = 0; i < ms->size(); ++i) {
    require_multiplier(ctx, (*ms)[i], (*ss)[i], "(M, S)[" + std::to_string(i) + "]");
  }
}

// Values of a constant int8 input.
std::optional<std::vector<int8_t>> constant_int8(const InferContext& ctx, size_t i) {
  const Tensor* t = ctx.constant(i);
  if (!t || t->dtype != DType::kInt8) return std::nullopt;
  std::vector<int8_t> v(t->data.size());
  std::memcpy(v.data(), t->data.data(), v.size());
  return v;
}

// The accumulator bound of docs/quantization.md for an op whose output
// channel o sums `terms` products of |X - x_zero_point| <= 255 with
// weights up to max_w[o], plus Bias[o]: checked when W and Bias are
// constants, so int32 accumulation is exact for every input.
void require_accumulator_bound(InferContext& ctx, int64_t terms, const std::vector<int64_t>& max_w,
                               size_t bias_input) {
  const auto bias = ctx.constant_ints(bias_input);
  for (size_t o = 0; o < max_w.size(); ++o) {
    const int64_t b = bias && o < bias->size() ? std::abs((*bias)[o]) : 0;
    ctx.require(fits_int32(terms, 255, max_w[o], b),
                "output channel " + std::to_string(o) + " can overflow its int32 accumulator: " +
                    std::to_string(terms) + " terms · 255 · max|W| " + std::to_string(max_w[o]) +
                    " + |Bias| " + std::to_string(b) + " >= 2^31");
  }
}

// max|W| per output channel of a constant W whose channel is `channel(i)`
// for flat index i; empty if W is not a constant.
template <typename ChannelOf>
std::vector<int64_t> max_abs_per_channel(const InferContext& ctx, size_t w_input, int64_t channels,
                                         ChannelOf channel) {
  const auto w = constant_int8(ctx, w_input);
  if (!w || channels <= 0) return {};
  std::vector<int64_t> out(static_cast<size_t>(channels), 0);
  for (size_t i = 0; i < w->size(); ++i) {
    int64_t& m = out[static_cast<size_t>(channel(static_cast<int64_t>(i)))];
    m = std::max<int64_t>(m, std::abs(static_cast<int64_t>((*w)[i])));
  }
  return out;
}

// Explicit windows only: auto_pad absent (or NOTSET), pads >= 0, and a
// kernel_shape, if given, equal to W's spatial dims.
void require_explicit_window(InferContext& ctx, const ValueType* w) {
  ctx.require(ctx.attr_string("auto_pad", "NOTSET") == "NOTSET",
              "auto_pad is not allowed; the integer ops take explicit pads");
  for (int64_t p : ctx.attr_ints("pads")) ctx.require(p >= 0, "pads must not be negative");
  if (!w || !w->known || !ctx.has_attr("kernel_shape")) return;
  const auto kernel = ctx.attr_ints("kernel_shape");
  bool same = w->dims.size() >= 2 && kernel.size() == w->dims.size() - 2;
  for (size_t i = 0; same && i < kernel.size(); ++i) same = agree(kernel[i], w->dims[i + 2]);
  ctx.require(same, "kernel_shape " + shape_string(kernel) + " differs from W " +
                        shape_string(w->dims) + "'s spatial dims");
}

ValueType as_int8(ValueType t) {
  t.dtype = DType::kInt8;
  return t;
}

// What QConv, QConvTranspose and QGemm share after X and W: Bias, M and S
// as int32 vectors of one entry per output channel, the zero points, the
// clamp, and multipliers a backend can apply.
void require_weighted_constants(InferContext& ctx, int64_t channels, const char* x_zero_point) {
  require_vector(ctx, 2, DType::kInt32, channels, "Bias");
  require_vector(ctx, 3, DType::kInt32, channels, "M");
  require_vector(ctx, 4, DType::kInt32, channels, "S");
  zero_point(ctx, x_zero_point);
  zero_point(ctx, "y_zero_point");
  require_clamp(ctx);
  require_multiplier_inputs(ctx, 3, 4);
}

// QConv: X (N, C, spatial...), W (O, C/group, kernel...), Bias, M, S (O).
void qconv(InferContext& ctx) {
  require_arity(ctx, "QConv");
  require_dtype(ctx, 0, DType::kInt8, "X");
  require_dtype(ctx, 1, DType::kInt8, "W");
  const ValueType& w = ctx.input(1);
  require_explicit_window(ctx, &w);
  const ValueType y = infer_as(ctx, "Conv", {0, 1});
  const int64_t out_channels = w.known && !w.dims.empty() ? w.dims[0] : -1;
  require_weighted_constants(ctx, out_channels, "x_zero_point");
  if (w.is_static() && out_channels > 0) {
    const int64_t terms = static_cast<int64_t>(w.element_count()) / out_channels;
    require_accumulator_bound(
        ctx, terms, max_abs_per_channel(ctx, 1, out_channels, [&](int64_t i) { return i / terms; }),
        2);
  }
  ctx.set_output(0, as_int8(y));
}

// QConvTranspose: X (N, C, spatial...), W (C, O/group, kernel...), Bias, M,
// S (O).
void qconv_transpose(InferContext& ctx) {
  require_arity(ctx, "QConvTranspose");
  require_dtype(ctx, 0, DType::kInt8, "X");
  require_dtype(ctx, 1, DType::kInt8, "W");
  const ValueType& w = ctx.input(1);
  require_explicit_window(ctx, &w);
  ctx.require(!ctx.has_attr("output_shape"),
              "output_shape is not allowed; give pads and output_padding");
  const ValueType y = infer_as(ctx, "ConvTranspose", {0, 1});
  const int64_t group = ctx.attr_int("group", 1);
  const int64_t out_channels =
      w.known && w.dims.size() >= 2 && w.dims[1] >= 0 ? w.dims[1] * group : -1;
  // ONNX's (and PyTorch's) limit: output_padding only reaches positions a
  // stride or a dilation step could have produced.
  if (w.known && w.dims.size() >= 2) {
    const size_t n = w.dims.size() - 2;
    const auto strides = ctx.attr_ints("strides", std::vector<int64_t>(n, 1));
    const auto dilations = ctx.attr_ints("dilations", std::vector<int64_t>(n, 1));
    const auto out_pad = ctx.attr_ints("output_padding", std::vector<int64_t>(n, 0));
    for (size_t i = 0; i < n && i < strides.size() && i < dilations.size() && i < out_pad.size();
         ++i) {
      ctx.require(out_pad[i] >= 0 && (out_pad[i] < strides[i] || out_pad[i] < dilations[i]),
                  "output_padding " + shape_string(out_pad) +
                      " must be non-negative and smaller than the stride or the dilation");
    }
  }
  require_weighted_constants(ctx, out_channels, "x_zero_point");
  if (w.is_static() && out_channels > 0 && group > 0 && w.dims[0] % group == 0) {
    // Output channel o = g · (O/group) + oc reads W[c, oc, ...] for the C/group
    // input channels c of group g: at most (C/group) · kernel terms.
    const int64_t in_channels = w.dims[0], per_group = w.dims[1];
    const int64_t kernel = static_cast<int64_t>(w.element_count()) / (in_channels * per_group);
    const int64_t terms = in_channels / group * kernel;
    require_accumulator_bound(ctx, terms,
                              max_abs_per_channel(ctx, 1, out_channels,
                                                  [&](int64_t i) {
                                                    const int64_t c = i / (per_group * kernel);
                                                    const int64_t oc = i / kernel % per_group;
                                                    return c / (in_channels / group) * per_group +
                                                           oc;
                                                  }),
                              2);
  }
  ctx.set_output(0, as_int8(y));
}

// QGemm: A (..., K), W (N, K), Bias, M, S (N) -> Y (..., N).
void qgemm(InferContext& ctx) {
  require_arity(ctx, "QGemm");
  require_dtype(ctx, 0, DType::kInt8, "A");
  require_dtype(ctx, 1, DType::kInt8, "W");
  const ValueType &a = ctx.input(0), &w = ctx.input(1);
  ctx.require(!a.known || !a.dims.empty(), "A must have rank >= 1");
  ctx.require(!w.known || w.dims.size() == 2, "W " + shape_string(w.dims) + " must be 2-D (N, K)");
  const int64_t n = w.known ? w.dims[0] : -1;
  if (a.known && w.known) {
    ctx.require(agree(a.dims.back(), w.dims[1]), "A " + shape_string(a.dims) + " and W " +
                                                     shape_string(w.dims) +
                                                     " differ in K (A's last dim, W's second)");
  }
  require_weighted_constants(ctx, n, "a_zero_point");
  if (w.is_static() && n > 0) {
    const int64_t k = w.dims[1];
    require_accumulator_bound(ctx, k,
                              max_abs_per_channel(ctx, 1, n, [&](int64_t i) { return i / k; }), 2);
  }
  if (!a.known) return ctx.set_output(0, ValueType{DType::kInt8, {}, false});
  std::vector<int64_t> dims = a.dims;
  dims.back() = n;
  ctx.set_output(0, ValueType{DType::kInt8, dims, true});
}

// QMatMul: MatMul's shapes; K bounded so that K · 255 · 255 < 2^31.
void qmatmul(InferContext& ctx) {
  require_arity(ctx, "QMatMul");
  require_dtype(ctx, 0, DType::kInt8, "A");
  require_dtype(ctx, 1, DType::kInt8, "B");
  const ValueType y = infer_as(ctx, "MatMul", {0, 1});
  const ValueType& a = ctx.input(0);
  if (a.known && !a.dims.empty() && a.dims.back() >= 0) {
    ctx.require(fits_int32(a.dims.back(), 255, 255, 0),
                "K = " + std::to_string(a.dims.back()) +
                    " terms can overflow the int32 accumulator (K · 255 · 255 >= 2^31)");
  }
  zero_point(ctx, "a_zero_point");
  zero_point(ctx, "b_zero_point");
  zero_point(ctx, "y_zero_point");
  require_multiplier_attrs(ctx, "multiplier", "shift");
  require_clamp(ctx);
  ctx.set_output(0, as_int8(y));
}

// A and B broadcast numpy-style.
ValueType broadcast_pair(InferContext& ctx) {
  require_arity(ctx, "QAdd");  // QSub and QMul take the same two
  require_dtype(ctx, 0, DType::kInt8, "A");
  require_dtype(ctx, 1, DType::kInt8, "B");
  const ValueType &a = ctx.input(0), &b = ctx.input(1);
  if (!a.known || !b.known) return ValueType{DType::kInt8, {}, false};
  const auto dims = broadcast_shapes(a.dims, b.dims);
  ctx.require(dims.has_value(),
              "A " + shape_string(a.dims) + " and B " + shape_string(b.dims) + " do not broadcast");
  return ValueType{DType::kInt8, *dims, true};
}

// QAdd, QSub: qmath::add. Its inputs' rescales must be below 1 (S >= 31):
// (A - a_zero_point) · 2^20 then stays below 2^28 after scaling, and the
// sum of two below 2^29, inside int32.
void qadd(InferContext& ctx) {
  const ValueType y = broadcast_pair(ctx);
  zero_point(ctx, "a_zero_point");
  zero_point(ctx, "b_zero_point");
  zero_point(ctx, "y_zero_point");
  require_multiplier_attrs(ctx, "a_multiplier", "a_shift", 31);
  require_multiplier_attrs(ctx, "b_multiplier", "b_shift", 31);
  require_multiplier_attrs(ctx, "y_multiplier", "y_shift");
  require_clamp(ctx);
  ctx.set_output(0, y);
}

void qmul(InferContext& ctx) {
  const ValueType y = broadcast_pair(ctx);
  zero_point(ctx, "a_zero_point");
  zero_point(ctx, "b_zero_point");
  zero_point(ctx, "y_zero_point");
  require_multiplier_attrs(ctx, "multiplier", "shift");
  require_clamp(ctx);
  ctx.set_output(0, y);
}

// QAveragePool: AveragePool's window; M and S hold T + 1 entries, T the
// kernel's tap count, one per possible tap count n (index n).
void qaverage_pool(InferContext& ctx) {
  require_arity(ctx, "QAveragePool");
  require_dtype(ctx, 0, DType::kInt8, "X");
  require_explicit_window(ctx, nullptr);
  const auto kernel = ctx.attr_ints("kernel_shape");
  ctx.require(!kernel.empty(), "attribute 'kernel_shape' is required");
  int64_t taps = 1;
  for (int64_t k : kernel) {
    ctx.require(k > 0 && k <= (int64_t{1} << 20), "kernel_shape entries must be in [1, 2^20]");
    taps *= k;
    ctx.require(taps <= (int64_t{1} << 20), "the kernel has more than 2^20 taps");
  }
  for (const char* flag : {"ceil_mode", "count_include_pad"}) {
    const int64_t v = ctx.attr_int(flag, 0);
    ctx.require(v == 0 || v == 1, std::string(flag) + " must be 0 or 1");
  }
  const ValueType y = infer_as(ctx, "AveragePool", {0});
  require_vector(ctx, 1, DType::kInt32, taps + 1, "M");
  require_vector(ctx, 2, DType::kInt32, taps + 1, "S");
  zero_point(ctx, "x_zero_point");
  zero_point(ctx, "y_zero_point");
  require_multiplier_inputs(ctx, 1, 2);
  ctx.set_output(0, as_int8(y));
}

void qglobal_average_pool(InferContext& ctx) {
  require_arity(ctx, "QGlobalAveragePool");
  require_dtype(ctx, 0, DType::kInt8, "X");
  const ValueType y = infer_as(ctx, "GlobalAveragePool", {0});
  const ValueType& x = ctx.input(0);
  if (x.is_static() && x.dims.size() >= 3) {
    int64_t n = 1;
    for (size_t i = 2; i < x.dims.size(); ++i) n = std::min(n * x.dims[i], kMaxTerms + 1);
    ctx.require(fits_int32(n, 255, 1, 0),
                "the spatial size " + std::to_string(n) +
                    " can overflow the int32 accumulator (n · 255 >= 2^31)");
  }
  zero_point(ctx, "x_zero_point");
  zero_point(ctx, "y_zero_point");
  require_multiplier_attrs(ctx, "multiplier", "shift");
  ctx.set_output(0, as_int8(y));
}

void qconcat(InferContext& ctx) {
  const size_t n = ctx.input_count();
  ctx.require(n >= 1 && ctx.output_count() == 1, "takes one or more inputs and one output");
  std::vector<size_t> all;
  for (size_t i = 0; i < n; ++i) {
    // Built with append: GCC 12 warns (-Wrestrict) about "X" + to_string.
    std::string name("X");
    name.append(std::to_string(i + 1));
    require_dtype(ctx, i, DType::kInt8, name.c_str());
    all.push_back(i);
  }
  required_int(ctx, "axis");
  const ValueType y = infer_as(ctx, "Concat", all);
  const auto zps = ctx.attr_ints("x_zero_points"), ms = ctx.attr_ints("multipliers"),
             ss = ctx.attr_ints("shifts");
  ctx.require(zps.size() == n && ms.size() == n && ss.size() == n,
              "x_zero_points, multipliers and shifts must have one entry per input (" +
                  std::to_string(n) + ")");
  for (size_t i = 0; i < n; ++i) {
    ctx.require(zps[i] >= kInt8Min && zps[i] <= kInt8Max, "x_zero_points[" + std::to_string(i) +
                                                              "] " + std::to_string(zps[i]) +
                                                              " is outside int8 [-128, 127]");
    require_multiplier(ctx, ms[i], ss[i], "(multipliers, shifts)[" + std::to_string(i) + "]");
  }
  zero_point(ctx, "y_zero_point");
  ctx.set_output(0, as_int8(y));
}

void qlookup(InferContext& ctx) {
  require_arity(ctx, "QLookup");
  require_dtype(ctx, 0, DType::kInt8, "X");
  require_vector(ctx, 1, DType::kInt8, 256, "Table");
  ctx.set_output(0, as_int8(ctx.input(0)));
}

// QSoftmax: Exp is the table e[d] of qmath::softmax_row: e[0] = 2^20 (so no
// row sums to 0) and every entry in [0, 2^20] (so 256 · e fits).
void qsoftmax(InferContext& ctx) {
  require_arity(ctx, "QSoftmax");
  require_dtype(ctx, 0, DType::kInt8, "X");
  require_vector(ctx, 1, DType::kInt32, 256, "Exp");
  const ValueType& x = ctx.input(0);
  if (x.known) {
    ctx.require(!x.dims.empty(), "X must have rank >= 1");
    ctx.axis(ctx.attr_int("axis", -1), static_cast<int64_t>(x.dims.size()));
  }
  if (const auto e = ctx.constant_ints(1); e && e->size() == 256) {
    constexpr int64_t kOne = int64_t{1} << 20;
    bool ok = (*e)[0] == kOne;
    for (int64_t v : *e) ok = ok && v >= 0 && v <= kOne;
    ctx.require(ok, "Exp must hold e[0] = 2^20 and entries in [0, 2^20]");
  }
  ctx.set_output(0, as_int8(x));
}

}  // namespace

std::vector<OpRule> eulernpu_rules() {
  return {
      {"QConv", &qconv, nullptr},
      {"QConvTranspose", &qconv_transpose, nullptr},
      {"QGemm", &qgemm, nullptr},
      {"QMatMul", &qmatmul, nullptr},
      {"QAdd", &qadd, nullptr},
      {"QSub", &qadd, nullptr},
      {"QMul", &qmul, nullptr},
      {"QAveragePool", &qaverage_pool, nullptr},
      {"QGlobalAveragePool", &qglobal_average_pool, nullptr},
      {"QConcat", &qconcat, nullptr},
      {"QLookup", &qlookup, nullptr},
      {"QSoftmax", &qsoftmax, nullptr},
  };
}

}  // namespace eulernpu::host::ir
