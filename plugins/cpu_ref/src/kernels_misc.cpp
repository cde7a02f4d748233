// Less common ops: Einsum, CumProd, GridSample, AffineGrid, CenterCropPad, Col2Im, ...
#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {

std::vector<OpEntry> misc_ops() { return {}; }

}  // namespace eulernpu::cpu_ref
