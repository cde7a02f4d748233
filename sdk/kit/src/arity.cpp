#include "eulernpu/kit/arity.hpp"

#include <algorithm>

#include "eulernpu/sdk/int8_ops.hpp"

namespace eulernpu::kit {
namespace {

struct Row {
  const char* op;
  int since, min_in, max_in, min_out, max_out;
};

constexpr Row kOnnx[] = {
#include "onnx_arity.inc"
};

// Ops of opsets newer than the libonnx the table was generated from, as
// the ONNX operator documents give them (each checked by the conformance
// suite's node tests).
constexpr Row kNewer[] = {
    {"AffineGrid", 20, 2, 2, 1, 1},
    {"Attention", 23, 3, 6, 1, 4},
    {"BitCast", 26, 1, 1, 1, 1},
    {"BitwiseAnd", 18, 2, 2, 1, 1},
    {"BitwiseNot", 18, 1, 1, 1, 1},
    {"BitwiseOr", 18, 2, 2, 1, 1},
    {"BitwiseXor", 18, 2, 2, 1, 1},
    {"CausalConvWithState", 27, 2, -1, 2, -1},
    {"CenterCropPad", 18, 2, 2, 1, 1},
    {"Col2Im", 18, 3, 3, 1, 1},
    {"CumProd", 26, 2, 2, 1, 1},
    {"DeformConv", 19, 3, 5, 1, 1},
    {"Gelu", 20, 1, 1, 1, 1},
    {"GroupNormalization", 18, 3, 3, 1, 1},
    {"LinearAttention", 27, 3, -1, 2, -1},
    {"Mish", 18, 1, 1, 1, 1},
    {"RMSNormalization", 23, 2, 2, 1, 1},
    {"RotaryEmbedding", 23, 3, 4, 1, 1},
    {"SwiGLU", 28, 2, -1, 1, 1},
    {"Swish", 24, 1, 1, 1, 1},
    {"TensorScatter", 24, 2, 3, 1, 1},
};

// The row of the newest version at or below `opset`; failing that (a model
// of an opset before the op's first version), its oldest.
std::optional<Arity> lookup(const Row* begin, const Row* end, std::string_view op, int64_t opset) {
  const Row *newest = nullptr, *oldest = nullptr;
  for (const Row* r = begin; r != end; ++r) {
    if (op != r->op) continue;
    if (!oldest || r->since < oldest->since) oldest = r;
    if (r->since <= opset && (!newest || r->since > newest->since)) newest = r;
  }
  const Row* best = newest ? newest : oldest;
  if (!best) return std::nullopt;
  return Arity{best->min_in, best->max_in, best->min_out, best->max_out};
}

}  // namespace

std::optional<Arity> arity_of(std::string_view domain, std::string_view op_type, int64_t opset) {
  if (domain == sdk::int8_ops::kDomain) {
    const sdk::int8_ops::Op* op = sdk::int8_ops::find(op_type);
    if (!op) return std::nullopt;
    return Arity{op->min_inputs, op->max_inputs, 1, 1};
  }
  if (!domain.empty() && domain != "ai.onnx") return std::nullopt;
  if (auto a = lookup(std::begin(kOnnx), std::end(kOnnx), op_type, opset)) return a;
  return lookup(std::begin(kNewer), std::end(kNewer), op_type, opset);
}

std::optional<std::string> arity_problem(std::string_view domain, std::string_view op_type,
                                         int64_t opset, const std::vector<std::string>& inputs,
                                         const std::vector<std::string>& outputs) {
  const std::optional<Arity> a = arity_of(domain, op_type, opset);
  if (!a) return std::nullopt;  // no kernel either: the executor names it
  auto required = [](const std::vector<std::string>& names, int min,
                     const char* what) -> std::optional<std::string> {
    const auto n = static_cast<size_t>(min);
    if (names.size() < n) {
      return "has " + std::to_string(names.size()) + " " + what + "; it takes at least " +
             std::to_string(min);
    }
    for (size_t i = 0; i < n; ++i) {
      if (names[i].empty()) return std::string(what) + " " + std::to_string(i) + " is required";
    }
    return std::nullopt;
  };
  if (auto p = required(inputs, a->min_inputs, "inputs")) return p;
  return required(outputs, a->min_outputs, "outputs");
}

}  // namespace eulernpu::kit
