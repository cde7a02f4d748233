// Shape rules of the quantization ops (see sdk/kit/src/kernels_quant.cpp).
// The GEMM- and convolution-shaped ones run MatMul's and Conv's rules on
// their data inputs, so padding and broadcasting follow the same code.
#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

ValueType with_dtype(ValueType t, DType d) {
  t.dtype = d;
  return t;
}

bool all_known(const std::vector<int64_t>& dims) {
  for (int64_t d : dims) {
    if (d < 0) return false;
  }
  return true;
}

int64_t product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// A blocked scale has x's rank and dims, but ceil(dim / block_size) along
// the axis.
void require_blocked(InferContext& ctx, const std::vector<int64_t>& x,
                     const std::vector<int64_t>& s, size_t axis, int64_t block) {
  bool ok = s.size() == x.size();
  for (size_t d = 0; ok && d < x.size(); ++d) {
    const int64_t want = d == axis && x[d] >= 0 ? (x[d] + block - 1) / block : x[d];
    ok = agree(s[d], want);
  }
  ctx.require(ok, "blocked scale " + shape_string(s) + " does not tile x " + shape_string(x) +
                      " in blocks of " + std::to_string(block));
}

// QuantizeLinear's and DequantizeLinear's scale (input 1) is one value, one
// per index of the axis (a 1-D tensor), or blocked; the zero point (input 2)
// has the scale's shape.
void require_scale_layout(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const ValueType& s = ctx.input(1);
  if (ctx.has_input(2) && ctx.input(2).known && s.known) {
    const auto& z = ctx.input(2).dims;
    const bool single =
        all_known(z) && all_known(s.dims) && product(z) == 1 && product(s.dims) == 1;
    bool same = z.size() == s.dims.size();
    for (size_t d = 0; same && d < z.size(); ++d) same = agree(z[d], s.dims[d]);
    ctx.require(single || same, "zero point " + shape_string(z) + " and scale " +
                                    shape_string(s.dims) + " differ in shape");
  }
  if (!x.known || !s.known || (all_known(s.dims) && product(s.dims) == 1)) return;
  const auto rank = static_cast<int64_t>(x.dims.size());
  const auto axis = static_cast<size_t>(ctx.axis(ctx.attr_int("axis", 1), rank));
  const int64_t block = ctx.attr_int("block_size", 0);
  if (block > 0) return require_blocked(ctx, x.dims, s.dims, axis, block);
  ctx.require(s.dims.size() == 1 && agree(s.dims[0], x.dims[axis]),
              "scale " + shape_string(s.dims) + " is neither one value nor one per index of axis " +
                  std::to_string(axis) + " of x " + shape_string(x.dims));
}

// y: x's shape, of the zero point's type, else output_dtype, else uint8.
void quantize_linear(InferContext& ctx) {
  require_scale_layout(ctx);
  const auto output_dtype = static_cast<DType>(ctx.attr_int("output_dtype", 0));
  DType d = output_dtype == DType::kUndefined ? DType::kUInt8 : output_dtype;
  if (ctx.has_input(2)) {
    d = ctx.input(2).dtype;
    ctx.require(output_dtype == DType::kUndefined || output_dtype == d,
                "output_dtype differs from the zero point's dtype");
  }
  ctx.set_output(0, with_dtype(ctx.input(0), d));
}

// y: x's shape, of output_dtype, else the scale's type.
void dequantize_linear(InferContext& ctx) {
  require_scale_layout(ctx);
  const auto output_dtype = static_cast<DType>(ctx.attr_int("output_dtype", 0));
  const DType d = output_dtype == DType::kUndefined ? ctx.input(1).dtype : output_dtype;
  ctx.set_output(0, with_dtype(ctx.input(0), d));
}

// y (uint8, x's shape), y_scale (x's type) and y_zero_point (uint8) scalars.
void dynamic_quantize_linear(InferContext& ctx) {
  ctx.set_output(0, with_dtype(ctx.input(0), DType::kUInt8));
  ctx.set_output(1, ValueType{ctx.input(0).dtype, {}, true});
  ctx.set_output(2, ValueType{DType::kUInt8, {}, true});
}

void matmul_integer(InferContext& ctx) {
  ctx.set_output(0, with_dtype(infer_as(ctx, "MatMul", {0, 1}), DType::kInt32));
}

// Of y_zero_point's type (input 7), else a's.
DType qlinear_dtype(const InferContext& ctx) {
  return ctx.has_input(7) ? ctx.input(7).dtype : ctx.input(0).dtype;
}

void qlinear_matmul(InferContext& ctx) {
  ctx.set_output(0, with_dtype(infer_as(ctx, "MatMul", {0, 3}), qlinear_dtype(ctx)));
}

void conv_integer(InferContext& ctx) {
  ctx.set_output(0, with_dtype(infer_as(ctx, "Conv", {0, 1}), DType::kInt32));
}

void qlinear_conv(InferContext& ctx) {
  ctx.set_output(0, with_dtype(infer_as(ctx, "Conv", {0, 3, 8}), qlinear_dtype(ctx)));
}

}  // namespace

std::vector<OpRule> quant_rules() {
  return {
      {"QuantizeLinear", &quantize_linear, nullptr},
      {"DequantizeLinear", &dequantize_linear, nullptr},
      {"DynamicQuantizeLinear", &dynamic_quantize_linear, nullptr},
      {"MatMulInteger", &matmul_integer, nullptr},
      {"QLinearMatMul", &qlinear_matmul, nullptr},
      {"ConvInteger", &conv_integer, nullptr},
      {"QLinearConv", &qlinear_conv, nullptr},
  };
}

}  // namespace eulernpu::host::ir
