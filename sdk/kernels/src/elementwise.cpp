// QAdd, QSub and QMul (eulernpu/kernels/elementwise.hpp).
#include "eulernpu/kernels/elementwise.hpp"

namespace eulernpu::kernels {
namespace {

namespace qmath = sdk::qmath;

// fn(a, b) for every output element, in rows along the last output dim.
template <typename Fn>
void broadcast_binary(const BroadcastShapes& s, const int8_t* pa, const int8_t* pb, int8_t* py,
                      const TaskRunner& r, Fn fn) {
  const size_t rank = s.y.size();
  const int64_t total = product(s.y);
  if (total == 0) return;
  const int64_t inner = rank == 0 ? 1 : s.y.back();
  const Dims sa = broadcast_strides(s.a, rank), sb = broadcast_strides(s.b, rank);
  const int64_t step_a = rank == 0 ? 0 : sa.back(), step_b = rank == 0 ? 0 : sb.back();
  for_each_range(r, total / inner, threads_for(r, total), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t rest = row, oa = 0, ob = 0;
      for (size_t d = rank == 0 ? 0 : rank - 1; d-- > 0;) {
        const int64_t idx = rest % s.y[d];
        rest /= s.y[d];
        oa += idx * sa[d];
        ob += idx * sb[d];
      }
      int8_t* out = py + row * inner;
      for (int64_t i = 0; i < inner; ++i) out[i] = fn(pa[oa + i * step_a], pb[ob + i * step_b]);
    }
  });
}

}  // namespace

void qadd(const BroadcastShapes& s, const qmath::AddParams& p, bool subtract, const int8_t* a,
          const int8_t* b, int8_t* y, const TaskRunner& r) {
  if (subtract) {
    broadcast_binary(s, a, b, y, r, [&](int8_t u, int8_t v) {
      return static_cast<int8_t>(qmath::add(u, v, p, true));
    });
  } else {
    broadcast_binary(s, a, b, y, r, [&](int8_t u, int8_t v) {
      return static_cast<int8_t>(qmath::add(u, v, p, false));
    });
  }
}

void qmul(const BroadcastShapes& s, const QMulParams& p, const int8_t* a, const int8_t* b,
          int8_t* y, const TaskRunner& r) {
  broadcast_binary(s, a, b, y, r, [&](int8_t u, int8_t v) {
    return static_cast<int8_t>(qmath::requantize((u - p.a_zero_point) * (v - p.b_zero_point),
                                                 p.multiplier, p.y_zero_point, p.qmin, p.qmax));
  });
}

}  // namespace eulernpu::kernels
