// Cast, CastLike, Identity and Dropout (inference). Casts to and from the
// low-precision types go through lowbit.hpp.
#include "elementwise_common.hpp"
#include "lowbit.hpp"

namespace eulernpu::kit {
namespace {

using namespace elementwise;

// As numpy's astype: float to integer truncates, to bool tests != 0.
template <typename To, typename From>
To cast_value(From x) {
  return store<To>(load(x));
}

// Cast and CastLike: the output buffer's dtype is the target.
void cast_kernel(const KernelContext& ctx) {
  // --- low-precision types (lowbit.hpp)
  if (sdk::lowbit::is_lowbit(ctx.inputs[0].dtype) || sdk::lowbit::is_lowbit(ctx.outputs[0].dtype)) {
    lowbit_cast_kernel(ctx);
    return;
  }
  // --- end of low-precision types
  dispatch<kAll>(ctx.inputs[0].dtype, [&]<typename From>() {
    dispatch<kAll>(ctx.outputs[0].dtype, [&]<typename To>() {
      map_unary<From, To>(ctx, ctx.inputs[0], ctx.outputs[0], &cast_value<To, From>);
    });
  });
}

void copy_buffer(const Buffer& in, const Buffer& out) {
  if (in.count() != out.count() || in.dtype != out.dtype) {
    corrupt("a copying op's input and output differ in size or dtype");
  }
  if (in.data != out.data && out.count() > 0) {
    std::memcpy(out.data, in.data, static_cast<size_t>(out.count()) * sdk::dtype_size(out.dtype));
  }
}

void identity_kernel(const KernelContext& ctx) { copy_buffer(ctx.inputs[0], ctx.outputs[0]); }

// Inference: y = x and a mask of ones (bool from opset 10, x's type before).
void dropout_kernel(const KernelContext& ctx) {
  copy_buffer(ctx.inputs[0], ctx.outputs[0]);
  if (ctx.outputs.size() < 2 || ctx.outputs[1].dtype == ENP_DTYPE_UNDEFINED) return;
  const Buffer& mask = ctx.outputs[1];
  dispatch<kAll>(mask.dtype,
                 [&]<typename S>() { std::fill_n(mask.as<S>(), mask.count(), store<S>(1)); });
}

// ---------------------------------------------------------------------------
// Lowering checks

std::optional<std::string> cast_target(int32_t to) {
  if (to <= 0 || to >= 32 || !(kAll & ENP_DTYPE_BIT(to))) {
    return "casting to ONNX type " + std::to_string(to) +
           " is not supported (float8, int4, int2, string and complex types are not)";
  }
  return std::nullopt;
}

std::optional<std::string> cast_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const auto to = static_cast<int32_t>(node.attr_int("to", 0));
  // --- low-precision types (lowbit.hpp)
  const int32_t from = dtype_of(g, node.input(0));
  if (sdk::lowbit::is_lowbit(from) || sdk::lowbit::is_lowbit(to)) {
    return lowbit_cast_problem(node, from, to);
  }
  // --- end of low-precision types
  return cast_target(to);
}

std::optional<std::string> castlike_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const int32_t to = dtype_of(g, node.input(1));
  // --- low-precision types (lowbit.hpp)
  const int32_t from = dtype_of(g, node.input(0));
  if (sdk::lowbit::is_lowbit(from) || sdk::lowbit::is_lowbit(to)) {
    return lowbit_cast_problem(node, from, to);
  }
  // --- end of low-precision types
  return cast_target(to);
}

// The value of a constant bool/float scalar input, if it is an initializer.
std::optional<double> constant_scalar(const sdk::GraphView& g, std::string_view name) {
  const auto t = g.initializer(name);
  if (!t || t->element_count() != 1) return std::nullopt;
  switch (t->dtype()) {
    case ENP_DTYPE_BOOL:
      return t->as<uint8_t>()[0] != 0 ? 1.0 : 0.0;
    case ENP_DTYPE_FLOAT32:
      return t->as<float>()[0];
    case ENP_DTYPE_FLOAT64:
      return t->as<double>()[0];
    case ENP_DTYPE_FLOAT16:
      return half_to_float(t->as<uint16_t>()[0]);
    case ENP_DTYPE_BFLOAT16:
      return bfloat16_to_float(t->as<uint16_t>()[0]);
    default:
      return std::nullopt;
  }
}

// Only inference: training_mode (opset 12+) must be a constant false, since
// training draws a random mask cpu_ref cannot reproduce.
std::optional<std::string> dropout_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (node.input(2).empty()) return std::nullopt;
  const auto training = constant_scalar(g, node.input(2));
  if (!training) return "training_mode must be a constant initializer (cpu_ref runs inference)";
  if (*training != 0.0) return "training_mode=true is not supported (cpu_ref runs inference)";
  return std::nullopt;
}

}  // namespace

std::vector<OpEntry> cast_ops() {
  return {
      {"Cast", 6, 0, kAll | kLowBit,
       "numeric, bool, bfloat16, float8, float4e2m1, float8e8m0, (u)int4, (u)int2; float to int "
       "truncates; to float16/bfloat16 rounds to nearest even",
       &cast_check, &cast_kernel},
      {"CastLike", 15, 0, kAll | kLowBit,
       "numeric, bool, bfloat16, float8, float4e2m1, float8e8m0, (u)int4, (u)int2; float to int "
       "truncates; to float16/bfloat16 rounds to nearest even",
       &castlike_check, &cast_kernel},
      {"Dropout", 7, 0, kFloats, "inference only (training_mode a constant false)", &dropout_check,
       &dropout_kernel},
      {"Identity", 1, 0, kAll | kLowBit, "tensors only", nullptr, &identity_kernel},
  };
}

}  // namespace eulernpu::kit
