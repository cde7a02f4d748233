// Rules of the data-movement and shape ops (Reshape, Transpose, Gather, ...)
// and the constant folding of shape arithmetic.
#include "op_rules.hpp"

namespace eulernpu::host::ir {

std::vector<OpRule> shape_rules() { return {}; }

}  // namespace eulernpu::host::ir
