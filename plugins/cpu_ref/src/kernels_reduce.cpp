// Reductions and index kernels (Reduce*, ArgMax, TopK, CumSum).
#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {

std::vector<OpEntry> reduce_ops() { return {}; }

}  // namespace eulernpu::cpu_ref
