// cpu_ref's side of the low-precision element types (float8, float4e2m1,
// float8e8m0, int4, uint4, int2, uint2): their dtype mask and the Cast
// between them and every other type. Buffers hold one byte per element, as
// abi.h lays them out; the bit-exact codecs are eulernpu/sdk/lowbit.hpp's,
// shared with the host.
#pragma once

#include <optional>
#include <string>

#include "eulernpu/kit/op_table.hpp"
#include "eulernpu/sdk/graph.hpp"
#include "eulernpu/sdk/lowbit.hpp"

namespace eulernpu::kit {

inline constexpr uint32_t kLowBitFloats =
    ENP_DTYPE_BIT(ENP_DTYPE_FLOAT8E4M3FN) | ENP_DTYPE_BIT(ENP_DTYPE_FLOAT8E4M3FNUZ) |
    ENP_DTYPE_BIT(ENP_DTYPE_FLOAT8E5M2) | ENP_DTYPE_BIT(ENP_DTYPE_FLOAT8E5M2FNUZ) |
    ENP_DTYPE_BIT(ENP_DTYPE_FLOAT4E2M1);
inline constexpr uint32_t kLowBitInts =
    ENP_DTYPE_BIT(ENP_DTYPE_INT4) | ENP_DTYPE_BIT(ENP_DTYPE_UINT4) | ENP_DTYPE_BIT(ENP_DTYPE_INT2) |
    ENP_DTYPE_BIT(ENP_DTYPE_UINT2);
inline constexpr uint32_t kLowBit =
    kLowBitFloats | kLowBitInts | ENP_DTYPE_BIT(ENP_DTYPE_FLOAT8E8M0);

// Cast and CastLike when the input or the output is a low-precision type:
// through the exact value (float64, or int64 for integer inputs), rounded
// once into the target as eulernpu/sdk/lowbit.hpp describes. Attributes:
// saturate (opset 19+, float8 targets), round_mode (opset 24+, float8e8m0).
void lowbit_cast_kernel(const KernelContext& ctx);

// Why Cast/CastLike from `from` to `to` can't lower (bad saturate or
// round_mode), or nullopt. Only called when one side is low-precision.
std::optional<std::string> lowbit_cast_problem(const sdk::NodeView& node, int32_t from, int32_t to);

}  // namespace eulernpu::kit
