// Rules of reductions and index ops (Reduce*, ArgMax, TopK, CumSum).
#include "op_rules.hpp"

namespace eulernpu::host::ir {

std::vector<OpRule> reduce_rules() { return {}; }

}  // namespace eulernpu::host::ir
