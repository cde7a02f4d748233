#include "device.hpp"

#include <cstring>

#include "eulernpu/sdk/errors.hpp"
#include "kernels.hpp"
#include "lowering.hpp"

namespace acme_npu {
namespace {

namespace kit = eulernpu::kit;
namespace sdk = eulernpu::sdk;

[[noreturn]] void corrupt(const std::string& where) {
  sdk::errors::artifact_corrupt("acme_npu " + where, "acme_npu");
}

// The device's memory: owned floats, copied from the arena, which is how a
// real port would move data to its device and back.
Buffer to_device(const kit::Buffer& b) {
  Buffer out{b.shape, std::vector<float>(static_cast<size_t>(b.count()))};
  if (!out.data.empty()) std::memcpy(out.data.data(), b.data, out.data.size() * sizeof(float));
  return out;
}

}  // namespace

bool run_on_device(const kit::LoweredNode& node, const kit::KernelContext& ctx) {
  if (!node.domain.empty()) return false;
  const auto op = find_op(node.op, node.opset);
  if (!op) return false;
  // Every operand of acme_npu's ops is float32 (lowering checked); anything
  // else is a node the kit runs.
  // Omitted trailing optionals (Gemm's C) come as absent buffers.
  size_t count = ctx.inputs.size();
  while (count > 0 && ctx.inputs[count - 1].dtype == ENP_DTYPE_UNDEFINED) --count;
  const auto present = ctx.inputs.first(count);
  std::vector<Shape> shapes;
  for (const kit::Buffer& b : present) {
    if (b.dtype != ENP_DTYPE_FLOAT32) return false;
    if (auto problem = shape_problem(b.shape)) corrupt("node '" + node.name + "': " + *problem);
    shapes.push_back(b.shape);
  }
  if (ctx.outputs.size() != 1 || ctx.outputs[0].dtype != ENP_DTYPE_FLOAT32) return false;
  const Attrs attrs = stored_attrs(node, shapes.empty() ? 0 : shapes[0].size());
  const ShapeResult r = infer_shape(*op, attrs, shapes);
  if (!r.problem.empty()) corrupt("node '" + node.name + "': " + r.problem);
  if (r.shape != ctx.outputs[0].shape) {
    corrupt("node '" + node.name + "': output shape " + sdk::shape_string(ctx.outputs[0].shape) +
            " differs from the " + sdk::shape_string(r.shape) + " acme_npu computes");
  }

  std::vector<Buffer> in;
  for (const kit::Buffer& b : present) in.push_back(to_device(b));
  Buffer out{r.shape,
             std::vector<float>(static_cast<size_t>(float_bytes(r.shape)) / sizeof(float))};
  switch (*op) {
    case Op::kGemm:
      gemm(attrs, in[0], in[1], in.size() > 2 ? &in[2] : nullptr, out);
      break;
    case Op::kMatMul:
      matmul(in[0], in[1], out);
      break;
    case Op::kAdd:
      add(in[0], in[1], out);
      break;
    case Op::kRelu:
      relu(in[0], out);
      break;
    case Op::kSoftmax:
      softmax_last_axis(in[0], out);
      break;
  }
  if (!out.data.empty()) {
    std::memcpy(ctx.outputs[0].data, out.data.data(), out.data.size() * sizeof(float));
  }
  return true;
}

}  // namespace acme_npu
