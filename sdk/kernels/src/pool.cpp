// QAveragePool, QGlobalAveragePool and MaxPool (eulernpu/kernels/pool.hpp).
#include "eulernpu/kernels/pool.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "eulernpu/sdk/simd_clones.hpp"

namespace eulernpu::kernels {
namespace {

namespace qmath = sdk::qmath;

// Taps of one axis for output index o: first..end (in tap steps) inside X,
// and how many of them count toward n.
struct AxisTaps {
  int64_t first = 0, end = 0, counted = 0;
};

AxisTaps axis_taps(const PoolParams& sh, size_t d, int64_t o) {
  AxisTaps t;
  const int64_t start = o * sh.stride[d] - sh.pad_begin[d];
  t.first = sh.kernel[d];
  for (int64_t k = 0; k < sh.kernel[d]; ++k) {
    const int64_t pos = start + k * sh.dilation[d];
    const bool inside = pos >= 0 && pos < sh.in[d];
    // Padding taps count with count_include_pad; the ceil_mode overhang
    // (past the end padding) never does.
    const bool padded = pos >= -sh.pad_begin[d] && pos < sh.in[d] + sh.pad_end[d];
    if (inside) {
      t.first = std::min(t.first, k);
      t.end = k + 1;
    }
    if (sh.include_pad ? padded : inside) ++t.counted;
  }
  if (t.first >= t.end) t.first = t.end = 0;
  return t;
}

// The taps of every output position, per axis.
std::array<std::vector<AxisTaps>, 3> window_taps(const PoolParams& sh) {
  std::array<std::vector<AxisTaps>, 3> taps;
  for (size_t d = 0; d < 3; ++d) {
    for (int64_t o = 0; o < sh.out[d]; ++o) taps[d].push_back(axis_taps(sh, d, o));
  }
  return taps;
}

// 16 lanes of T, at most 64 bytes (GCC takes vector_size only on a
// concrete type): 16 outputs per vector even for bytes, whose rows in small
// models (a 32-wide feature map) are too short for 64.
template <typename T>
struct LanesOf;
template <>
struct LanesOf<float> {
  using type = float __attribute__((vector_size(64)));
};
template <>
struct LanesOf<double> {
  using type = double __attribute__((vector_size(64)));
};
template <>
struct LanesOf<int8_t> {
  using type = int8_t __attribute__((vector_size(16)));
};
template <>
struct LanesOf<uint8_t> {
  using type = uint8_t __attribute__((vector_size(16)));
};

// MaxPool's rows without argmax: the columns [lo, hi) of an output row
// where every tap along W lies in the row, a vector of outputs at a time.
// Each lane folds its taps in the generic loop's order (the first tap, then
// a tap replaces the running maximum only when greater), so NaN and ties
// resolve the same way.
template <typename T>
struct MaxRows {
  using Lanes = typename LanesOf<T>::type;
  static constexpr int64_t kLanes = sizeof(Lanes) / sizeof(T);

  // src[0], src[2], ..., src[2 · (kLanes - 1)] (a stride of 2, the common
  // downsampling pool): two loads, the second ending on the last element
  // read so that nothing past it is touched, and one shuffle.
  // (An out parameter: a 64-byte vector returned by value changes the ABI
  // by ISA, which GCC warns about.)
  [[gnu::always_inline]] static inline void even_lanes(const T* src, Lanes& x) {
    Lanes a, b;
    std::memcpy(&a, src, sizeof a);
    std::memcpy(&b, src + kLanes - 1, sizeof b);  // src[kLanes - 1 .. 2 · kLanes - 2]
    if constexpr (kLanes == 16) {
      x = __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31);
    } else {
      static_assert(kLanes == 8);
      x = __builtin_shufflevector(a, b, 0, 2, 4, 6, 9, 11, 13, 15);
    }
  }

  // Taps as row starts (the first valid tap first) and W offsets.
  static void row(const std::vector<const T*>& rows, const PoolParams& sh, int64_t lo, int64_t hi,
                  T* out);

