#include "kernel_util.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "float16.hpp"

namespace eulernpu::kit {

namespace {

// One run_tasks call. Helpers join it only while it is queued, so once the
// caller has unqueued it, `active` counts down to zero and never rises.
struct Job {
  void (*task)(void*, int64_t) = nullptr;
  void* ctx = nullptr;
  int64_t tasks = 0;
  int wanted = 0;              // helpers still to join
  std::atomic<int> active{0};  // changed under the pool's mutex, read by spinning
  std::atomic<int64_t> next{0};
  std::exception_ptr error;  // guarded by the pool's mutex
};

// How long a thread polls before it sleeps. A model runs hundreds of small
// kernels back to back; waking a sleeping thread through the OS took longer
// than many of them (two threads ran det_ppocrv4's elementwise ops slower
// than one), so a thread that just finished polls for the next job a while.
constexpr auto kSpin = std::chrono::microseconds(100);

// Calls done() until it is true or kSpin has passed; returns its last value.
template <typename Done>
bool spin_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 1;; ++i) {
    if (done()) return true;
    // The clock is read every 64 polls; the pause hint keeps a polling
    // thread from starving its sibling on the same core.
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) return false;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

// Threads started once and reused by every run_tasks call: starting threads
// per call cost more than small kernels take. Idle threads poll for a while
// (kSpin), then sleep on a condition variable. Destroyed (threads joined)
// when the plugin unloads.
class ThreadPool {
 public:
  ~ThreadPool() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
      queued_ = -1;  // ends every poll
    }
    work_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void run(Job& job) {
    {
      std::lock_guard lock(mu_);
      while (static_cast<int>(threads_.size()) < job.wanted) {
        threads_.emplace_back([this] { serve(); });
      }
      queue_.push_back(&job);
      queued_ = static_cast<int>(queue_.size());
    }
    if (job.wanted == 1) {
      work_.notify_one();
    } else {
      work_.notify_all();
    }
    work_on(job);
    {
      std::lock_guard lock(mu_);
      if (job.wanted > 0) {
        std::erase(queue_, &job);
        queued_ = static_cast<int>(queue_.size());
      }
    }
    if (!spin_until([&] { return job.active.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock lock(mu_);
      done_.wait(lock, [&] { return job.active.load() == 0; });
    }
    if (job.error) std::rethrow_exception(job.error);
  }

 private:
  void serve() {
    for (;;) {
      spin_until([this] { return queued_.load(std::memory_order_relaxed) != 0; });
      std::unique_lock lock(mu_);
      work_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      Job& job = *queue_.front();
      job.active.fetch_add(1);
      if (--job.wanted == 0) {
        queue_.pop_front();
        queued_ = static_cast<int>(queue_.size());
      }
      lock.unlock();
      work_on(job);
      lock.lock();
      if (job.active.fetch_sub(1, std::memory_order_release) == 1) done_.notify_all();
    }
  }

  // Runs the job's unstarted tasks until none is left.
  void work_on(Job& job) {
    for (int64_t i; (i = job.next.fetch_add(1)) < job.tasks;) {
      try {
        job.task(job.ctx, i);
      } catch (...) {
        job.next = job.tasks;
        std::lock_guard lock(mu_);
        if (!job.error) job.error = std::current_exception();
      }
    }
  }

  std::mutex mu_;
  std::condition_variable work_, done_;
  std::deque<Job*> queue_;
  std::atomic<int> queued_{0};  // queue_.size() for polling threads (-1: stopping)
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

ThreadPool& pool() {
  static ThreadPool p;
  return p;
}

}  // namespace

void run_tasks(int64_t tasks, int threads, void (*task)(void*, int64_t), void* ctx) {
  if (tasks <= 0) return;
  const int64_t helpers = std::min<int64_t>(threads, tasks) - 1;
  Job job;
  job.task = task;
  job.ctx = ctx;
  job.tasks = tasks;
  job.wanted = static_cast<int>(std::max<int64_t>(helpers, 0));
  if (job.wanted == 0) {
    for (int64_t i = 0; i < tasks; ++i) task(ctx, i);
    return;
  }
  pool().run(job);
}

kernels::TaskRunner task_runner(const KernelContext& ctx) {
  kernels::TaskRunner r;
  r.run = [](void*, int64_t tasks, int threads, kernels::TaskRunner::Task task, void* arg) {
    run_tasks(tasks, threads, task, arg);
  };
  r.threads = ctx.threads;
  return r;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

void run_f16_as_f32(const KernelContext& ctx, KernelFn f32_kernel) {
  // The float32 copies; moving a vector keeps its elements where they are.
  std::vector<std::vector<float>> storage;
  auto widened = [&storage](const Buffer& b) {
    if (b.dtype != ENP_DTYPE_FLOAT16) return b;
    const auto* h = b.as<const Half>();
    auto& v = storage.emplace_back(static_cast<size_t>(b.count()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = half_to_float(h[i].bits);
    return Buffer{ENP_DTYPE_FLOAT32, b.shape, v.data()};
  };
  std::vector<Buffer> inputs, outputs;
  for (const Buffer& b : ctx.inputs) inputs.push_back(widened(b));
  for (const Buffer& b : ctx.outputs) {
    if (b.dtype != ENP_DTYPE_FLOAT16) {
      outputs.push_back(b);
      continue;
    }
    auto& v = storage.emplace_back(static_cast<size_t>(b.count()));
    outputs.push_back(Buffer{ENP_DTYPE_FLOAT32, b.shape, v.data()});
  }
  const KernelContext wide{ctx.attributes, inputs,     outputs,          ctx.opset,
                           ctx.threads,    ctx.lookup, ctx.lookup_state, ctx.int8_gemm_isa};
  f32_kernel(wide);
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (ctx.outputs[o].dtype != ENP_DTYPE_FLOAT16) continue;
    const float* src = outputs[o].as<const float>();
    auto* dst = ctx.outputs[o].as<Half>();
    const int64_t n = ctx.outputs[o].count();
    for (int64_t i = 0; i < n; ++i) dst[i] = Half{half_from_double(src[i])};
  }
}

}  // namespace eulernpu::kit
