// Shape rules of the loss ops (see plugins/cpu_ref/src/kernels_loss.cpp).
#include "op_rules.hpp"

namespace eulernpu::host::ir {

std::vector<OpRule> loss_rules() { return {}; }

}  // namespace eulernpu::host::ir
