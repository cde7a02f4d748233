#include "executor.hpp"

#include <cstring>

#include "kernels.hpp"

namespace acme_npu {
namespace {

namespace sdk = eulernpu::sdk;

const enp_tensor_t* find(std::span<const enp_tensor_t> list, std::string_view name) {
  for (const enp_tensor_t& t : list) {
    if (t.name != nullptr && name == t.name) return &t;
  }
  return nullptr;
}

// Why `t` is not a float32 tensor of `shape` with all its bytes, or "".
std::string mismatch(const enp_tensor_t& t, const Shape& shape) {
  if (t.dtype != ENP_DTYPE_FLOAT32) {
    return std::string("is ") + sdk::dtype_name(t.dtype) + ", not float32";
  }
  if (t.rank > 0 && t.dims == nullptr) return "has no dimensions";
  const Shape got(t.dims, t.dims + t.rank);
  if (got != shape) {
    return "has shape " + sdk::shape_string(got) + ", not " + sdk::shape_string(shape);
  }
  if (t.size_bytes != static_cast<uint64_t>(float_bytes(shape)) ||
      (t.size_bytes > 0 && t.data == nullptr)) {
    return "does not hold as many bytes as its shape needs";
  }
  return {};
}

Buffer copy_in(const enp_tensor_t& t, const Shape& shape) {
  Buffer b{shape, std::vector<float>(t.size_bytes / sizeof(float))};
  if (t.size_bytes > 0) std::memcpy(b.data.data(), t.data, t.size_bytes);
  return b;
}

void bind_input(const std::string& name, const Shape& shape, std::span<const enp_tensor_t> inputs,
                Buffer& out) {
  const enp_tensor_t* t = find(inputs, name);
  if (t == nullptr) {
    throw sdk::Error(ENP_INVALID_ARGUMENT, "input tensor key not found",
                     "acme_npu needs input '" + name + "'", "save the input under that key");
  }
  const std::string problem = mismatch(*t, shape);
  if (!problem.empty()) {
    throw sdk::Error(ENP_INVALID_ARGUMENT,
                     t->dtype == ENP_DTYPE_FLOAT32 ? "input tensor shape mismatch"
                                                   : "input tensor dtype mismatch",
                     "input '" + name + "' " + problem,
                     "pass the dtype and shape the model was compiled for");
  }
  out = copy_in(*t, shape);
}

void run_node(const NodeDecl& n, std::vector<Buffer>& values) {
  std::vector<const Buffer*> in;
  for (size_t i : n.inputs) in.push_back(&values[i]);
  Buffer& out = values[n.output];
  switch (n.op) {
    case Op::kGemm:
      gemm(n.attrs, *in[0], *in[1], in.size() > 2 ? in[2] : nullptr, out);
      break;
    case Op::kMatMul:
      matmul(*in[0], *in[1], out);
      break;
    case Op::kAdd:
      add(*in[0], *in[1], out);
      break;
    case Op::kRelu:
      relu(*in[0], out);
      break;
    case Op::kSoftmax:
      softmax_last_axis(*in[0], out);
      break;
  }
}

}  // namespace

std::vector<sdk::OwnedTensor> execute(const Program& p, std::span<const enp_tensor_t> weights,
                                      std::span<const enp_tensor_t> inputs) {
  std::vector<Buffer> values(p.tensors.size());
  size_t n_weights = 0;
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const TensorDecl& t = p.tensors[i];
    if (t.kind == TensorKind::kInput) bind_input(t.name, t.shape, inputs, values[i]);
    if (t.kind != TensorKind::kWeight) continue;
    const enp_tensor_t* w = find(weights, t.name);
    if (w == nullptr) corrupt(std::string(kWeightsFile) + " has no weight '" + t.name + "'");
    const std::string problem = mismatch(*w, t.shape);
    if (!problem.empty()) corrupt(std::string(kWeightsFile) + ": '" + t.name + "' " + problem);
    values[i] = copy_in(*w, t.shape);
    ++n_weights;
  }
  if (n_weights != weights.size()) {
    corrupt(std::string(kWeightsFile) + " holds tensors graph.json does not declare");
  }

  for (size_t step : p.order) {
    const NodeDecl& n = p.nodes[step];
    // Shapes were checked by validate(); sizing here is all a kernel needs.
    Buffer& out = values[n.output];
    out.shape = p.tensors[n.output].shape;
    out.data.assign(static_cast<size_t>(float_bytes(out.shape)) / sizeof(float), 0.0f);
    run_node(n, values);
  }

  std::vector<sdk::OwnedTensor> outputs;
  for (size_t i : p.outputs) {
    const Buffer& b = values[i];
    const auto* bytes = reinterpret_cast<const uint8_t*>(b.data.data());
    outputs.push_back({p.tensors[i].name,
                       ENP_DTYPE_FLOAT32,
                       b.shape,
                       {bytes, bytes + b.data.size() * sizeof(float)}});
  }
  return outputs;
}

}  // namespace acme_npu
