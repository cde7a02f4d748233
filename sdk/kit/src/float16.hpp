// cpu_ref's kernels read the SDK's float16 / bfloat16 conversions
// unqualified, as they did when the conversions lived here.
#pragma once

#include "eulernpu/sdk/float16.hpp"

namespace eulernpu::kit {
using namespace sdk::float16;  // NOLINT(google-build-using-namespace)
}  // namespace eulernpu::kit
