// Helpers shared by cpu_ref's kernels: broadcasting strides, typed
// dispatch, and a deterministic parallel loop.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "eulernpu/kernels/runner.hpp"
#include "eulernpu/kernels/shape.hpp"
#include "eulernpu/kit/op_table.hpp"
#include "float16.hpp"

namespace eulernpu::kit {

// Strides of `shape` right-aligned to `rank` dims, 0 where it broadcasts.
using kernels::broadcast_strides;

// The reference kernels' view of the context's threads: cpu_ref's pool.
kernels::TaskRunner task_runner(const KernelContext& ctx);

// Row-major strides of `shape`.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape);

// Runs task(ctx, i) for every i in [0, tasks) on at most `threads` threads,
// the caller among them, drawn from a pool kept for the process. Threads
// take the next unstarted index whenever they are free, so which thread
// runs a task varies from call to call: a task must write only what its
// index names. Blocks until every task has run; the first exception a task
// throws is rethrown here (tasks not yet started are then skipped).
// Thread-safe, and callable from inside a task.
void run_tasks(int64_t tasks, int threads, void (*task)(void* ctx, int64_t i), void* ctx);

// run_tasks over a callable: fn(i) for every i in [0, tasks).
template <typename Fn>
void parallel_tasks(int64_t tasks, int threads, Fn&& fn) {
  if (tasks <= 0) return;
  if (threads <= 1 || tasks == 1) {
    for (int64_t i = 0; i < tasks; ++i) fn(i);
    return;
  }
  run_tasks(
      tasks, threads,
      [](void* f, int64_t i) { (*static_cast<std::remove_reference_t<Fn>*>(f))(i); },
      const_cast<void*>(static_cast<const void*>(&fn)));
}

// Runs fn(begin, end) over [0, n) split into at most `threads` contiguous
// chunks. Each element's result must depend only on its index, so the output
// is the same for every thread count.
template <typename Fn>
void parallel_for(int64_t n, int threads, Fn fn) {
  const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(threads, n));
  if (workers <= 1) {
    fn(int64_t{0}, n);
    return;
  }
  const int64_t chunk = (n + workers - 1) / workers;
  parallel_tasks((n + chunk - 1) / chunk, static_cast<int>(workers),
                 [&](int64_t w) { fn(w * chunk, std::min(n, (w + 1) * chunk)); });
}

// Row-major C (m x n) = alpha * op(A) * op(B) + beta * C with A, B, C
// contiguous (op(A) m x k, op(B) k x n), through single-threaded OpenBLAS on
// blocks of C fixed by the shape alone (GemmPlan), so the bytes are the same
// for every `threads`. Defined in kernels_nn.cpp, like the helpers below.
void sgemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, const float* b, float beta, float* c, int threads);

// One block of a row-major C: rows [row, row + rows), columns [col, col + cols).
struct GemmBlock {
  int64_t row, rows, col, cols;
};

// How a GEMM's C (m x n, inner dimension k) splits into blocks: by the shape
// alone, never by the thread count, and K never splits, so each element of
// C is summed by one OpenBLAS call whichever thread runs its block. Large
// GEMMs get a few large blocks (each OpenBLAS call repacks the operand it
// shares with the other blocks); columns split unless C is narrow.
struct GemmPlan {
  int64_t m = 0, n = 0;
  bool by_rows = false;
  int64_t width = 0;  // rows or columns per block; the last may be narrower
  int64_t blocks = 0;

  // `max_cols` > 0 caps the width of column blocks (a caller staging each
  // block's B in a buffer keeps it cache-sized); 0 means no cap.
  static GemmPlan make(int64_t m, int64_t n, int64_t k, int64_t max_cols = 0);
  GemmBlock block(int64_t i) const;
};

// Row-major C = alpha * op(A) * op(B) + beta * C in one OpenBLAS call on the
// calling thread, with explicit leading dimensions. Needs a SerialBlas alive
// on the kernel's thread.
void sgemm_f32_serial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                      const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                      float* c, int64_t ldc);

// Makes OpenBLAS single-threaded for its lifetime (its multi-threaded split,
// and so its rounding, follows its thread count), then restores the
// executor's setting. Only a kernel's calling thread may create one.
//
// Both are defined twice, with the same contract: blas_openblas.cpp on the
// host, blas_portable.cpp (standard C++, NEON where the target has it) in
// a bundle that `eulernpu export` writes for a board without OpenBLAS.
class SerialBlas {
 public:
  SerialBlas();
  ~SerialBlas();
  SerialBlas(const SerialBlas&) = delete;
  SerialBlas& operator=(const SerialBlas&) = delete;

 private:
  // The portable BLAS has no thread count to save (blas_portable.cpp).
  [[maybe_unused]] int saved_ = 0;
};

// Row-major float64 C (m x n) = A (m x k) * B (k x n), all contiguous, on
// the calling thread in a fixed order. Needs a SerialBlas alive.
void dgemm_f64_serial(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c);

