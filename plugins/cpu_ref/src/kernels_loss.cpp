// Loss ops computed at inference: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {

std::vector<OpEntry> loss_ops() { return {}; }

}  // namespace eulernpu::cpu_ref
