// cpu_ref's Conv, Gemm and MatMul kernels, timed in process against plain
// OpenBLAS cblas_sgemm on the equivalent GEMM shapes (MobileNet/ResNet convs,
// BERT-base projections and attention).
//
// Every case runs at 1 and 2 threads (the executor's --threads: OpenBLAS's
// thread count and the kernels' parallel_for). Each iteration calls the
// kernel and then its sgemm baseline, so a busy machine slows both alike;
// the row reports the kernel's median GFLOP/s, the baseline's, and
// vs_sgemm = kernel / baseline. All times are wall-clock, so the second
// thread shows as speed-up.
//
//   eulernpu_benchmarks [--benchmark_filter=REGEX] [google benchmark flags]
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench_main.hpp"
#include "eulernpu/kit/op_table.hpp"

namespace {

using eulernpu::bench::Clock;
using eulernpu::bench::median;
using eulernpu::bench::seconds_since;
using eulernpu::kit::Buffer;
using eulernpu::kit::KernelContext;
using eulernpu::kit::OpEntry;

constexpr int64_t kOpset = 17;
constexpr int kThreadCounts[] = {1, 2};

// A float32 tensor owning its data, filled with fixed pseudo-random values.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;

  explicit Tensor(std::vector<int64_t> s, uint32_t seed = 1) : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data.resize(static_cast<size_t>(n));
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : data) v = dist(gen);
  }
  Buffer buffer() { return Buffer{ENP_DTYPE_FLOAT32, shape, data.data()}; }
};

// One GEMM of an equivalent shape, repeated `count` times (groups, batches).
struct GemmShape {
  int64_t m, n, k, count = 1;
  bool trans_b = false;

  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
           static_cast<double>(count);
  }
};

// A kernel call: the op, its attributes and tensors, and its GEMM shape.
struct Case {
  std::string name;
  std::string op;
  nlohmann::json attributes;
  std::vector<std::vector<int64_t>> inputs;
  std::vector<int64_t> output;
  GemmShape gemm;
};

// Plain OpenBLAS on the case's GEMM shape, with operands already laid out
// for it (no im2col, no bias), at OpenBLAS's own `threads`.
struct Baseline {
  const GemmShape& g;
  Tensor a, b, out;

  explicit Baseline(const GemmShape& shape)
      : g(shape),
        a({g.count, g.m, g.k}, 1),
        b({g.count, g.k, g.n}, 2),
        out({g.count, g.m, g.n}, 3) {}

  void run(int threads) {
    openblas_set_num_threads(threads);
    for (int64_t i = 0; i < g.count; ++i) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans,
                  static_cast<int>(g.m), static_cast<int>(g.n), static_cast<int>(g.k), 1.0f,
                  a.data.data() + i * g.m * g.k, static_cast<int>(g.k),
                  b.data.data() + i * g.k * g.n, static_cast<int>(g.trans_b ? g.k : g.n), 0.0f,
                  out.data.data() + i * g.m * g.n, static_cast<int>(g.n));
    }
  }
};