// Runs `f32_kernel` on a node whose float16 inputs and outputs it cannot
// read: every float16 input is widened (exactly) to float32, the kernel
// computes in float32, and each float16 output element is rounded once,
// to nearest even. Inputs of other dtypes pass through unchanged.
void run_f16_as_f32(const KernelContext& ctx, KernelFn f32_kernel);

// Calls f.template operator()<T>() with T the C++ type of `dtype`.
template <typename F>
void dispatch_dtype(int32_t dtype, F&& f) {
  switch (dtype) {
    case ENP_DTYPE_FLOAT32:
      f.template operator()<float>();
      break;
    case ENP_DTYPE_FLOAT64:
      f.template operator()<double>();
      break;
    case ENP_DTYPE_INT8:
      f.template operator()<int8_t>();
      break;
    case ENP_DTYPE_UINT8:
      f.template operator()<uint8_t>();
      break;
    case ENP_DTYPE_INT16:
      f.template operator()<int16_t>();
      break;
    case ENP_DTYPE_UINT16:
      f.template operator()<uint16_t>();
      break;
    case ENP_DTYPE_INT32:
      f.template operator()<int32_t>();
      break;
    case ENP_DTYPE_UINT32:
      f.template operator()<uint32_t>();
      break;
    case ENP_DTYPE_INT64:
      f.template operator()<int64_t>();
      break;
    case ENP_DTYPE_UINT64:
      f.template operator()<uint64_t>();
      break;
    case ENP_DTYPE_BOOL:
      f.template operator()<bool>();
      break;
    default:
      break;
  }
}

// The dtype whose elements a kernel reads as C++ type T (Half and BFloat16
// stand for the 16-bit floats); ENP_DTYPE_UNDEFINED for any other T.
template <typename T>
inline constexpr int32_t kDtypeOf = ENP_DTYPE_UNDEFINED;
template <>
inline constexpr int32_t kDtypeOf<float> = ENP_DTYPE_FLOAT32;
template <>
inline constexpr int32_t kDtypeOf<double> = ENP_DTYPE_FLOAT64;
template <>
inline constexpr int32_t kDtypeOf<Half> = ENP_DTYPE_FLOAT16;
template <>
inline constexpr int32_t kDtypeOf<BFloat16> = ENP_DTYPE_BFLOAT16;
template <>
inline constexpr int32_t kDtypeOf<int8_t> = ENP_DTYPE_INT8;
template <>
inline constexpr int32_t kDtypeOf<uint8_t> = ENP_DTYPE_UINT8;
template <>
inline constexpr int32_t kDtypeOf<int16_t> = ENP_DTYPE_INT16;
template <>
inline constexpr int32_t kDtypeOf<uint16_t> = ENP_DTYPE_UINT16;
template <>
inline constexpr int32_t kDtypeOf<int32_t> = ENP_DTYPE_INT32;
template <>
inline constexpr int32_t kDtypeOf<uint32_t> = ENP_DTYPE_UINT32;
template <>
inline constexpr int32_t kDtypeOf<int64_t> = ENP_DTYPE_INT64;
template <>
inline constexpr int32_t kDtypeOf<uint64_t> = ENP_DTYPE_UINT64;
template <>
inline constexpr int32_t kDtypeOf<bool> = ENP_DTYPE_BOOL;

// For kernels built for a few element types: calls f.template
// operator()<T>() with T the one of Ts whose dtype is `dtype`, and returns
// false, calling nothing, when there is none (the caller reports it).
template <typename... Ts, typename F>
bool dispatch_among(int32_t dtype, F&& f) {
  return ((dtype == kDtypeOf<Ts> && (f.template operator()<Ts>(), true)) || ...);
}

// How many threads a loop over `work` elements gets: threads only pay off
// on large tensors, and parallel_for's results never depend on the count.
inline int threads_for(const KernelContext& ctx, int64_t work, int64_t grain = int64_t{1} << 15) {
  return work >= grain ? ctx.threads : 1;
}

// For kernels that only move elements: calls f.template operator()<W>()
// with W the unsigned word of `bytes` bytes, and returns false, calling
// nothing, for any other size.
template <typename F>
bool dispatch_width(size_t bytes, F&& f) {
  return [&]<typename... Ws>() {
    return ((bytes == sizeof(Ws) && (f.template operator()<Ws>(), true)) || ...);
  }.template operator()<uint8_t, uint16_t, uint32_t, uint64_t>();
}

// The product of the dims in [begin, end), 1 when empty: an element count.
template <typename It>
int64_t product(It begin, It end) {
  int64_t n = 1;
  for (auto it = begin; it != end; ++it) n *= *it;
  return n;
}
inline int64_t product(const std::vector<int64_t>& dims) {
  return product(dims.begin(), dims.end());
}

// Whether `from` broadcasts to `to` one way (numpy rules, as a scale or a
// bias broadcasts onto the tensor it applies to).
inline bool broadcasts_to(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    const int64_t d = from[from.size() - 1 - i];
    if (d != 1 && d != to[to.size() - 1 - i]) return false;
  }
  return true;
}

}  // namespace eulernpu::kit
