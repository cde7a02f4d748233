// What every benchmark program shares: its timing helpers, and a main()
// that sets OpenBLAS up first: OpenBLAS's idle workers spin
// for ~2^28 cycles after a multi-threaded call and would take the cores of
// the kernel under test (its 2-thread figure then shows no speed-up). The
// product never runs OpenBLAS multi-threaded. And the kernels the host
// picks (OPENBLAS_CORETYPE from the CPU's features, openblas_core.hpp), or
// float32 baselines would run OpenBLAS's SSE3 ones on a CPU newer than the
// library. OpenBLAS reads both when it loads, before main, so set them and
// start again.
#pragma once

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "eulernpu/sdk/openblas_core.hpp"

namespace eulernpu::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The median of the per-call times: robust to the odd preempted call.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

inline int run_benchmarks(int argc, char** argv, void (*register_all)()) {
  const char* core = sdk::openblas_core_for_cpu();
  const bool set_timeout = std::getenv("OPENBLAS_THREAD_TIMEOUT") == nullptr;
  const bool set_core = core != nullptr && std::getenv("OPENBLAS_CORETYPE") == nullptr;
  if (set_timeout || set_core) {
    // Each only where unset: a user's own stays, and the second start
    // finds both set.
    if (set_timeout) setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
    if (set_core) setenv("OPENBLAS_CORETYPE", core, 1);
    execv("/proc/self/exe", argv);
    // exec failed: measure anyway, the 2-thread rows will say so.
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace eulernpu::bench
