// The device side: the per-node hook the backend kit's executor calls. It
// runs acme_npu's own float32 ops on "the device" (here, kernels.cpp's
// loops) and leaves every other node to the kit's reference kernels.
#pragma once

#include "eulernpu/kit/executor.hpp"

namespace acme_npu {

// A kit::NodeRunner. Throws sdk::Error "artifact is corrupt" when a node's
// buffers break acme_npu's shape rules (only a damaged artifact does).
bool run_on_device(const eulernpu::kit::LoweredNode& node, const eulernpu::kit::KernelContext& ctx);

}  // namespace acme_npu
