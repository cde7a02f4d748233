// QGemm and QMatMul (eulernpu/kernels/matmul.hpp).
#include "eulernpu/kernels/matmul.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "eulernpu/kernels/int8_gemm_packed.hpp"
#include "qgemm_vnni.hpp"
#include "requantize_row.hpp"

namespace eulernpu::kernels {

namespace qmath = sdk::qmath;

namespace {

// Rows of X in blocks of kWidth, each transposed to k × width, multiplied
// by gemm(o0, shape, xt, yt) for W's rows [o0, o0 + shape.rows) and
// transposed back. With fewer than four blocks the multiplications are
// also cut into chunks of kChunk output
// channels, so that one block (a 128-row BERT layer, a batch-1 fully
// connected layer) still has tasks for a second thread; a chunk costs a
// repacking of its block (int8_gemm's), so there are no more of them than
// that takes. A chunk is a multiple of the packed layout's panels
// (kPanelRows) and of the AVX-512 micro-tile's rows (6).
template <typename Gemm>
void qgemm_blocks(const QGemmParams& p, const int8_t* x, int8_t* y, const TaskRunner& r,
                  const Gemm& gemm) {
  const int64_t n = p.n, k = p.k, rows = p.rows;
  constexpr int64_t kWidth = 128;
  constexpr int64_t kChunk = 192;
  static_assert(kChunk % kPanelRows == 0, "chunks start on a panel of packed weights");
  const int64_t blocks = (rows + kWidth - 1) / kWidth;
  const int64_t chunks = blocks < 4 ? (n + kChunk - 1) / kChunk : 1;
  const int threads = threads_for(r, rows * n * k);
  auto transpose = [&](int64_t r0, int64_t cols, int8_t* xb) {
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t i = 0; i < k; ++i) xb[i * cols + j] = x[(r0 + j) * k + i];
    }
  };
  auto multiply = [&](int64_t r0, int64_t cols, int64_t o0, int64_t outs, const int8_t* xb) {
    std::vector<int8_t> yt(static_cast<size_t>(outs * cols));
    gemm(o0, QGemmShape{outs, k, cols}, xb, yt.data());
    for (int64_t j = 0; j < cols; ++j) {
      for (int64_t o = 0; o < outs; ++o)
        y[(r0 + j) * n + o0 + o] = yt[static_cast<size_t>(o * cols + j)];
    }
  };
  if (chunks == 1) {
    // A task per block, transposing its own rows.
    for_each_task(r, blocks, threads, [&](int64_t b) {
      const int64_t r0 = b * kWidth, cols = std::min(kWidth, rows - r0);
      std::vector<int8_t> xt(static_cast<size_t>(k * cols));
      transpose(r0, cols, xt.data());
      multiply(r0, cols, 0, n, xt.data());
    });
    return;
  }
  // Every block transposed once (block b at xt[r0 · k]), then a task per
  // block and chunk.
  std::vector<int8_t> xt(static_cast<size_t>(rows * k));
  for_each_task(r, blocks, threads, [&](int64_t b) {
    const int64_t r0 = b * kWidth;
    transpose(r0, std::min(kWidth, rows - r0), xt.data() + r0 * k);
  });
  for_each_task(r, blocks * chunks, threads, [&](int64_t t) {
    const int64_t b = t / chunks, o0 = t % chunks * kChunk;
    const int64_t r0 = b * kWidth, cols = std::min(kWidth, rows - r0);
    multiply(r0, cols, o0, std::min(kChunk, n - o0), xt.data() + r0 * k);
  });
}

}  // namespace

std::shared_ptr<const QGemmPrepared> qgemm_prepare(const QGemmParams& p, const int8_t* w,
                                                   const int32_t* bias,
                                                   const qmath::FixedMultiplier* m) {
#if EULERNPU_KERNELS_HAVE_AVX512_VNNI
  return detail::qgemm_vnni_prepare(p, w, bias, m);
#else
  (void)p;
  (void)w;
  (void)bias;
  (void)m;
  return nullptr;
#endif
}

void qgemm(const QGemmParams& p, const int8_t* x, const int8_t* w, const int32_t* bias,
           const qmath::FixedMultiplier* m, int8_t* y, const TaskRunner& r,
           const QGemmPrepared* prepared) {
#if EULERNPU_KERNELS_HAVE_AVX512_VNNI
  std::shared_ptr<const QGemmPrepared> own;
  if (prepared && !detail::qgemm_vnni_fits(*prepared, p)) prepared = nullptr;
  if (!prepared) {
    own = qgemm_prepare(p, w, bias, m);
    prepared = own.get();
  }
  if (prepared) {
    detail::qgemm_vnni(p, *prepared, x, y, r);
    return;
  }
#else
  (void)prepared;  // only the VNNI kernel has prepared weights
#endif
  const QGemmOutput q{p.a_zero_point, p.y_zero_point, p.qmin, p.qmax};
  qgemm_blocks(p, x, y, r, [&](int64_t o0, const QGemmShape& s, const int8_t* xt, int8_t* yt) {
    qgemm_int8(s, w + o0 * p.k, xt, bias ? bias + o0 : nullptr, m + o0, q, yt, p.isa);
  });
}

