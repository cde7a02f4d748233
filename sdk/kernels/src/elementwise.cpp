// QAdd, QSub and QMul (eulernpu/kernels/elementwise.hpp).
#include "eulernpu/kernels/elementwise.hpp"

#include <algorithm>
#include <array>
#include <type_traits>

#include "lookup_bytes.hpp"
#include "requantize_row.hpp"

namespace eulernpu::kernels {
namespace {

namespace qmath = sdk::qmath;

#if EULERNPU_KERNELS_HAVE_NEON
// Eight operands of a row whose step is 1 (contiguous) or 0 (one value
// broadcast along it), widened to two int32x4 minus the zero point.
struct Lanes {
  int32x4_t lo, hi;
};

Lanes load_lanes(const int8_t* p, int64_t step, int32_t zero_point) {
  const int16x8_t wide = vmovl_s8(step == 0 ? vdup_n_s8(*p) : vld1_s8(p));
  const int32x4_t zp = vdupq_n_s32(zero_point);
  return {vsubq_s32(vmovl_s16(vget_low_s16(wide)), zp),
          vsubq_s32(vmovl_s16(vget_high_s16(wide)), zp)};
}

// qmath::add on eight lanes: the same integers step by step ((q - zp) <<
// 20 within ±2^29, each rescaled term within int32, as qmath::add notes).
int8x8_t add_lanes(const int8_t* a, int64_t step_a, const int8_t* b, int64_t step_b,
                   const qmath::AddParams& p, bool subtract) {
  const Lanes u = load_lanes(a, step_a, p.a_zero_point), v = load_lanes(b, step_b, p.b_zero_point);
  auto half = [&](int32x4_t x, int32x4_t y) {
    const int32x4_t sa = detail::rounding_multiply_lanes(vshlq_n_s32(x, qmath::kAddLeftShift), p.a);
    const int32x4_t sb = detail::rounding_multiply_lanes(vshlq_n_s32(y, qmath::kAddLeftShift), p.b);
    return detail::requantize_lanes(subtract ? vsubq_s32(sa, sb) : vaddq_s32(sa, sb), p.out,
                                    p.out_zero_point, p.qmin, p.qmax);
  };
  return detail::narrow_lanes(half(u.lo, v.lo), half(u.hi, v.hi));
}

// The QMul product (q_a - zp_a) · (q_b - zp_b), within ±2^16, requantized.
int8x8_t mul_lanes(const int8_t* a, int64_t step_a, const int8_t* b, int64_t step_b,
                   const QMulParams& p) {
  const Lanes u = load_lanes(a, step_a, p.a_zero_point), v = load_lanes(b, step_b, p.b_zero_point);
  return detail::narrow_lanes(
      detail::requantize_lanes(vmulq_s32(u.lo, v.lo), p.multiplier, p.y_zero_point, p.qmin, p.qmax),
      detail::requantize_lanes(vmulq_s32(u.hi, v.hi), p.multiplier, p.y_zero_point, p.qmin,
                               p.qmax));
}
#endif

// Outputs in rows along the last output dim. With NEON, lanes(a, step_a,
// b, step_b) computes eight outputs at once where both steps along the row
// are 0 or 1 (the common cases: two tensors of one shape, or one broadcast
// along the row); pass 0 for no lanes. The rest, in chunks of at most
// kChunk: chunk(a, step_a, b, step_b, n, y) writes n outputs.
constexpr int64_t kChunk = 512;

template <typename Chunk, typename LanesFn>
void broadcast_binary(const BroadcastShapes& s, const int8_t* pa, const int8_t* pb, int8_t* py,
                      const TaskRunner& r, Chunk chunk, [[maybe_unused]] LanesFn lanes) {
  const int64_t total = product(s.y);
  if (total == 0) return;
  // Adjacent dims that both operands step through alike (each contiguous
  // across them, or broadcast along both) merge into one: a [1, C, H, W]
  // times [1, C, 1, 1] scale is C rows of H·W, not C·H rows of W.
  Dims y, sa, sb;
  {
    const Dims fa = broadcast_strides(s.a, s.y.size()), fb = broadcast_strides(s.b, s.y.size());
    for (size_t d = 0; d < s.y.size(); ++d) {
      if (!y.empty() && sa.back() == fa[d] * s.y[d] && sb.back() == fb[d] * s.y[d]) {
        y.back() *= s.y[d];
        sa.back() = fa[d];
        sb.back() = fb[d];
        continue;
      }
      y.push_back(s.y[d]);
      sa.push_back(fa[d]);
      sb.push_back(fb[d]);
    }
  }
  const size_t rank = y.size();
  const int64_t inner = rank == 0 ? 1 : y.back();
  const int64_t step_a = rank == 0 ? 0 : sa.back(), step_b = rank == 0 ? 0 : sb.back();
  // The tasks are pieces of rows, so that a merged row (two whole tensors
  // of one shape are one) is still split among threads; a piece is a
  // whole number of chunks.
  constexpr int64_t kPiece = 32 * kChunk;
  const int64_t pieces = (inner + kPiece - 1) / kPiece;
  for_each_range(r, total / inner * pieces, threads_for(r, total), [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      const int64_t row = unit / pieces, i0 = unit % pieces * kPiece;
      const int64_t i1 = std::min(inner, i0 + kPiece);
      int64_t rest = row, oa = 0, ob = 0;
      for (size_t d = rank == 0 ? 0 : rank - 1; d-- > 0;) {
        const int64_t idx = rest % y[d];
        rest /= y[d];
        oa += idx * sa[d];
        ob += idx * sb[d];
      }
      int8_t* out = py + row * inner;
      int64_t i = i0;
#if EULERNPU_KERNELS_HAVE_NEON
      if constexpr (!std::is_same_v<LanesFn, int>) {
        if (step_a <= 1 && step_b <= 1) {
          for (; i + 8 <= i1; i += 8) {
            vst1_s8(out + i, lanes(pa + oa + i * step_a, step_a, pb + ob + i * step_b, step_b));
          }
        }
      }
#endif
      for (; i < i1; i += kChunk) {
        const int64_t n = std::min(kChunk, i1 - i);
        chunk(pa + oa + i * step_a, step_a, pb + ob + i * step_b, step_b, n, out + i);
      }
    }
  });
}

// A chunk function that writes the int32 sums of its outputs through
// terms(a, step_a, b, step_b, n, acc), then requantizes them
// (requantize_row: in vectors on x86-64).
template <typename Terms>
auto requantized(Terms terms, qmath::FixedMultiplier m, int32_t zero_point, int32_t qmin,
                 int32_t qmax) {
  return [=](const int8_t* pa, int64_t sa, const int8_t* pb, int64_t sb, int64_t n, int8_t* y) {
    int32_t acc[kChunk];
    terms(pa, sa, pb, sb, n, acc);
    detail::requantize_row(acc, n, 0, m, zero_point, qmin, qmax, y);
  };
}

// qmath::add's two rescaled terms depend on one code each: 256 of each.
struct AddTerms {
  std::array<int32_t, 256> a{}, b{};
  explicit AddTerms(const qmath::AddParams& p) {
    for (int c = -128; c <= 127; ++c) {
      a[static_cast<size_t>(c + 128)] = qmath::add_term(c, p.a_zero_point, p.a);
      b[static_cast<size_t>(c + 128)] = qmath::add_term(c, p.b_zero_point, p.b);
    }
  }
};

}  // namespace

