// Shape rules of the misc ops (see plugins/cpu_ref/src/kernels_misc.cpp).
#include "op_rules.hpp"

namespace eulernpu::host::ir {

std::vector<OpRule> misc_rules() { return {}; }

}  // namespace eulernpu::host::ir