void qgemm_packed(const QGemmParams& p, const int8_t* x, const int8_t* packed,
                  const int32_t* offset, const qmath::FixedMultiplier* m, int8_t* y,
                  const TaskRunner& r) {
  const QGemmOutput q{0, p.y_zero_point, p.qmin, p.qmax};
  const int64_t chunks = packed_chunks(p.k);
  qgemm_blocks(p, x, y, r, [&](int64_t o0, const QGemmShape& s, const int8_t* xt, int8_t* yt) {
    // o0 starts a panel: the rows from it on are the packed matrix from there.
    qgemm_int8_packed(s, packed + packed_row_chunk(chunks, o0, 0), xt, offset + o0, m + o0, q, yt,
                      p.isa);
  });
}

namespace {

// The first columns of one output row of QMatMul, acc[j] = Σ_k (A[k] − za)
// · (B[k, j] − zb), 16 at a time in NEON registers across all of k (both
// differences within ±255: int16, products summed in int32 by vmlal, the
// same integers as the loop below); returns how many columns it computed.
// Zero points outside int8 (which no quantizer writes) take the loop.
int64_t matmul_row_neon([[maybe_unused]] const QMatMulParams& p,
                        [[maybe_unused]] const int8_t* arow, [[maybe_unused]] const int8_t* b,
                        [[maybe_unused]] int32_t* acc) {
  int64_t j0 = 0;
#if EULERNPU_KERNELS_HAVE_NEON
  auto int8_range = [](int32_t v) { return v >= -128 && v <= 127; };
  if (!int8_range(p.a_zero_point) || !int8_range(p.b_zero_point)) return 0;
  const int16x8_t zb = vdupq_n_s16(static_cast<int16_t>(p.b_zero_point));
  for (; j0 + 16 <= p.n; j0 += 16) {
    int32x4_t c0 = vdupq_n_s32(0), c1 = c0, c2 = c0, c3 = c0;
    for (int64_t kk = 0; kk < p.k; ++kk) {
      const auto av = static_cast<int16_t>(arow[kk] - p.a_zero_point);
      if (av == 0) continue;
      const int8x16_t bv = vld1q_s8(b + kk * p.n + j0);
      const int16x8_t lo = vsubq_s16(vmovl_s8(vget_low_s8(bv)), zb);
      const int16x8_t hi = vsubq_s16(vmovl_s8(vget_high_s8(bv)), zb);
      c0 = vmlal_n_s16(c0, vget_low_s16(lo), av);
      c1 = vmlal_n_s16(c1, vget_high_s16(lo), av);
      c2 = vmlal_n_s16(c2, vget_low_s16(hi), av);
      c3 = vmlal_n_s16(c3, vget_high_s16(hi), av);
    }
    vst1q_s32(acc + j0, c0);
    vst1q_s32(acc + j0 + 4, c1);
    vst1q_s32(acc + j0 + 8, c2);
    vst1q_s32(acc + j0 + 12, c3);
  }
#endif
  return j0;
}

}  // namespace

// Per output row: acc[n] = Σ_k (A − za) · (B − zb), vectorized along n.
void qmatmul(const QMatMulParams& p, const int8_t* a, const int8_t* b, int8_t* y,
             const TaskRunner& r) {
  const int64_t batches = product(p.batch);
  const Dims sa = broadcast_strides(p.a_batch, p.batch.size());
  const Dims sb = broadcast_strides(p.b_batch, p.batch.size());
  std::vector<int64_t> a_base(static_cast<size_t>(batches)), b_base(static_cast<size_t>(batches));
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rest = bi, oa = 0, ob = 0;
    for (size_t d = p.batch.size(); d-- > 0;) {
      const int64_t idx = rest % p.batch[d];
      rest /= p.batch[d];
      oa += idx * sa[d];
      ob += idx * sb[d];
    }
    a_base[static_cast<size_t>(bi)] = oa * p.m * p.k;
    b_base[static_cast<size_t>(bi)] = ob * p.k * p.n;
  }
  const int64_t rows = batches * p.m;
  for_each_range(r, rows, threads_for(r, rows * p.k * p.n), [&](int64_t begin, int64_t end) {
    std::vector<int32_t> acc(static_cast<size_t>(p.n));
    for (int64_t row = begin; row < end; ++row) {
      const auto bi = static_cast<size_t>(row / p.m);
      const int8_t* arow = a + a_base[bi] + row % p.m * p.k;
      const int8_t* bmat = b + b_base[bi];
      const int64_t j0 = matmul_row_neon(p, arow, bmat, acc.data());
      std::fill(acc.begin() + static_cast<std::ptrdiff_t>(j0), acc.end(), 0);
      for (int64_t kk = 0; kk < p.k; ++kk) {
        const int32_t av = arow[kk] - p.a_zero_point;
        if (av == 0) continue;
        const int8_t* brow = bmat + kk * p.n;
        for (int64_t j = j0; j < p.n; ++j) {
          acc[static_cast<size_t>(j)] += av * (brow[j] - p.b_zero_point);
        }
      }
      detail::requantize_row(acc.data(), p.n, 0, p.multiplier, p.y_zero_point, p.qmin, p.qmax,
                             y + row * p.n);
    }
  });
}

}  // namespace eulernpu::kernels
