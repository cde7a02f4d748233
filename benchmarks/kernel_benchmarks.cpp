// cpu_ref's Conv, Gemm and MatMul kernels, timed in process against plain
// OpenBLAS cblas_sgemm on the equivalent GEMM shapes (MobileNet/ResNet convs,
// BERT-base projections and attention).
//
// Every case runs at 1 and 2 threads (the executor's --threads: OpenBLAS's
// thread count and the kernels' parallel_for). Its sgemm baseline runs just
// before it; the kernel's row reports GFLOP/s, the baseline's GFLOP/s and
// vs_sgemm = kernel / baseline. All times are wall-clock (UseRealTime), so
// the second thread shows as speed-up.
//
//   eulernpu_benchmarks [--benchmark_filter=REGEX] [google benchmark flags]
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "op_table.hpp"

namespace {

using eulernpu::cpu_ref::Buffer;
using eulernpu::cpu_ref::KernelContext;
using eulernpu::cpu_ref::OpEntry;
using Clock = std::chrono::steady_clock;

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

// Baseline GFLOP/s per "case/threads", written by the sgemm rows.
std::map<std::string, double>& baselines() {
  static std::map<std::string, double> m;
  return m;
}

std::string key(const Case& c, int threads) { return c.name + "/" + std::to_string(threads); }

// GFLOP/s over the framework's own (wall-clock) time.
void report(benchmark::State& state, double flops) {
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * iterations / 1e9, benchmark::Counter::kIsRate);
}

double gflops(double flops, int64_t iterations, double seconds) {
  return seconds > 0 ? flops * static_cast<double>(iterations) / seconds / 1e9 : 0.0;
}

// Plain OpenBLAS on the case's GEMM shape, with operands already laid out
// for it (no im2col, no bias).
void run_sgemm(benchmark::State& state, const Case& c) {
  const int threads = static_cast<int>(state.range(0));
  openblas_set_num_threads(threads);
  const GemmShape& g = c.gemm;
  Tensor a({g.count, g.m, g.k}, 1), b({g.count, g.k, g.n}, 2), out({g.count, g.m, g.n}, 3);
  const auto t0 = Clock::now();
  for (auto _ : state) {
    for (int64_t i = 0; i < g.count; ++i) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans,
                  static_cast<int>(g.m), static_cast<int>(g.n), static_cast<int>(g.k), 1.0f,
                  a.data.data() + i * g.m * g.k, static_cast<int>(g.k),
                  b.data.data() + i * g.k * g.n, static_cast<int>(g.trans_b ? g.k : g.n), 0.0f,
                  out.data.data() + i * g.m * g.n, static_cast<int>(g.n));
    }
    benchmark::ClobberMemory();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  baselines()[key(c, threads)] = gflops(g.flops(), state.iterations(), seconds);
  report(state, g.flops());
}

void run_kernel(benchmark::State& state, const Case& c) {
  const int threads = static_cast<int>(state.range(0));
  openblas_set_num_threads(threads);
  const OpEntry* entry = eulernpu::cpu_ref::find_op(c.op, kOpset);
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
  const auto t0 = Clock::now();
  for (auto _ : state) {
    entry->kernel(ctx);
    benchmark::ClobberMemory();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  report(state, c.gemm.flops());
  const auto it = baselines().find(key(c, threads));
  if (it != baselines().end() && it->second > 0) {
    state.counters["sgemm_GFLOP/s"] = it->second;
    state.counters["vs_sgemm"] = gflops(c.gemm.flops(), state.iterations(), seconds) / it->second;
  }
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
    auto* base = benchmark::RegisterBenchmark(("sgemm/" + c.name).c_str(), run_sgemm, c);
    auto* kern = benchmark::RegisterBenchmark((c.op + "/" + c.name).c_str(), run_kernel, c);
    for (auto* b : {base, kern}) {
      b->ArgName("threads")->UseRealTime()->Unit(benchmark::kMicrosecond);
      for (int t : kThreadCounts) b->Arg(t);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
