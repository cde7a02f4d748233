// Normalization kernels (BatchNormalization, LayerNormalization, InstanceNormalization).
#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {

std::vector<OpEntry> norm_ops() { return {}; }

}  // namespace eulernpu::cpu_ref
