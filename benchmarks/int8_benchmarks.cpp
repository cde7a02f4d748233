// cpu_ref's int8 kernels (QConv, QGemm of ai.eulernpu) against its float32
// kernels (Conv, Gemm) on the same layer shapes: ResNet-50 and MobileNet
// convolutions, BERT-base projections and the layers of
// examples/digits/cnn.onnx.
//
// Every case runs at 1 and 2 threads (the executor's --threads) and with
// each int8 GEMM implementation this CPU supports (scalar, avx512_vnni).
// Each iteration calls the int8 kernel and then the float32 kernel on the
// same shape, so a busy machine slows both alike; a row reports both median
// call times (int8_us, fp32_us) and speedup = fp32_us / int8_us, the int8
// kernel's speed-up over float32. The row's own time is the int8 kernel's.
//
//   eulernpu_int8_benchmarks [--benchmark_filter=REGEX] [google benchmark flags]
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "bench_main.hpp"
#include "eulernpu/kernels/int8_gemm.hpp"
#include "eulernpu/kit/op_table.hpp"
#include "eulernpu/sdk/qmath.hpp"

namespace {

using eulernpu::bench::Clock;
using eulernpu::bench::median;
using eulernpu::bench::seconds_since;
using eulernpu::kernels::Int8GemmIsa;
using eulernpu::kit::Buffer;
using eulernpu::kit::KernelContext;
using eulernpu::kit::OpEntry;
namespace qmath = eulernpu::sdk::qmath;

constexpr int64_t kFloatOpset = 17;
constexpr int64_t kInt8Opset = 1;  // ai.eulernpu
constexpr int kThreadCounts[] = {1, 2};

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// A tensor owning its bytes, with fixed pseudo-random contents.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<int8_t> i8;
  std::vector<int32_t> i32;
  int32_t dtype;

  static Tensor float32(std::vector<int64_t> shape, uint32_t seed) {
    Tensor t{std::move(shape), {}, {}, {}, ENP_DTYPE_FLOAT32};
    t.f32.resize(static_cast<size_t>(product(t.shape)));
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : t.f32) v = dist(gen);
    return t;
  }
  // Codes in [lo, hi]: weights stay in [-127, 127] as the quantizer makes them.
  static Tensor int8(std::vector<int64_t> shape, uint32_t seed, int lo = -128, int hi = 127) {
    Tensor t{std::move(shape), {}, {}, {}, ENP_DTYPE_INT8};
    t.i8.resize(static_cast<size_t>(product(t.shape)));
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> dist(lo, hi);
    for (int8_t& v : t.i8) v = static_cast<int8_t>(dist(gen));
    return t;
  }
  static Tensor int32(std::vector<int32_t> values) {
    Tensor t{{static_cast<int64_t>(values.size())}, {}, {}, std::move(values), ENP_DTYPE_INT32};
    return t;
  }
  Buffer buffer() {
    void* data = dtype == ENP_DTYPE_FLOAT32 ? static_cast<void*>(f32.data())
                 : dtype == ENP_DTYPE_INT8  ? static_cast<void*>(i8.data())
                                            : static_cast<void*>(i32.data());
    return Buffer{dtype, shape, data};
  }
};

// One layer: the float op and its int8 twin with their attributes and
// shapes. W is (O, C/group, k, k) for Conv, (N, K) for Gemm (a Linear).
struct Case {
  std::string name;
  std::string float_op, int8_op;
  nlohmann::json float_attributes, int8_attributes;
  std::vector<int64_t> x, w, y;
  int64_t depth;  // terms per output (C/group · k · k, or K)
};

Case conv(std::string name, int64_t batch, int64_t c, int64_t hw, int64_t m, int64_t k,
          int64_t stride, int64_t group) {
  const int64_t pad = k / 2, out = (hw + 2 * pad - k) / stride + 1;
  const nlohmann::json attrs = {{"group", group},
                                {"pads", {pad, pad, pad, pad}},
                                {"strides", {stride, stride}},
                                {"kernel_shape", {k, k}}};
  nlohmann::json qattrs = attrs;
  qattrs["x_zero_point"] = -3;
  qattrs["y_zero_point"] = 5;
  return {std::move(name),
          "Conv",
          "QConv",
          attrs,
          qattrs,
          {batch, c, hw, hw},
          {m, c / group, k, k},
          {batch, m, out, out},
          c / group * k * k};
}

Case linear(std::string name, int64_t rows, int64_t k, int64_t n) {
  return {std::move(name),
          "Gemm",
          "QGemm",
          {{"transB", 1}},
          {{"a_zero_point", -3}, {"y_zero_point", 5}},
          {rows, k},
          {n, k},
          {rows, n},
          k};
}