// Each iteration times one kernel call and then one baseline sgemm call, so
// both see the same machine load; the reported time is the kernel's, and
// vs_sgemm compares the median call times.
void run_kernel(benchmark::State& state, const Case& c) {
  const int threads = static_cast<int>(state.range(0));
  const OpEntry* entry = eulernpu::kit::find_op("", c.op, kOpset);
  if (!entry) {
    state.SkipWithError(("no cpu_ref kernel for " + c.op).c_str());
    return;
  }
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    tensors.emplace_back(c.inputs[i], static_cast<uint32_t>(i + 1));
  }
  Tensor out(c.output, 0);
  std::vector<Buffer> ins, outs{out.buffer()};
  for (Tensor& t : tensors) ins.push_back(t.buffer());
  KernelContext ctx{c.attributes, ins, outs, kOpset};
  ctx.threads = threads;
  Baseline baseline(c.gemm);
  std::vector<double> kernel_times, sgemm_times;
  for (auto _ : state) {
    // The executor sets OpenBLAS to --threads before running kernels.
    openblas_set_num_threads(threads);
    auto t0 = Clock::now();
    entry->kernel(ctx);
    benchmark::ClobberMemory();
    const double kernel_seconds = seconds_since(t0);
    t0 = Clock::now();
    baseline.run(threads);
    benchmark::ClobberMemory();
    sgemm_times.push_back(seconds_since(t0));
    kernel_times.push_back(kernel_seconds);
    state.SetIterationTime(kernel_seconds);
  }
  const double flops = c.gemm.flops();
  const double kernel = median(kernel_times), sgemm = median(sgemm_times);
  state.counters["GFLOP/s"] = kernel > 0 ? flops / kernel / 1e9 : 0.0;
  state.counters["sgemm_GFLOP/s"] = sgemm > 0 ? flops / sgemm / 1e9 : 0.0;
  state.counters["vs_sgemm"] = kernel > 0 ? sgemm / kernel : 0.0;
}

// Conv NCHW with a square kernel; its GEMM is, per group, (M/g) x (OH*OW)
// x (C/g * k * k).
Case conv(std::string name, int64_t c, int64_t hw, int64_t m, int64_t k, int64_t stride,
          int64_t group) {
  const int64_t pad = k / 2, out = (hw + 2 * pad - k) / stride + 1;
  Case cs{std::move(name), "Conv", {}, {}, {}, {}};
  cs.attributes = {{"group", group},
                   {"pads", {pad, pad, pad, pad}},
                   {"strides", {stride, stride}},
                   {"kernel_shape", {k, k}}};
  cs.inputs = {{1, c, hw, hw}, {m, c / group, k, k}, {m}};
  cs.output = {1, m, out, out};
  cs.gemm = {m / group, out * out, c / group * k * k, group};
  return cs;
}

// Gemm Y = A * B^T + bias as a Linear layer stores it (B is (N, K)).
Case linear(std::string name, int64_t m, int64_t k, int64_t n) {
  Case cs{std::move(name), "Gemm", {{"transB", 1}}, {{m, k}, {n, k}, {n}}, {m, n}, {}};
  cs.gemm = {m, n, k, 1, true};
  return cs;
}

Case matmul(std::string name, int64_t batch, int64_t m, int64_t k, int64_t n) {
  Case cs{std::move(name), "MatMul", {}, {{batch, m, k}, {batch, k, n}}, {batch, m, n}, {}};
  cs.gemm = {m, n, k, batch};
  return cs;
}

std::vector<Case> cases() {
  return {
      conv("conv3x3_resnet_56x56x64_to_64", 64, 56, 64, 3, 1, 1),
      conv("conv3x3_resnet_28x28x128_to_128", 128, 28, 128, 3, 1, 1),
      conv("conv1x1_28x28x128_to_256", 128, 28, 256, 1, 1, 1),
      conv("dwconv3x3_mobilenet_112x112x32", 32, 112, 32, 3, 1, 32),
      conv("dwconv3x3_s2_mobilenet_112x112x64", 64, 112, 64, 3, 2, 64),
      linear("gemm_128x768_768x768", 128, 768, 768),
      linear("gemm_128x768_768x3072", 128, 768, 3072),
      matmul("matmul_128x768_768x768", 1, 128, 768, 768),
      matmul("matmul_attn_12x128x64_12x64x128", 12, 128, 64, 128),
  };
}

void register_all() {
  static const std::vector<Case> all = cases();
  for (const Case& c : all) {
    auto* b = benchmark::RegisterBenchmark((c.op + "/" + c.name).c_str(), run_kernel, c);
    b->ArgName("threads")->UseManualTime()->Unit(benchmark::kMicrosecond);
    for (int t : kThreadCounts) b->Arg(t);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return eulernpu::bench::run_benchmarks(argc, argv, &register_all);
}
