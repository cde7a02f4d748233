// Shape rules of the signal ops (see sdk/kit/src/kernels_signal.cpp):
// DFT, STFT, the window functions and MelWeightMatrix. Their lengths and
// axes are input tensors (DFT's dft_length and axis, the windows' size):
// when those are constants the output is fully known; otherwise its rank
// is, and the model's declared output type may fill in the dims.
#include <algorithm>

#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

using Dims = std::vector<int64_t>;

// --- signal ops -------------------------------------------------------------

// DFT: the axis becomes dft_length (n / 2 + 1 bins when onesided); the last
// dim becomes 2 (complex), or 1 for a onesided inverse (real).
void dft(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!x.known) return ctx.set_output(0, x);
  const auto rank = static_cast<int64_t>(x.dims.size());
  ctx.require(rank >= 2, "input must have rank >= 2 (signal dims, then 1 or 2)");
  const bool inverse = ctx.attr_int("inverse", 0) != 0;
  const bool onesided = ctx.attr_int("onesided", 0) != 0;
  const bool real_out = inverse && onesided;
  ValueType out{x.dtype, x.dims, true};
  out.dims.back() = real_out ? 1 : 2;
  std::optional<int64_t> axis = ctx.attr_int("axis", 1);
  if (ctx.opset() >= 20) axis = ctx.has_input(2) ? constant_scalar(ctx, 2) : -2;
  if (!axis) {
    // The axis is only known at run time: so is every signal dim's size.
    if (onesided || ctx.has_input(1)) std::fill(out.dims.begin(), out.dims.end() - 1, -1);
    return ctx.set_output(0, out);
  }
  const auto a = static_cast<size_t>(ctx.axis(*axis, rank));
  ctx.require(a + 1 < x.dims.size(), "the DFT axis may not be the last (complex) dim");
  const int64_t len = x.dims[a];
  int64_t n = len < 0 ? -1 : (real_out ? 2 * (len - 1) : len);
  if (ctx.has_input(1)) n = constant_scalar(ctx, 1).value_or(-1);
  ctx.require(n != 0 && n >= -1, "dft_length must be positive");
  out.dims[a] = n < 0 || real_out || !onesided ? n : n / 2 + 1;
  ctx.set_output(0, out);
}

// STFT: (batch, frames, bins, 2) from the signal (batch, length, 1 or 2).
void stft(InferContext& ctx) {
  const ValueType& sig = ctx.input(0);
  if (!sig.known) return ctx.set_output(0, unknown_dims(sig.dtype, 4));
  ctx.require(sig.dims.size() == 3, "the signal must be (batch, length, 1 or 2)");
  const auto step = constant_scalar(ctx, 1);
  // -1: not known at compile time (a plain integer: GCC 12 misreads an
  // optional reassigned in branches as maybe-uninitialized).
  int64_t frame = sig.dims[1];
  if (ctx.has_input(2)) frame = vector_length(ctx, 2);
  if (ctx.has_input(3)) {
    const auto given = constant_scalar(ctx, 3);
    if (given) ctx.require(*given > 0, "frame_length must be positive");
    frame = given.value_or(-1);
  }
  Dims out{sig.dims[0], -1, -1, 2};
  if (frame >= 0) {
    ctx.require(frame > 0, "frame_length must be positive");
    out[2] = ctx.attr_int("onesided", 1) != 0 ? frame / 2 + 1 : frame;
    if (step && sig.dims[1] >= 0) {
      ctx.require(*step > 0 && frame <= sig.dims[1],
                  "frame_step must be positive and frame_length fit the signal");
      out[1] = 1 + (sig.dims[1] - frame) / *step;
    }
  }
  ctx.set_output(0, ValueType{sig.dtype, out, true});
}

DType output_datatype(const InferContext& ctx) {
  return static_cast<DType>(ctx.attr_int("output_datatype", static_cast<int64_t>(DType::kFloat32)));
}

// The window functions: (size) of output_datatype.
void window(InferContext& ctx) {
  const auto size = constant_scalar(ctx, 0);
  ctx.require(!size || *size >= 0, "the window size must not be negative");
  ctx.set_output(0, ValueType{output_datatype(ctx), {size.value_or(-1)}, true});
}

// MelWeightMatrix: (dft_length / 2 + 1, num_mel_bins).
void mel_weight_matrix(InferContext& ctx) {
  const auto bins = constant_scalar(ctx, 0);
  const auto dft_length = constant_scalar(ctx, 1);
  ctx.require((!bins || *bins >= 0) && (!dft_length || *dft_length > 0),
              "num_mel_bins must not be negative and dft_length must be positive");
  const int64_t rows = dft_length ? *dft_length / 2 + 1 : -1;
  ctx.set_output(0, ValueType{output_datatype(ctx), {rows, bins.value_or(-1)}, true});
}
}  // namespace

std::vector<OpRule> signal_rules() {
  return {
      {"BlackmanWindow", &window, nullptr},
      {"DFT", &dft, nullptr},
      {"HammingWindow", &window, nullptr},
      {"HannWindow", &window, nullptr},
      {"MelWeightMatrix", &mel_weight_matrix, nullptr},
      {"STFT", &stft, nullptr},
  };
}

}  // namespace eulernpu::host::ir
