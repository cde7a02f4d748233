// fp32 reference kernels. Each takes its shapes from the context, already
// checked at lowering, and writes its outputs in place.
#pragma once

#include "op_table.hpp"

namespace eulernpu::cpu_ref {

void f32_matmul(const KernelContext& ctx);
void f32_gemm(const KernelContext& ctx);
void f32_add(const KernelContext& ctx);
void f32_sub(const KernelContext& ctx);
void f32_mul(const KernelContext& ctx);
void f32_div(const KernelContext& ctx);
void f32_relu(const KernelContext& ctx);
void f32_sigmoid(const KernelContext& ctx);
void f32_tanh(const KernelContext& ctx);
void f32_softmax(const KernelContext& ctx);
void any_identity(const KernelContext& ctx);

}  // namespace eulernpu::cpu_ref
