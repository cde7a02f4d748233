// fp32 kernels in plain loops. Every kernel trusts its shapes: callers pass
// only operands that infer_shape() accepted and an `out` already shaped and
// sized to the inferred shape.
#pragma once

#include <vector>

#include "ops.hpp"

namespace acme_npu {

// A tensor in host memory. Owned floats, never a view of host buffers: the
// host's npz data carries no alignment promise for float.
struct Buffer {
  Shape shape;
  std::vector<float> data;
};

// c may be null (no C input).
void gemm(const Attrs& attrs, const Buffer& a, const Buffer& b, const Buffer* c, Buffer& out);
void matmul(const Buffer& a, const Buffer& b, Buffer& out);
void add(const Buffer& a, const Buffer& b, Buffer& out);
void relu(const Buffer& x, Buffer& out);
void softmax_last_axis(const Buffer& x, Buffer& out);

}  // namespace acme_npu
