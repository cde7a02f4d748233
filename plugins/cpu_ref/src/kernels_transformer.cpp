// Transformer ops: Attention, RMSNormalization, RotaryEmbedding, Swish.
#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {

std::vector<OpEntry> transformer_ops() { return {}; }

}  // namespace eulernpu::cpu_ref
