// Reversing kernels: ReverseSequence (the first sequence_lens[b] steps of
// each batch entry reversed along the time axis, the rest copied).
#include <algorithm>
#include <cstring>
#include <string>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/status.hpp"
#include "kernel_util.hpp"

namespace eulernpu::kit {
namespace {

constexpr uint32_t kAllDtypes = kAnyDtype | ENP_DTYPE_BIT(ENP_DTYPE_UINT16) |
                                ENP_DTYPE_BIT(ENP_DTYPE_UINT32) | ENP_DTYPE_BIT(ENP_DTYPE_UINT64);

// Element type agnostic: the rows along (time, batch) are copied whole.
void reverse_sequence_kernel(const KernelContext& ctx) {
  const Buffer &x = ctx.inputs[0], &lens = ctx.inputs[1];
  Buffer& y = ctx.outputs[0];
  const int64_t time_axis = ctx.attr_int("time_axis", 0);
  const int64_t batch_axis = ctx.attr_int("batch_axis", 1);
  if (x.shape.size() < 2 || y.shape != x.shape || (time_axis != 0 && time_axis != 1) ||
      batch_axis != 1 - time_axis || lens.count() != x.shape[static_cast<size_t>(batch_axis)]) {
    corrupt("cpu_ref", "ReverseSequence shapes or axes do not agree");
  }
  const int64_t steps = x.shape[static_cast<size_t>(time_axis)];
  const int64_t batch = x.shape[static_cast<size_t>(batch_axis)];
  const size_t row = sdk::dtype_size(x.dtype) *
                     static_cast<size_t>(x.count() / std::max<int64_t>(1, steps * batch));
  const auto* len = lens.as<int64_t>();
  for (int64_t b = 0; b < batch; ++b) {
    if (len[b] < 0 || len[b] > steps) {
      throw sdk::Error(ENP_INVALID_ARGUMENT, "input tensor value out of range",
                       "ReverseSequence: sequence_lens[" + std::to_string(b) + "] = " +
                           std::to_string(len[b]) + " is outside 0.." + std::to_string(steps),
                       "pass sequence lengths no longer than the time axis");
    }
  }
  const auto* in = static_cast<const uint8_t*>(x.data);
  auto* out = static_cast<uint8_t*>(y.data);
  // Flat (time, batch) position of a row in either layout.
  auto at = [&](int64_t t, int64_t b) {
    return static_cast<size_t>(time_axis == 0 ? t * batch + b : b * steps + t) * row;
  };
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t src = t < len[b] ? len[b] - 1 - t : t;
      std::memcpy(out + at(t, b), in + at(src, b), row);
    }
  }
}

std::optional<std::string> reverse_sequence_check(const sdk::NodeView& node,
                                                  const sdk::GraphView& graph) {
  const auto lens = graph.value(node.input(1));
  if (!lens || lens->dtype() != ENP_DTYPE_INT64) return "sequence_lens must be int64";
  return std::nullopt;
}

}  // namespace

std::vector<OpEntry> reverse_ops() {
  return {
      {"ReverseSequence", 10, 0, kAllDtypes, "time_axis/batch_axis 0 and 1; int64 sequence_lens",
       &reverse_sequence_check, &reverse_sequence_kernel},
  };
}

}  // namespace eulernpu::kit
