// Data-movement and shape kernels (Reshape, Transpose, Gather, Slice, ...).
#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {

std::vector<OpEntry> shape_ops() { return {}; }

}  // namespace eulernpu::cpu_ref