std::vector<Case> cases() {
  return {
      conv("resnet50_conv3x3_56x56x64_to_64", 1, 64, 56, 64, 3, 1, 1),
      conv("resnet50_conv1x1_56x56x64_to_256", 1, 64, 56, 256, 1, 1, 1),
      conv("resnet50_conv3x3_28x28x128_to_128", 1, 128, 28, 128, 3, 1, 1),
      conv("resnet50_conv1x1_14x14x1024_to_256", 1, 1024, 14, 256, 1, 1, 1),
      conv("mobilenet_conv1x1_56x56x128_to_128", 1, 128, 56, 128, 1, 1, 1),
      conv("mobilenet_dwconv3x3_112x112x32", 1, 32, 112, 32, 3, 1, 32),
      conv("mobilenet_dwconv3x3_s2_112x112x64", 1, 64, 112, 64, 3, 2, 64),
      linear("bert_base_qkv_128x768_to_768", 128, 768, 768),
      linear("bert_base_ffn_up_128x768_to_3072", 128, 768, 3072),
      linear("bert_base_ffn_down_128x3072_to_768", 128, 3072, 768),
      conv("digits_cnn_conv1_8x8x1_to_8_batch64", 64, 1, 8, 8, 3, 1, 1),
      conv("digits_cnn_conv2_8x8x8_to_16_s2_batch64", 64, 8, 8, 16, 3, 2, 1),
      linear("digits_cnn_fc_256_to_10_batch64", 64, 256, 10),
  };
}

// The kernel call for one op: its tensors and context, ready to run.
struct Call {
  const OpEntry* entry = nullptr;
  std::vector<Tensor> tensors;
  std::vector<Buffer> inputs, outputs;
  nlohmann::json attributes;

  void run(int64_t opset, int threads, Int8GemmIsa isa) {
    KernelContext ctx{attributes, inputs, outputs, opset};
    ctx.threads = threads;
    ctx.int8_gemm_isa = isa;
    entry->kernel(ctx);
  }
};

// X, W, Bias and Y in float32.
Call float_call(const Case& c) {
  Call call;
  call.entry = eulernpu::kit::find_op("", c.float_op, kFloatOpset);
  call.attributes = c.float_attributes;
  call.tensors = {Tensor::float32(c.x, 1), Tensor::float32(c.w, 2), Tensor::float32({c.w[0]}, 3),
                  Tensor::float32(c.y, 0)};
  for (size_t i = 0; i < 3; ++i) call.inputs.push_back(call.tensors[i].buffer());
  call.outputs.push_back(call.tensors[3].buffer());
  return call;
}

// X, W, Bias, M, S and Y as the quantizer would emit them: weights in
// [-127, 127], per-channel multipliers that map the accumulator's typical
// range (√depth · 127 · 74, the spread of a sum of random products) onto
// the int8 range.
Call int8_call(const Case& c) {
  Call call;
  call.entry = eulernpu::kit::find_op(eulernpu::kit::kEulerNpuDomain, c.int8_op, kInt8Opset);
  call.attributes = c.int8_attributes;
  const int64_t channels = c.w[0];
  const auto m =
      qmath::encode_multiplier(64.0 / (std::sqrt(static_cast<double>(c.depth)) * 127.0 * 74.0));
  std::vector<int32_t> bias, mult, shift;
  for (int64_t o = 0; o < channels; ++o) {
    bias.push_back(static_cast<int32_t>(o % 17 * 100 - 800));
    mult.push_back(m.multiplier);
    shift.push_back(m.shift);
  }
  call.tensors = {Tensor::int8(c.x, 1),
                  Tensor::int8(c.w, 2, -127, 127),
                  Tensor::int32(std::move(bias)),
                  Tensor::int32(std::move(mult)),
                  Tensor::int32(std::move(shift)),
                  Tensor::int8(c.y, 0)};
  for (size_t i = 0; i < 5; ++i) call.inputs.push_back(call.tensors[i].buffer());
  call.outputs.push_back(call.tensors[5].buffer());
  return call;
}

void run_case(benchmark::State& state, const Case& c, Int8GemmIsa isa) {
  const int threads = static_cast<int>(state.range(0));
  Call f32 = float_call(c), i8 = int8_call(c);
  if (!f32.entry || !i8.entry) {
    state.SkipWithError(("no cpu_ref kernel for " + c.float_op + " or " + c.int8_op).c_str());
    return;
  }
  std::vector<double> int8_times, fp32_times;
  for (auto _ : state) {
    auto t0 = Clock::now();
    i8.run(kInt8Opset, threads, isa);
    benchmark::ClobberMemory();
    const double int8_seconds = seconds_since(t0);
    // The executor sets OpenBLAS to --threads before running kernels.
    openblas_set_num_threads(threads);
    t0 = Clock::now();
    f32.run(kFloatOpset, threads, isa);
    benchmark::ClobberMemory();
    fp32_times.push_back(seconds_since(t0));
    int8_times.push_back(int8_seconds);
    state.SetIterationTime(int8_seconds);
  }
  const double int8 = median(int8_times), fp32 = median(fp32_times);
  state.counters["int8_us"] = int8 * 1e6;
  state.counters["fp32_us"] = fp32 * 1e6;
  state.counters["speedup"] = int8 > 0 ? fp32 / int8 : 0.0;
}

void register_all() {
  static const std::vector<Case> all = cases();
  for (const Case& c : all) {
    // Every implementation the kernel library lists and this CPU runs.
    for (const auto& v : eulernpu::kernels::int8_gemm_variants()) {
      if (!v.supported()) continue;
      const std::string name = c.int8_op + "/" + c.name + "/" + v.name;
      auto* b = benchmark::RegisterBenchmark(name.c_str(), run_case, c, v.isa);
      b->ArgName("threads")->UseManualTime()->Unit(benchmark::kMicrosecond);
      for (int t : kThreadCounts) b->Arg(t);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return eulernpu::bench::run_benchmarks(argc, argv, &register_all);
}
