// QGemm with AVX-512 VNNI (qgemm_vnni.hpp; x86-64 builds only, elsewhere
// the file is empty). As in int8_gemm_avx512_vnni.cpp, only the functions
// marked EULERNPU_AVX512_VNNI use the instructions, and the file is
// compiled without -m flags.
//
// The arithmetic is the VNNI GEMM's with the operands' roles swapped: A
// enters as a + 128 (vpdpbusd's unsigned operand, four terms broadcast to
// every lane), W as the signed one (16 channels' four weights), and each
// channel's offset carries bias − (128 + a_zero_point) · Σ W. The sums are
// exact integers within the bound the quantizer proved, so the bytes are
// qgemm_int8's.
#include "qgemm_vnni.hpp"

#include <algorithm>
#include <cstring>

#include "scratch.hpp"

#if EULERNPU_KERNELS_HAVE_AVX512_VNNI
#include "x86_intrinsics.hpp"
// after x86_intrinsics.hpp
#include "vnni_store.hpp"

namespace eulernpu::kernels::detail {
namespace {

constexpr int64_t kLanes = 16;
constexpr int kRowsPerPass = 8;        // rows of A sharing each load of W
constexpr int64_t kBlocksPerTask = 8;  // 128 output channels

// Where channel o's int64 lane values are: per block, its even channels,
// then its odd ones (requantize_lanes's two halves).
int64_t lane_slot(int64_t o) {
  const int64_t l = o % kLanes;
  return o - l + l % 2 * 8 + l / 2;
}

// requantize_lanes with the multipliers, rounding terms and shifts of the
// channels of block b.
EULERNPU_AVX512_VNNI inline __m128i requantize_block(__m512i acc, const QGemmPrepared& pr,
                                                     int64_t b, const QGemmOutput& out) {
  const int64_t at = b * kLanes;
  acc = _mm512_add_epi32(acc, _mm512_loadu_si512(pr.offset.data() + at));
  const int64_t *m = pr.multiplier.data() + at, *r = pr.round.data() + at,
                *sh = pr.shift.data() + at;
  return requantize_lanes(acc, {_mm512_loadu_si512(m), _mm512_loadu_si512(m + 8)},
                          {_mm512_loadu_si512(r), _mm512_loadu_si512(r + 8)},
                          {_mm512_loadu_si512(sh), _mm512_loadu_si512(sh + 8)}, out);
}

// Rows [0, R) of A (as a + 128, rows `stride` bytes apart) times the blocks
// [b0, b1) of W, into Y's rows (ldy apart).
template <int R>
EULERNPU_AVX512_VNNI void pass(const QGemmPrepared& pr, const uint8_t* xa, int64_t stride,
                               int64_t b0, int64_t b1, const QGemmOutput& out, int8_t* y,
                               int64_t ldy) {
  for (int64_t b = b0; b < b1; ++b) {
    __m512i acc[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_si512();
    const int32_t* wb = pr.w.data() + b * pr.quads * kLanes;
    for (int64_t q = 0; q < pr.quads; ++q) {
      const __m512i wv = _mm512_loadu_si512(wb + q * kLanes);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        int32_t word;
        std::memcpy(&word, xa + r * stride + 4 * q, sizeof word);
        acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_set1_epi32(word), wv);
      }
    }
    const int64_t o = b * kLanes, n = std::min(kLanes, pr.n - o);
    const auto mask = static_cast<__mmask16>(n >= kLanes ? 0xFFFFu : (1u << n) - 1);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      _mm_mask_storeu_epi8(y + r * ldy + o, mask, requantize_block(acc[r], pr, b, out));
    }
  }
}

}  // namespace

