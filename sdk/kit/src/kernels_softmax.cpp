// Softmax, LogSoftmax and Hardmax, computed in float64 along one axis (or
// over the 2-D coercion of opsets before 13); a contiguous float32 line's
// exponentials in vectors (exp_vectors.hpp).
#include <type_traits>
#include <vector>

#include "elementwise_common.hpp"
#include "exp_vectors.hpp"

namespace eulernpu::kit {
namespace {

using namespace elementwise;

struct Lines {
  int64_t outer = 1, len = 1, inner = 1;
};

// Opset < 13 coerces the input to 2-D at `axis` (default 1) and normalizes
// each row; from 13 the op runs along one axis (default -1).
Lines softmax_lines(const KernelContext& ctx, const std::vector<int64_t>& shape) {
  const auto rank = static_cast<int64_t>(shape.size());
  const bool coerce = ctx.opset < 13;
  int64_t axis = ctx.attr_int("axis", coerce ? 1 : -1);
  if (axis < 0) axis += rank;
  Lines l;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) {
      l.outer *= shape[d];
    } else if (coerce || d == axis) {
      l.len *= shape[d];
    } else {
      l.inner *= shape[d];
    }
  }
  return l;
}

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// One line of `len` elements `stride` apart, in float64.
template <SoftmaxKind K, typename S>
void softmax_line(const S* x, S* y, int64_t len, int64_t stride) {
  double mx = -std::numeric_limits<double>::infinity();
  double mn = std::numeric_limits<double>::infinity();
  int64_t arg = 0;
  for (int64_t j = 0; j < len; ++j) {
    const auto v = static_cast<double>(load(x[j * stride]));
    mn = std::min(mn, v);
    // The first NaN wins, as numpy's argmax; it then spreads to every output.
    if (v > mx || (std::isnan(v) && !std::isnan(mx))) {
      mx = v;
      arg = j;
    }
  }
  if constexpr (K == SoftmaxKind::kHardmax) {
    for (int64_t j = 0; j < len; ++j) y[j * stride] = store<S>(j == arg ? 1.0 : 0.0);
    return;
  }
  if constexpr (std::is_same_v<S, float>) {
    // A contiguous float32 line of a vector or more with a finite maximum:
    // its exponentials in vectors, once each (exp_vectors.hpp). Shorter
    // lines (a detector's two class scores) cost more set up that way.
    if (stride == 1 && len >= 16 && std::isfinite(mx)) {
      static thread_local std::vector<double> e;
      e.resize(static_cast<size_t>(len));
      const double sum = exp_vectors::exponentials(x, len, mx, mn, e.data());
      if constexpr (K == SoftmaxKind::kSoftmax) {
        exp_vectors::divide(e.data(), len, sum, y);
      } else {
        const double log_sum = std::log(sum);
        for (int64_t j = 0; j < len; ++j) {
          y[j] = static_cast<float>(static_cast<double>(x[j]) - mx - log_sum);
        }
      }
      return;
    }
  }
  double sum = 0;
  for (int64_t j = 0; j < len; ++j) sum += std::exp(static_cast<double>(load(x[j * stride])) - mx);
  const double log_sum = std::log(sum);
  for (int64_t j = 0; j < len; ++j) {
    const double shifted = static_cast<double>(load(x[j * stride])) - mx;
    y[j * stride] =
        store<S>(K == SoftmaxKind::kSoftmax ? std::exp(shifted) / sum : shifted - log_sum);
  }
}

template <SoftmaxKind K>
void softmax_kernel(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  if (in.shape != out.shape) corrupt("a softmax op's input and output shapes differ");
  const Lines l = softmax_lines(ctx, in.shape);
  dispatch<kFloats>(in.dtype, [&]<typename S>() {
    expect_types<S, S>(in, out);
    const S* x = in.as<const S>();
    S* y = out.as<S>();
    const int64_t lines = l.outer * l.inner;
    parallel_for(lines, threads_for(ctx, in.count()), [&](int64_t begin, int64_t end) {
      for (int64_t line = begin; line < end; ++line) {
        const int64_t base = line / l.inner * l.len * l.inner + line % l.inner;
        softmax_line<K>(x + base, y + base, l.len, l.inner);
      }
    });
  });
}

// ---------------------------------------------------------------------------
// Lowering checks

std::optional<std::string> softmax_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  const auto rank = static_cast<int64_t>(shape_of(g, node.input(0)).size());
  const bool coerce = g.opset("") < 13;
  const int64_t axis = node.attr_int("axis", coerce ? 1 : -1);
  // Coercion to 2-D also accepts axis == rank (one row per element).
  const int64_t hi = coerce ? rank : rank - 1;
  if (rank == 0 || axis < -rank || axis > hi) {
    return "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank);
  }
  return std::nullopt;
}

}  // namespace

std::vector<OpEntry> softmax_ops() {
  return {
      {"Hardmax", 1, 0, kFloats, "2-D coercion before opset 13, one axis from 13", &softmax_check,
       &softmax_kernel<SoftmaxKind::kHardmax>},
      {"LogSoftmax", 1, 0, kFloats, "2-D coercion before opset 13, one axis from 13; float64",
       &softmax_check, &softmax_kernel<SoftmaxKind::kLogSoftmax>},
      {"Softmax", 1, 0, kFloats, "2-D coercion before opset 13, one axis from 13; float64",
       &softmax_check, &softmax_kernel<SoftmaxKind::kSoftmax>},
  };
}

}  // namespace eulernpu::kit
