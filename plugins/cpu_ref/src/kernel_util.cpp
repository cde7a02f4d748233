#include "kernel_util.hpp"

#include "float16.hpp"

namespace eulernpu::cpu_ref {

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& shape, size_t rank) {
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const size_t src = shape.size() - 1 - i;
    const size_t dst = rank - 1 - i;
    strides[dst] = shape[src] == 1 ? 0 : stride;
    stride *= shape[src];
  }
  return strides;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

void run_f16_as_f32(const KernelContext& ctx, KernelFn f32_kernel) {
  // The float32 copies; moving a vector keeps its elements where they are.
  std::vector<std::vector<float>> storage;
  auto widened = [&storage](const Buffer& b) {
    if (b.dtype != ENP_DTYPE_FLOAT16) return b;
    const auto* h = b.as<const Half>();
    auto& v = storage.emplace_back(static_cast<size_t>(b.count()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = half_to_float(h[i].bits);
    return Buffer{ENP_DTYPE_FLOAT32, b.shape, v.data()};
  };
  std::vector<Buffer> inputs, outputs;
  for (const Buffer& b : ctx.inputs) inputs.push_back(widened(b));
  for (const Buffer& b : ctx.outputs) {
    if (b.dtype != ENP_DTYPE_FLOAT16) {
      outputs.push_back(b);
      continue;
    }
    auto& v = storage.emplace_back(static_cast<size_t>(b.count()));
    outputs.push_back(Buffer{ENP_DTYPE_FLOAT32, b.shape, v.data()});
  }
  const KernelContext wide{ctx.attributes, inputs,     outputs,         ctx.opset,
                           ctx.threads,    ctx.lookup, ctx.lookup_state};
  f32_kernel(wide);
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (ctx.outputs[o].dtype != ENP_DTYPE_FLOAT16) continue;
    const float* src = outputs[o].as<const float>();
    auto* dst = ctx.outputs[o].as<Half>();
    const int64_t n = ctx.outputs[o].count();
    for (int64_t i = 0; i < n; ++i) dst[i] = Half{half_from_double(src[i])};
  }
}

}  // namespace eulernpu::cpu_ref
