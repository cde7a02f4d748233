// How the reference kernels use threads: not at all by themselves. A kernel
// cuts its work into independent tasks by the shape alone (never by the
// thread count) and hands them to the caller's TaskRunner, so a backend
// brings its own pool (cpu_ref's, pthreads on a board, none on bare metal)
// and every split gives the same bytes: each task writes only what its
// index names, and integer sums do not depend on their order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace eulernpu::kernels {

struct TaskRunner {
  using Task = void (*)(void* arg, int64_t index);
  // Runs task(arg, i) for every i in [0, tasks) on at most `threads`
  // threads, in any order, and returns when all have run. Null: the calling
  // thread runs them in order.
  void (*run)(void* self, int64_t tasks, int threads, Task task, void* arg) = nullptr;
  void* self = nullptr;
  int threads = 1;  // >= 1: the most threads a kernel may ask for
};

// The serial runner: every task on the calling thread.
inline constexpr TaskRunner kSerial{};

// Threads worth using for `work` multiply-adds (or element steps): one
// below `grain`, where a hand-off costs more than it saves.
inline int threads_for(const TaskRunner& r, int64_t work, int64_t grain = int64_t{1} << 15) {
  return work >= grain ? std::max(r.threads, 1) : 1;
}

// fn(i) for every i in [0, tasks), on at most `threads` threads.
template <typename Fn>
void for_each_task(const TaskRunner& r, int64_t tasks, int threads, Fn&& fn) {
  if (tasks <= 0) return;
  if (threads <= 1 || tasks == 1 || r.run == nullptr) {
    for (int64_t i = 0; i < tasks; ++i) fn(i);
    return;
  }
  using F = std::remove_reference_t<Fn>;
  r.run(
      r.self, tasks, threads, [](void* f, int64_t i) { (*static_cast<F*>(f))(i); },
      const_cast<void*>(static_cast<const void*>(&fn)));
}

// fn(begin, end) over [0, n) in at most `threads` contiguous chunks.
template <typename Fn>
void for_each_range(const TaskRunner& r, int64_t n, int threads, Fn fn) {
  const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(threads, n));
  if (workers <= 1) {
    fn(int64_t{0}, n);
    return;
  }
  const int64_t chunk = (n + workers - 1) / workers;
  for_each_task(r, (n + chunk - 1) / chunk, static_cast<int>(workers),
                [&](int64_t w) { fn(w * chunk, std::min(n, (w + 1) * chunk)); });
}

}  // namespace eulernpu::kernels
