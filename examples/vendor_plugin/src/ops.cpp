#include "ops.hpp"

#include <algorithm>
#include <cmath>

#include "eulernpu/kit/op_table.hpp"
#include "eulernpu/sdk/graph.hpp"
#include "eulernpu/sdk/int8_ops.hpp"

namespace acme_npu {
namespace {

constexpr uint32_t kF32 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT32);
constexpr uint32_t kI8 = ENP_DTYPE_BIT(ENP_DTYPE_INT8);

namespace kit = eulernpu::kit;

struct OpRow {
  Op op;
  const char* name;
  int32_t since_version;  // earlier opsets had other attributes or semantics
  const char* constraints;
};

const OpRow kOps[] = {
    {Op::kGemm, "Gemm", 7, "2-D A and B; C broadcast to (M, N)"},
    {Op::kMatMul, "MatMul", 1, "2-D inputs only: no batch dims, no 1-D promotion"},
    {Op::kAdd, "Add", 7,
     "numpy broadcasting of a trailing-dims tensor only: one input has the "
     "output's shape, the other equals its trailing dims, e.g. (4) onto (1, 4)"},
    {Op::kRelu, "Relu", 6, ""},
    {Op::kSoftmax, "Softmax", 1, "last axis only; accumulates in float64"},
};

std::string str(const Shape& s) { return eulernpu::sdk::shape_string(s); }

bool is_suffix(const Shape& small, const Shape& big) {
  if (small.size() > big.size()) return false;
  return std::equal(small.begin(), small.end(), big.end() - static_cast<ptrdiff_t>(small.size()));
}

ShapeResult fail(std::string why) { return {{}, std::move(why)}; }

ShapeResult gemm_shape(const Attrs& a, std::span<const Shape> in) {
  if (in.size() != 2 && in.size() != 3) return fail("Gemm takes 2 or 3 inputs");
  if (in[0].size() != 2 || in[1].size() != 2) {
    return fail("Gemm needs 2-D A and B, got " + str(in[0]) + " and " + str(in[1]));
  }
  if ((a.trans_a != 0 && a.trans_a != 1) || (a.trans_b != 0 && a.trans_b != 1)) {
    return fail("Gemm transA and transB must be 0 or 1");
  }
  if (!std::isfinite(a.alpha) || !std::isfinite(a.beta)) {
    return fail("Gemm alpha and beta must be finite");
  }
  const int64_t m = in[0][a.trans_a ? 1 : 0], k = in[0][a.trans_a ? 0 : 1];
  const int64_t kb = in[1][a.trans_b ? 1 : 0], n = in[1][a.trans_b ? 0 : 1];
  if (k != kb) {
    return fail("Gemm inner dims differ: A " + str(in[0]) + ", B " + str(in[1]));
  }
  if (in.size() == 3) {
    const Shape& c = in[2];
    const Shape target{m, n};
    bool ok = c.size() <= 2;
    for (size_t i = 0; ok && i < c.size(); ++i) {
      const int64_t want = target[2 - c.size() + i];
      ok = c[i] == want || c[i] == 1;
    }
    if (!ok) return fail("Gemm C " + str(c) + " does not broadcast to " + str(target));
  }
  return {{m, n}, {}};
}

ShapeResult add_shape(std::span<const Shape> in) {
  if (in.size() != 2) return fail("Add takes 2 inputs");
  if (is_suffix(in[1], in[0])) return {in[0], {}};
  if (is_suffix(in[0], in[1])) return {in[1], {}};
  return fail("Add of " + str(in[0]) + " and " + str(in[1]) +
              ": one shape must equal the other's trailing dims");
}

}  // namespace

const char* op_name(Op op) {
  for (const OpRow& r : kOps) {
    if (r.op == op) return r.name;
  }
  return "?";
}

std::optional<Op> op_from_name(std::string_view name) {
  for (const OpRow& r : kOps) {
    if (name == r.name) return r.op;
  }
  return std::nullopt;
}

