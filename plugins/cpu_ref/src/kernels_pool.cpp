// Pooling kernels (MaxPool, AveragePool, global pools).
#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {

std::vector<OpEntry> pool_ops() { return {}; }

}  // namespace eulernpu::cpu_ref
