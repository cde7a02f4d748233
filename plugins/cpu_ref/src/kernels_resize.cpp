// Resize (nearest, linear, cubic; every coordinate transformation mode).
#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {

std::vector<OpEntry> resize_ops() { return {}; }

}  // namespace eulernpu::cpu_ref