  [[gnu::always_inline]] static inline void vectors(const T* const* rows, size_t count,
                                                    int64_t kernel, int64_t stride, int64_t pad,
                                                    int64_t dilation, int64_t lo, int64_t hi,
                                                    T* out) {
    // hi - lo >= kLanes; the last vector overlaps its predecessor.
    for (int64_t o = lo;; o += kLanes) {
      o = std::min(o, hi - kLanes);
      Lanes acc{};
      bool first = true;
      for (size_t i = 0; i < count; ++i) {
        for (int64_t k = 0; k < kernel; ++k) {
          const T* src = rows[i] + o * stride - pad + k * dilation;
          Lanes x;
          if (stride == 1) {
            std::memcpy(&x, src, sizeof x);
          } else if (stride == 2) {
            even_lanes(src, x);
          } else {
            for (int64_t j = 0; j < kLanes; ++j) x[j] = src[j * stride];
          }
          acc = first ? x : (x > acc ? x : acc);
          first = false;
        }
      }
      std::memcpy(out + o, &acc, sizeof acc);
      if (o + kLanes >= hi) break;
    }
  }

  // The same outputs one at a time, for runs shorter than a vector (a
  // 2×2/2 pool over a 28-wide map has 14): the taps' rows found once per
  // output row, as in row(), not per output. A tap replaces the running
  // maximum through a select, not a branch: on real data that branch went
  // the other way every second tap, and the mispredictions cost 20 cycles
  // an output (`detypify_lenet_op17`'s pools took 30 % of its int8 run).
  static void short_row(const std::vector<const T*>& rows, const PoolParams& sh, int64_t lo,
                        int64_t hi, T* out) {
    const int64_t kernel = sh.kernel[2], stride = sh.stride[2], dilation = sh.dilation[2];
    const size_t count = rows.size();
    auto fold = [](T acc, T v) { return v > acc ? v : acc; };
    for (int64_t o = lo; o < hi; ++o) {
      const int64_t at = o * stride - sh.pad_begin[2];
      T acc = rows[0][at];
      for (int64_t k = 1; k < kernel; ++k) acc = fold(acc, rows[0][at + k * dilation]);
      for (size_t i = 1; i < count; ++i) {
        for (int64_t k = 0; k < kernel; ++k) acc = fold(acc, rows[i][at + k * dilation]);
      }
      out[o] = acc;
    }
  }
};

// MaxRows<float>::vectors compiled for each ISA (simd_clones.hpp): for the
// baseline alone its 16-float vectors are four SSE registers that GCC
// moves through the stack a float at a time (8 ns an output on a 2×2/2
// pool). The comparisons are the same in every clone, so are the bytes.
EULERNPU_SIMD_CLONES
void max_vectors_float(const float* const* rows, size_t count, int64_t kernel, int64_t stride,
                       int64_t pad, int64_t dilation, int64_t lo, int64_t hi, float* out) {
  MaxRows<float>::vectors(rows, count, kernel, stride, pad, dilation, lo, hi, out);
}

// The same for int8 (QMaxPool's codes): the baseline has no signed byte
// maximum (pmaxsb is SSE4.1) and emulated it at a third of the float
// loop's speed on BlazeFace's 2×2/2 pools.
EULERNPU_SIMD_CLONES
void max_vectors_int8(const int8_t* const* rows, size_t count, int64_t kernel, int64_t stride,
                      int64_t pad, int64_t dilation, int64_t lo, int64_t hi, int8_t* out) {
  MaxRows<int8_t>::vectors(rows, count, kernel, stride, pad, dilation, lo, hi, out);
}

template <typename T>
void MaxRows<T>::row(const std::vector<const T*>& rows, const PoolParams& sh, int64_t lo,
                     int64_t hi, T* out) {
  if constexpr (std::is_same_v<T, float>) {
    max_vectors_float(rows.data(), rows.size(), sh.kernel[2], sh.stride[2], sh.pad_begin[2],
                      sh.dilation[2], lo, hi, out);
  } else if constexpr (std::is_same_v<T, int8_t>) {
    max_vectors_int8(rows.data(), rows.size(), sh.kernel[2], sh.stride[2], sh.pad_begin[2],
                     sh.dilation[2], lo, hi, out);
  } else {
    vectors(rows.data(), rows.size(), sh.kernel[2], sh.stride[2], sh.pad_begin[2], sh.dilation[2],
            lo, hi, out);
  }
}

}  // namespace