std::optional<Op> find_op(std::string_view op_type, int64_t opset) {
  for (const OpRow& r : kOps) {
    if (op_type == r.name && opset >= r.since_version) return r.op;
  }
  return std::nullopt;
}

const std::vector<enp_op_support_t>& op_declarations() {
  static const std::vector<enp_op_support_t> decls = [] {
    std::vector<enp_op_support_t> d;
    for (const OpRow& r : kOps) d.push_back({"", r.name, r.since_version, 0, kF32, r.constraints});
    // The int8 ops come with the backend kit: its reference kernels run
    // them, so a quantized model runs here with cpu_ref's bytes.
    for (const kit::OpEntry& e : kit::op_table()) {
      const std::string_view domain(e.domain), op(e.op_type);
      if (domain == eulernpu::sdk::int8_ops::kDomain) {
        d.push_back({e.domain, e.op_type, e.since_version, e.until_version, kI8, e.constraints});
      } else if (domain.empty() && eulernpu::sdk::int8_ops::is_movement_op(op)) {
        d.push_back({e.domain, e.op_type, e.since_version, e.until_version, kI8 | kF32,
                     "moves int8 codes (scales pass through) or float32 values"});
      } else if (domain.empty() && op == "QuantizeLinear") {
        d.push_back(
            {e.domain, e.op_type, e.since_version, e.until_version, kF32, "float32 to int8 only"});
      } else if (domain.empty() && op == "DequantizeLinear") {
        d.push_back(
            {e.domain, e.op_type, e.since_version, e.until_version, kI8, "int8 to float32 only"});
      }
    }
    return d;
  }();
  return decls;
}

std::optional<std::string> shape_problem(const Shape& shape) {
  if (shape.size() > kMaxRank) {
    return "rank " + std::to_string(shape.size()) + " exceeds " + std::to_string(kMaxRank);
  }
  int64_t bytes = 4;
  for (int64_t d : shape) {
    if (d < 0) return "shape " + str(shape) + " has a negative or unknown dim";
    // Division, not multiplication, so the check itself cannot overflow.
    if (d != 0 && bytes > kMaxTensorBytes / d) {
      return "shape " + str(shape) + " exceeds acme_npu's 1 GiB tensor limit";
    }
    bytes *= d;
  }
  return std::nullopt;
}

int64_t float_bytes(const Shape& shape) {
  int64_t bytes = 4;
  for (int64_t d : shape) bytes *= d;
  return bytes;
}

ShapeResult infer_shape(Op op, const Attrs& attrs, std::span<const Shape> inputs) {
  switch (op) {
    case Op::kGemm:
      return gemm_shape(attrs, inputs);
    case Op::kMatMul:
      if (inputs.size() != 2) return fail("MatMul takes 2 inputs");
      if (inputs[0].size() != 2 || inputs[1].size() != 2) {
        return fail("MatMul on acme_npu needs 2-D inputs, got " + str(inputs[0]) + " and " +
                    str(inputs[1]));
      }
      if (inputs[0][1] != inputs[1][0]) {
        return fail("MatMul inner dims differ: " + str(inputs[0]) + " @ " + str(inputs[1]));
      }
      return {{inputs[0][0], inputs[1][1]}, {}};
    case Op::kAdd:
      return add_shape(inputs);
    case Op::kRelu:
      if (inputs.size() != 1) return fail("Relu takes 1 input");
      return {inputs[0], {}};
    case Op::kSoftmax: {
      if (inputs.size() != 1) return fail("Softmax takes 1 input");
      const auto rank = static_cast<int64_t>(inputs[0].size());
      if (rank == 0 || attrs.axis != rank - 1) {
        return fail("Softmax on acme_npu runs on the last axis only (axis " +
                    std::to_string(attrs.axis) + " of " + str(inputs[0]) + ")");
      }
      return {inputs[0], {}};
    }
  }
  return fail("unknown op");
}

}  // namespace acme_npu
