// The main() both benchmark programs share: OpenBLAS's idle workers spin
// for ~2^28 cycles after a multi-threaded call and would take the cores of
// the kernel under test (its 2-thread figure then shows no speed-up). The
// product never runs OpenBLAS multi-threaded; OpenBLAS reads the timeout
// when it loads, before main, so set it and start again.
#pragma once

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>

namespace eulernpu::bench {

inline int run_benchmarks(int argc, char** argv, void (*register_all)()) {
  if (std::getenv("OPENBLAS_THREAD_TIMEOUT") == nullptr) {
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
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