void qaverage_pool(const PoolParams& sh, const int8_t* x, const qmath::FixedMultiplier* m,
                   int8_t* y, const TaskRunner& r) {
  const std::array<std::vector<AxisTaps>, 3> taps = window_taps(sh);
  const int64_t in_size = sh.in[0] * sh.in[1] * sh.in[2];
  const int64_t out_size = sh.out[0] * sh.out[1] * sh.out[2];
  const int32_t zx = sh.x_zero_point, zy = sh.y_zero_point;
  for_each_task(r, sh.planes, threads_for(r, sh.planes * out_size * sh.taps), [&](int64_t p) {
    const int8_t* plane = x + p * in_size;
    int8_t* dst = y + p * out_size;
    for (int64_t o0 = 0; o0 < sh.out[0]; ++o0) {
      const AxisTaps& t0 = taps[0][static_cast<size_t>(o0)];
      for (int64_t o1 = 0; o1 < sh.out[1]; ++o1) {
        const AxisTaps& t1 = taps[1][static_cast<size_t>(o1)];
        for (int64_t o2 = 0; o2 < sh.out[2]; ++o2) {
          const AxisTaps& t2 = taps[2][static_cast<size_t>(o2)];
          int32_t acc = 0;
          for (int64_t k0 = t0.first; k0 < t0.end; ++k0) {
            const int64_t i0 = o0 * sh.stride[0] - sh.pad_begin[0] + k0 * sh.dilation[0];
            for (int64_t k1 = t1.first; k1 < t1.end; ++k1) {
              const int64_t i1 = o1 * sh.stride[1] - sh.pad_begin[1] + k1 * sh.dilation[1];
              const int8_t* row = plane + (i0 * sh.in[1] + i1) * sh.in[2];
              for (int64_t k2 = t2.first; k2 < t2.end; ++k2) {
                acc += row[o2 * sh.stride[2] - sh.pad_begin[2] + k2 * sh.dilation[2]] - zx;
              }
            }
          }
          const auto n = static_cast<size_t>(t0.counted * t1.counted * t2.counted);
          dst[(o0 * sh.out[1] + o1) * sh.out[2] + o2] =
              static_cast<int8_t>(qmath::requantize(acc, m[n], zy, -128, 127));
        }
      }
    }
  });
}

