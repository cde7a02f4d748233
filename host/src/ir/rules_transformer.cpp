// Shape rules of the transformer ops (see plugins/cpu_ref/src/kernels_transformer.cpp).
#include "op_rules.hpp"

namespace eulernpu::host::ir {

std::vector<OpRule> transformer_rules() { return {}; }

}  // namespace eulernpu::host::ir