void qadd(const BroadcastShapes& s, const qmath::AddParams& p, bool subtract, const int8_t* a,
          const int8_t* b, int8_t* y, const TaskRunner& r) {
#if EULERNPU_KERNELS_HAVE_NEON
  auto lanes = [&](const int8_t* pa, int64_t sa, const int8_t* pb, int64_t sb) {
    return add_lanes(pa, sa, pb, sb, p, subtract);
  };
#else
  const int lanes = 0;
#endif
  // The terms computed once per code, then a sum (or difference) per output.
  const AddTerms t(p);
  const int32_t sign = subtract ? -1 : 1;
  auto terms = [&](const int8_t* pa, int64_t sa, const int8_t* pb, int64_t sb, int64_t n,
                   int32_t* acc) {
    if (sa == 1 && sb == 1) {
      for (int64_t i = 0; i < n; ++i) {
        acc[i] =
            t.a[static_cast<size_t>(pa[i] + 128)] + sign * t.b[static_cast<size_t>(pb[i] + 128)];
      }
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      acc[i] = t.a[static_cast<size_t>(pa[i * sa] + 128)] +
               sign * t.b[static_cast<size_t>(pb[i * sb] + 128)];
    }
  };
  broadcast_binary(s, a, b, y, r, requantized(terms, p.out, p.out_zero_point, p.qmin, p.qmax),
                   lanes);
}