template <typename T>
void max_pool(const PoolParams& sh, const T* x, T* y, int64_t* argmax, const TaskRunner& r) {
  const std::array<std::vector<AxisTaps>, 3> taps = window_taps(sh);
  const int64_t in_size = sh.in[0] * sh.in[1] * sh.in[2];
  const int64_t out_size = sh.out[0] * sh.out[1] * sh.out[2];
  const int64_t window = sh.kernel[0] * sh.kernel[1] * sh.kernel[2];
  // Without argmax, the output columns whose W taps all lie in the row
  // (one run of them) go a vector at a time, or (shorter than a vector)
  // one at a time without the per-output index arithmetic.
  int64_t lo = 0, hi = 0;
  if (!argmax && sh.kernel[2] > 0) {
    const auto& t2 = taps[2];
    while (lo < sh.out[2] && (t2[static_cast<size_t>(lo)].first != 0 ||
                              t2[static_cast<size_t>(lo)].end != sh.kernel[2])) {
      ++lo;
    }
    hi = lo;
    while (hi < sh.out[2] && t2[static_cast<size_t>(hi)].first == 0 &&
           t2[static_cast<size_t>(hi)].end == sh.kernel[2]) {
      ++hi;
    }
  }
  constexpr int64_t kLanes = MaxRows<T>::kLanes;
  const bool vectors = hi - lo >= kLanes;
  // A run shorter than a vector still goes as one, where the vector's
  // reads from a row stay inside X: from a row's start, its last tap of
  // output lo + 15 (`narrow_reach`), at most 64 outputs from the row's start.
  const T* x_end = x + sh.planes * in_size;
  const int64_t narrow_reach =
      (lo + kLanes - 1) * sh.stride[2] - sh.pad_begin[2] + (sh.kernel[2] - 1) * sh.dilation[2];
  const bool narrow = !vectors && hi > lo && lo + kLanes <= 64;
  for_each_task(r, sh.planes, threads_for(r, sh.planes * out_size * window), [&](int64_t p) {
    const T* plane = x + p * in_size;
    std::array<T, 64> lanes;
    // Kept per thread: a fresh vector per plane was a malloc and a free
    // for every 5×5 plane of a LeNet's pool.
    static thread_local std::vector<const T*> rows;
    for (int64_t o0 = 0; o0 < sh.out[0]; ++o0) {
      const AxisTaps& t0 = taps[0][static_cast<size_t>(o0)];
      for (int64_t o1 = 0; o1 < sh.out[1]; ++o1) {
        const AxisTaps& t1 = taps[1][static_cast<size_t>(o1)];
        if (hi > lo) {
          rows.clear();
          for (int64_t k0 = t0.first; k0 < t0.end; ++k0) {
            const int64_t i0 = o0 * sh.stride[0] - sh.pad_begin[0] + k0 * sh.dilation[0];
            for (int64_t k1 = t1.first; k1 < t1.end; ++k1) {
              const int64_t i1 = o1 * sh.stride[1] - sh.pad_begin[1] + k1 * sh.dilation[1];
              rows.push_back(plane + (i0 * sh.in[1] + i1) * sh.in[2]);
            }
          }
          if (!rows.empty()) {
            T* out = y + p * out_size + (o0 * sh.out[1] + o1) * sh.out[2];
            if (vectors) {
              MaxRows<T>::row(rows, sh, lo, hi, out);
            } else if (narrow && rows.back() + narrow_reach < x_end) {
              // One vector of outputs into `lanes`, whose lanes past hi read
              // the next row (inside X, checked) and are dropped.
              MaxRows<T>::row(rows, sh, lo, lo + kLanes, lanes.data());
              std::copy(lanes.begin() + lo, lanes.begin() + hi, out + lo);
            } else {
              MaxRows<T>::short_row(rows, sh, lo, hi, out);
            }
          }
        }
        for (int64_t o2 = 0; o2 < sh.out[2]; ++o2) {
          if (o2 == lo && hi > lo && !rows.empty()) o2 = hi;
          if (o2 >= sh.out[2]) break;
          const AxisTaps& t2 = taps[2][static_cast<size_t>(o2)];
          // The first maximum wins (a NaN first tap included, as ONNX
          // Runtime's comparison does).
          T best = std::numeric_limits<T>::lowest();
          int64_t at = -1;
          for (int64_t k0 = t0.first; k0 < t0.end; ++k0) {
            const int64_t i0 = o0 * sh.stride[0] - sh.pad_begin[0] + k0 * sh.dilation[0];
            for (int64_t k1 = t1.first; k1 < t1.end; ++k1) {
              const int64_t i1 = o1 * sh.stride[1] - sh.pad_begin[1] + k1 * sh.dilation[1];
              const int64_t row = (i0 * sh.in[1] + i1) * sh.in[2];
              for (int64_t k2 = t2.first; k2 < t2.end; ++k2) {
                const int64_t off = row + o2 * sh.stride[2] - sh.pad_begin[2] + k2 * sh.dilation[2];
                if (at < 0 || plane[off] > best) {
                  best = plane[off];
                  at = off;
                }
              }
            }
          }
          const int64_t o = p * out_size + (o0 * sh.out[1] + o1) * sh.out[2] + o2;
          y[o] = best;
          if (argmax) argmax[o] = at;
        }
      }
    }
  });
}

template void max_pool(const PoolParams&, const int8_t*, int8_t*, int64_t*, const TaskRunner&);
template void max_pool(const PoolParams&, const uint8_t*, uint8_t*, int64_t*, const TaskRunner&);
template void max_pool(const PoolParams&, const float*, float*, int64_t*, const TaskRunner&);
template void max_pool(const PoolParams&, const double*, double*, int64_t*, const TaskRunner&);

void qglobal_average_pool(const GlobalPoolParams& p, const int8_t* x, int8_t* y,
                          const TaskRunner& r) {
  for_each_range(r, p.planes, threads_for(r, p.planes * p.size), [&](int64_t begin, int64_t end) {
    for (int64_t q = begin; q < end; ++q) {
      int32_t acc = 0;
      for (int64_t i = 0; i < p.size; ++i) acc += x[q * p.size + i] - p.x_zero_point;
      y[q] = static_cast<int8_t>(qmath::requantize(acc, p.multiplier, p.y_zero_point, -128, 127));
    }
  });
}

}  // namespace eulernpu::kernels
