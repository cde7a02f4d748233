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
// then its odd ones (the order of requantize_lanes's two halves).
int64_t lane_slot(int64_t o) {
  const int64_t l = o % kLanes;
  return o - l + l % 2 * 8 + l / 2;
}

// requantize16 with a multiplier, rounding term and shift per lane (the
// channels of block b).
EULERNPU_AVX512_VNNI inline __m512i requantize_half(__m512i sums, const int64_t* multiplier,
                                                    const int64_t* round, const int64_t* shift,
                                                    const QGemmOutput& out) {
  __m512i v = _mm512_mul_epi32(sums, _mm512_loadu_si512(multiplier));
  v = _mm512_add_epi64(v, _mm512_loadu_si512(round));
  v = _mm512_add_epi64(_mm512_srav_epi64(v, _mm512_loadu_si512(shift)),
                       _mm512_set1_epi64(out.y_zero_point));
  return _mm512_min_epi64(_mm512_max_epi64(v, _mm512_set1_epi64(out.qmin)),
                          _mm512_set1_epi64(out.qmax));
}

EULERNPU_AVX512_VNNI inline __m128i requantize_lanes(__m512i acc, const QGemmPrepared& pr,
                                                     int64_t b, const QGemmOutput& out) {
  const int64_t at = b * kLanes;
  acc = _mm512_add_epi32(acc, _mm512_loadu_si512(pr.offset.data() + at));
  const int64_t *mult = pr.multiplier.data() + at, *round = pr.round.data() + at,
                *shift = pr.shift.data() + at;
  const __m512i even = requantize_half(acc, mult, round, shift, out);
  const __m512i odd =
      requantize_half(_mm512_srli_epi64(acc, 32), mult + 8, round + 8, shift + 8, out);
  const __m512i both = _mm512_mask_blend_epi32(__mmask16{0xAAAA}, even, _mm512_slli_epi64(odd, 32));
  return _mm512_cvtepi32_epi8(both);
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
      _mm_mask_storeu_epi8(y + r * ldy + o, mask, requantize_lanes(acc[r], pr, b, out));
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
    const int64_t full = (bias ? int64_t{bias[o]} : 0) - (128 + int64_t{p.a_zero_point}) * sum;
    // Modulo 2^32, as the VNNI GEMM's offsets (int8_gemm_avx512_vnni.cpp).
    pr->offset[static_cast<size_t>(o)] = static_cast<int32_t>(static_cast<uint32_t>(full));
    const auto slot = static_cast<size_t>(lane_slot(o));
    pr->multiplier[slot] = m[o].multiplier;
    pr->round[slot] = int64_t{1} << (m[o].shift - 1);
    pr->shift[slot] = m[o].shift;
    int32_t* wb = pr->w.data() + o / kLanes * pr->quads * kLanes + o % kLanes;
    for (int64_t q = 0; q < pr->quads; ++q) {
      uint32_t word = 0;
      for (int64_t c = 0; c < 4 && 4 * q + c < p.k; ++c) {
        word |= uint32_t{static_cast<uint8_t>(wo[4 * q + c])} << (8 * c);
      }
      wb[q * kLanes] = static_cast<int32_t>(word);
    }
  }
  return pr;
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
