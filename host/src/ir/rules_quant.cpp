// Shape rules of the quant ops (see plugins/cpu_ref/src/kernels_quant.cpp).
#include "op_rules.hpp"

namespace eulernpu::host::ir {

std::vector<OpRule> quant_rules() { return {}; }

}  // namespace eulernpu::host::ir
