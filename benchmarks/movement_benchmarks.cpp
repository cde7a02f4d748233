// cpu_ref's data-movement kernels (the portable ones of
// eulernpu/kernels/movement.hpp and MaxPool, through the op table), timed in
// process against a plain memcpy of the same output bytes: the least any
// copy can cost.
//
// Every case runs in float32 and int8, at 1 and 2 threads. Each iteration
// calls the kernel and then the memcpy, so a busy machine slows both alike;
// the row reports the kernel's median GB/s (output bytes written), the
// memcpy's, and vs_memcpy = kernel / memcpy. Rearranging ops stay below 1
// (they read with strides); MaxPool reads nine inputs per output.
//
//   eulernpu_movement_benchmarks [--benchmark_filter=REGEX] [google benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_main.hpp"
#include "eulernpu/kit/op_table.hpp"

namespace {

using eulernpu::bench::Clock;
using eulernpu::bench::median;
using eulernpu::bench::seconds_since;
using eulernpu::kit::Buffer;
using eulernpu::kit::KernelContext;
using eulernpu::kit::OpEntry;
using Dims = std::vector<int64_t>;

constexpr int64_t kOpset = 18;
constexpr int kThreadCounts[] = {1, 2};

int64_t count(const Dims& d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

// A tensor owning its bytes: float32 or int8 data, or int64 operands
// (indices, repeats, pads, shapes) given by value.
struct Tensor {
  int32_t dtype;
  Dims shape;
  std::vector<uint8_t> bytes;

  Tensor(int32_t t, Dims s) : dtype(t), shape(std::move(s)) {
    const size_t width = t == ENP_DTYPE_FLOAT32 ? 4 : t == ENP_DTYPE_INT64 ? 8 : 1;
    bytes.resize(static_cast<size_t>(count(shape)) * width);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 37 % 251);
  }
  // No values: an omitted optional input.
  static Tensor ints(const Dims& values) {
    if (values.empty()) return Tensor(ENP_DTYPE_UNDEFINED, {});
    Tensor t(ENP_DTYPE_INT64, {static_cast<int64_t>(values.size())});
    std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    return t;
  }
  Buffer buffer() { return Buffer{dtype, shape, bytes.data()}; }
};

struct Case {
  std::string name, op;
  nlohmann::json attributes;
  Dims input, output;
  std::vector<Dims> int_operands;  // inputs after the first, int64
};

void run_kernel(benchmark::State& state, const Case& c, int32_t dtype) {
  const int threads = static_cast<int>(state.range(0));
  const OpEntry* entry = eulernpu::kit::find_op("", c.op, kOpset);
  if (!entry) {
    state.SkipWithError(("no cpu_ref kernel for " + c.op).c_str());
    return;
  }
  std::vector<Tensor> tensors{Tensor(dtype, c.input)};
  for (const Dims& v : c.int_operands) tensors.push_back(Tensor::ints(v));
  Tensor out(dtype, c.output), copy(dtype, c.output);
  std::vector<Buffer> ins, outs{out.buffer()};
  for (Tensor& t : tensors) ins.push_back(t.buffer());
  KernelContext ctx{c.attributes, ins, outs, kOpset};
  ctx.threads = threads;
  const std::vector<uint8_t> source(copy.bytes.size(), 1);
  std::vector<double> kernel_times, memcpy_times;
  for (auto _ : state) {
    auto t0 = Clock::now();
    entry->kernel(ctx);
    benchmark::ClobberMemory();
    const double kernel_seconds = seconds_since(t0);
    t0 = Clock::now();
    std::memcpy(copy.bytes.data(), source.data(), source.size());
    benchmark::ClobberMemory();
    memcpy_times.push_back(seconds_since(t0));
    kernel_times.push_back(kernel_seconds);
    state.SetIterationTime(kernel_seconds);
  }
  const auto bytes = static_cast<double>(out.bytes.size());
  const double kernel = median(kernel_times), base = median(memcpy_times);
  state.counters["GB/s"] = kernel > 0 ? bytes / kernel / 1e9 : 0.0;
  state.counters["memcpy_GB/s"] = base > 0 ? bytes / base / 1e9 : 0.0;
  state.counters["vs_memcpy"] = kernel > 0 ? base / kernel : 0.0;
}

// Shapes of a ResNet/MobileNet-sized feature map: 64 channels at 56x56.
std::vector<Case> cases() {
  const Dims x{1, 64, 56, 56};
  return {
      {"transpose_nchw_to_nhwc", "Transpose", {{"perm", {0, 2, 3, 1}}}, x, {1, 56, 56, 64}, {}},
      {"slice_half_channels_every_other_row",
       "Slice",
       {},
       x,
       {1, 32, 28, 56},
       {{0, 0}, {32, 56}, {1, 2}, {1, 2}}},
      {"pad_constant_1",
       "Pad",
       {{"mode", "constant"}},
       x,
       {1, 64, 58, 58},
       {{0, 0, 1, 1, 0, 0, 1, 1}}},
      {"pad_reflect_1",
       "Pad",
       {{"mode", "reflect"}},
       x,
       {1, 64, 58, 58},
       {{0, 0, 1, 1, 0, 0, 1, 1}}},
      {"gather_channels", "Gather", {{"axis", 1}}, x, {1, 32, 56, 56}, {{0,  2,  4,  6,  8,  10, 12,
                                                                         14, 16, 18, 20, 22, 24, 26,
                                                                         28, 30, 33, 35, 37, 39, 41,
                                                                         43, 45, 47, 49, 51, 53, 55,
                                                                         57, 59, 61, 63}}},
      {"expand_channel_bias", "Expand", {}, {1, 64, 1, 1}, x, {{1, 64, 56, 56}}},
      {"tile_2x2", "Tile", {}, {1, 64, 28, 28}, x, {{1, 1, 2, 2}}},
      {"depth_to_space_2", "DepthToSpace", {{"blocksize", 2}}, {1, 256, 28, 28}, x, {}},
      {"maxpool_3x3_s2",
       "MaxPool",
       {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}},
       {1, 64, 112, 112},
       x,
       {}},
      {"resize_nearest_2x",
       "Resize",
       {{"mode", "nearest"}},
       {1, 64, 28, 28},
       x,
       {{}, {}, {1, 64, 56, 56}}},
  };
}

void register_all() {
  static const std::vector<Case> all = cases();
  for (const Case& c : all) {
    for (int32_t dtype : {ENP_DTYPE_FLOAT32, ENP_DTYPE_INT8}) {
      const std::string name =
          c.op + "/" + c.name + (dtype == ENP_DTYPE_INT8 ? "/int8" : "/float32");
      auto* b = benchmark::RegisterBenchmark(name.c_str(), run_kernel, c, dtype);
      b->ArgName("threads")->UseManualTime()->Unit(benchmark::kMicrosecond);
      for (int t : kThreadCounts) b->Arg(t);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return eulernpu::bench::run_benchmarks(argc, argv, &register_all);
}