std::shared_ptr<const QGemmPrepared> qgemm_vnni_prepare(const QGemmParams& p, const int8_t* w,
                                                        const int32_t* bias,
                                                        const sdk::qmath::FixedMultiplier* m) {
  if (p.n <= 0 || p.k <= 0 || int8_gemm_resolve(p.isa) != Int8GemmIsa::kAvx512Vnni) {
    return nullptr;
  }
  auto pr = std::make_shared<QGemmPrepared>();
  pr->n = p.n;
  pr->k = p.k;
  pr->a_zero_point = p.a_zero_point;
  pr->quads = (p.k + 3) / 4;
  pr->blocks = (p.n + kLanes - 1) / kLanes;
  const auto lanes = static_cast<size_t>(pr->blocks * kLanes);
  pr->w.assign(lanes * static_cast<size_t>(pr->quads), 0);
  pr->offset.assign(lanes, 0);
  // Lanes past n: a valid requantization whose bytes are never stored.
  pr->multiplier.assign(lanes, 0);
  pr->round.assign(lanes, 1);
  pr->shift.assign(lanes, 1);
  for (int64_t o = 0; o < p.n; ++o) {
    const int8_t* wo = w + o * p.k;
    int64_t sum = 0;
    for (int64_t i = 0; i < p.k; ++i) sum += wo[i];
    pr->offset[static_cast<size_t>(o)] = vnni_offset(bias ? bias[o] : 0, p.a_zero_point, sum);
    const auto slot = static_cast<size_t>(lane_slot(o));
    pr->multiplier[slot] = m[o].multiplier;
    pr->round[slot] = int64_t{1} << (m[o].shift - 1);
    pr->shift[slot] = m[o].shift;
    int32_t* wb = pr->w.data() + o / kLanes * pr->quads * kLanes + o % kLanes;
    for (int64_t q = 0; q < pr->quads; ++q) {
      wb[q * kLanes] = weight_word(wo + 4 * q, 1, p.k - 4 * q);
    }
  }
  return pr;
}

bool qgemm_vnni_fits(const QGemmPrepared& pr, const QGemmParams& p) {
  return pr.n == p.n && pr.k == p.k && pr.a_zero_point == p.a_zero_point &&
         int8_gemm_resolve(p.isa) == Int8GemmIsa::kAvx512Vnni;
}

void qgemm_vnni(const QGemmParams& p, const QGemmPrepared& pr, const int8_t* a, int8_t* y,
                const TaskRunner& r) {
  if (p.rows <= 0) return;
  // A's rows as a + 128, each padded to whole quads with 128 (a = 0; W is
  // 0 there).
  const int64_t stride = pr.quads * 4;
  thread_local std::vector<uint8_t> rows_buffer;
  uint8_t* xa = grow(rows_buffer, static_cast<size_t>(p.rows * stride));
  for (int64_t row = 0; row < p.rows; ++row) {
    const int8_t* src = a + row * p.k;
    uint8_t* dst = xa + row * stride;
    for (int64_t i = 0; i < p.k; ++i) dst[i] = static_cast<uint8_t>(src[i] + 128);
    std::memset(dst + p.k, 128, static_cast<size_t>(stride - p.k));
  }
  const QGemmOutput out{p.a_zero_point, p.y_zero_point, p.qmin, p.qmax};
  const int64_t groups = (p.rows + kRowsPerPass - 1) / kRowsPerPass;
  const int64_t chunks = (pr.blocks + kBlocksPerTask - 1) / kBlocksPerTask;
  for_each_task(r, groups * chunks, threads_for(r, p.rows * p.n * p.k), [&](int64_t t) {
    const int64_t g = t / chunks, c = t % chunks;
    const int64_t r0 = g * kRowsPerPass;
    const int64_t b0 = c * kBlocksPerTask, b1 = std::min(pr.blocks, b0 + kBlocksPerTask);
    const uint8_t* xr = xa + r0 * stride;
    int8_t* yr = y + r0 * p.n;
    static_assert(kRowsPerPass == 8, "the cases below cover 1 to kRowsPerPass rows");
    switch (std::min<int64_t>(kRowsPerPass, p.rows - r0)) {
      case 8:
        pass<8>(pr, xr, stride, b0, b1, out, yr, p.n);
        break;
      case 7:
        pass<7>(pr, xr, stride, b0, b1, out, yr, p.n);
        break;
      case 6:
        pass<6>(pr, xr, stride, b0, b1, out, yr, p.n);
        break;
      case 5:
        pass<5>(pr, xr, stride, b0, b1, out, yr, p.n);
        break;
      case 4:
        pass<4>(pr, xr, stride, b0, b1, out, yr, p.n);
        break;
      case 3:
        pass<3>(pr, xr, stride, b0, b1, out, yr, p.n);
        break;
      case 2:
        pass<2>(pr, xr, stride, b0, b1, out, yr, p.n);
        break;
      default:
        pass<1>(pr, xr, stride, b0, b1, out, yr, p.n);
        break;
    }
  });
}

}  // namespace eulernpu::kernels::detail

#endif  // EULERNPU_KERNELS_HAVE_AVX512_VNNI
