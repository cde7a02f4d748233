// Convolution kernels (Conv with groups and dilations, ConvTranspose).
#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {

std::vector<OpEntry> conv_ops() { return {}; }

}  // namespace eulernpu::cpu_ref
