#include "op_table.hpp"

#include "kernels_fp32.hpp"

namespace eulernpu::cpu_ref {
namespace {

constexpr uint32_t kF32 = ENP_DTYPE_BIT(ENP_DTYPE_FLOAT32);
constexpr uint32_t kAny = kF32 | ENP_DTYPE_BIT(ENP_DTYPE_INT8) | ENP_DTYPE_BIT(ENP_DTYPE_UINT8) |
                          ENP_DTYPE_BIT(ENP_DTYPE_INT32) | ENP_DTYPE_BIT(ENP_DTYPE_INT64) |
                          ENP_DTYPE_BIT(ENP_DTYPE_BOOL);

std::optional<std::string> gemm_check(const sdk::NodeView& node, const sdk::GraphView&) {
  for (const auto& a : node.attributes()) {
    const std::string_view n = a.name;
    if (n != "alpha" && n != "beta" && n != "transA" && n != "transB" && n != "broadcast") {
      return "attribute '" + std::string(n) + "' is not supported";
    }
  }
  return std::nullopt;
}

const OpEntry kOps[] = {
    {"Add", 7, 0, kF32, "numpy broadcasting", nullptr, &f32_add},
    {"Div", 7, 0, kF32, "numpy broadcasting", nullptr, &f32_div},
    {"Gemm", 7, 0, kF32, "C broadcast to (M, N)", &gemm_check, &f32_gemm},
    {"Identity", 1, 0, kAny, "", nullptr, &any_identity},
    {"MatMul", 1, 0, kF32, "batched, numpy broadcasting of batch dims", nullptr, &f32_matmul},
    {"Mul", 7, 0, kF32, "numpy broadcasting", nullptr, &f32_mul},
    {"Relu", 6, 0, kF32, "", nullptr, &f32_relu},
    {"Sigmoid", 6, 0, kF32, "", nullptr, &f32_sigmoid},
    {"Softmax", 1, 0, kF32, "any axis; accumulates in float64", nullptr, &f32_softmax},
    {"Sub", 7, 0, kF32, "numpy broadcasting", nullptr, &f32_sub},
    {"Tanh", 6, 0, kF32, "", nullptr, &f32_tanh},
};

}  // namespace

int64_t KernelContext::attr_int(const char* name, int64_t fallback) const {
  auto it = attributes.find(name);
  return it != attributes.end() && it->is_number() ? it->get<int64_t>() : fallback;
}

double KernelContext::attr_float(const char* name, double fallback) const {
  auto it = attributes.find(name);
  return it != attributes.end() && it->is_number() ? it->get<double>() : fallback;
}

std::span<const OpEntry> op_table() { return kOps; }

const OpEntry* find_op(std::string_view op_type, int64_t opset) {
  for (const OpEntry& e : kOps) {
    if (op_type == e.op_type && opset >= e.since_version &&
        (e.until_version == 0 || opset <= e.until_version)) {
      return &e;
    }
  }
  return nullptr;
}

const std::vector<enp_op_support_t>& op_declarations() {
  static const std::vector<enp_op_support_t> decls = [] {
    std::vector<enp_op_support_t> d;
    for (const OpEntry& e : kOps) {
      d.push_back({"", e.op_type, e.since_version, e.until_version, e.dtypes, e.constraints});
    }
    return d;
  }();
  return decls;
}

}  // namespace eulernpu::cpu_ref