void qmul(const BroadcastShapes& s, const QMulParams& p, const int8_t* a, const int8_t* b,
          int8_t* y, const TaskRunner& r) {
#if EULERNPU_KERNELS_HAVE_NEON
  auto lanes = [&](const int8_t* pa, int64_t sa, const int8_t* pb, int64_t sb) {
    return mul_lanes(pa, sa, pb, sb, p);
  };
#else
  const int lanes = 0;
#endif
  broadcast_binary(
      s, a, b, y, r,
      requantized(
          [&](const int8_t* pa, int64_t sa, const int8_t* pb, int64_t sb, int64_t n, int32_t* acc) {
            // The common steps as loops the compiler vectorizes: two tensors of
            // one shape, and one broadcast along the row (a per-channel scale).
            if (sa == 1 && sb == 1) {
              for (int64_t i = 0; i < n; ++i)
                acc[i] = (pa[i] - p.a_zero_point) * (pb[i] - p.b_zero_point);
            } else if (sa == 1 && sb == 0) {
              const int32_t vb = pb[0] - p.b_zero_point;
              for (int64_t i = 0; i < n; ++i) acc[i] = (pa[i] - p.a_zero_point) * vb;
            } else if (sa == 0 && sb == 1) {
              const int32_t va = pa[0] - p.a_zero_point;
              for (int64_t i = 0; i < n; ++i) acc[i] = va * (pb[i] - p.b_zero_point);
            } else {
              for (int64_t i = 0; i < n; ++i) {
                acc[i] = (pa[i * sa] - p.a_zero_point) * (pb[i * sb] - p.b_zero_point);
              }
            }
          },
          p.multiplier, p.y_zero_point, p.qmin, p.qmax),
      lanes);
}

void qadd_table(const qmath::AddParams& p, bool subtract, PairTable& table) {
  const AddTerms t(p);
  int32_t acc[256];
  for (size_t b = 0; b < 256; ++b) {
    for (size_t a = 0; a < 256; ++a) acc[a] = subtract ? t.a[a] - t.b[b] : t.a[a] + t.b[b];
    detail::requantize_row(acc, 256, 0, p.out, p.out_zero_point, p.qmin, p.qmax, table[b].data());
  }
}

void qmul_table(const QMulParams& p, PairTable& table) {
  int32_t acc[256];
  for (int32_t b = -128; b <= 127; ++b) {
    for (int32_t a = -128; a <= 127; ++a) {
      acc[a + 128] = (a - p.a_zero_point) * (b - p.b_zero_point);
    }
    detail::requantize_row(acc, 256, 0, p.multiplier, p.y_zero_point, p.qmin, p.qmax,
                           table[static_cast<size_t>(b + 128)].data());
  }
}

void pair_lookup(const BroadcastShapes& s, const PairTable& table, const int8_t* a, const int8_t* b,
                 int8_t* y, const TaskRunner& r) {
  broadcast_binary(
      s, a, b, y, r,
      [&](const int8_t* pa, int64_t sa, const int8_t* pb, int64_t sb, int64_t n, int8_t* out) {
        if (sb == 0 && sa == 1) {
          // B broadcast along the row (a per-channel scale or bias): one row
          // of the table, 64 codes per step with VBMI.
          detail::lookup_bytes(table[static_cast<size_t>(pb[0] + 128)], pa, n, out);
          return;
        }
        int64_t i = 0;
#if EULERNPU_KERNELS_HAVE_AVX512
        static const bool avx512 = detail::cpu_has_avx512f() && detail::avx512_loops_allowed();
        if (sa == 1 && sb == 1 && avx512) {
          i = detail::lookup_pairs_avx512(table, pa, pb, n, out);
        }
#endif
        // The pointers as locals (see lookup_bytes).
        const auto* t = table.data();
        const int8_t *xa = pa, *xb = pb;
        int8_t* dst = out;
        for (; i < n; ++i) {
          dst[i] = t[static_cast<size_t>(xb[i * sb] + 128)][static_cast<size_t>(xa[i * sa] + 128)];
        }
      },
      0);
}

}  // namespace eulernpu::kernels
