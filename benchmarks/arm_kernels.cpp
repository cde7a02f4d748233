// One int8 kernel call on the shapes of a small CNN, for counting the
// instructions it retires under qemu-user (benchmarks/arm_kernels.sh):
//   arm_kernels CASE REPEAT
// sets up CASE's operands, runs the kernel REPEAT times and prints a digest
// of the output, so the script can subtract a run of 1 from a run of 2 (the
// setup cancels) and check that the NEON and the scalar builds computed the
// same bytes. C++17 and the kernel library only, like the kernels'
// self-test. The scalar build defines EULERNPU_KERNELS_NO_NEON. A *_packed
// case is its base case over weights packed as zynq_ps artifacts hold them
// (int8_gemm_packed.hpp): the same operands, the same output bytes. The
// sgemm case is the float GEMM bundles compile in place of OpenBLAS
// (sdk/kit/src/blas_portable.cpp), its output bytes as a float digest.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "eulernpu/kernels/conv.hpp"
#include "eulernpu/kernels/elementwise.hpp"
#include "eulernpu/kernels/int8_gemm.hpp"
#include "eulernpu/kernels/int8_gemm_packed.hpp"
#include "eulernpu/kernels/matmul.hpp"
#include "kernel_util.hpp"

namespace k = eulernpu::kernels;
namespace qmath = eulernpu::sdk::qmath;

namespace {

// A linear congruential generator rather than <random>: the setup runs
// under the instruction trace too, and a cheap one keeps the trace short.
uint32_t state = 11;

std::vector<int8_t> codes(int64_t n, int lo, int hi) {
  std::vector<int8_t> v(static_cast<size_t>(n));
  const uint32_t span = static_cast<uint32_t>(hi - lo + 1);
  for (auto& c : v) {
    state = state * 1664525u + 1013904223u;
    c = static_cast<int8_t>(lo + static_cast<int>((state >> 8) % span));
  }
  return v;
}

struct Operands {
  std::vector<int8_t> x, w, y;
  std::vector<int32_t> bias;
  std::vector<qmath::FixedMultiplier> m;
  std::vector<int8_t> packed;  // the *_packed cases: w as zynq_ps packs it
  std::vector<int32_t> offset;
  std::vector<float> fa, fb, fc;  // the sgemm case
};

// Packs o.w as `groups` blocks of rows × depth, as zynq_ps's compiler does.
void pack(Operands& o, int64_t groups, int64_t rows, int64_t depth, int32_t x_zero_point) {
  const int64_t block = k::packed_weight_bytes(rows, depth);
  o.packed.resize(static_cast<size_t>(groups * block));
  o.offset.resize(static_cast<size_t>(groups * rows));
  for (int64_t g = 0; g < groups; ++g) {
    k::pack_qgemm_weights({rows, depth, 1}, o.w.data() + g * rows * depth, o.bias.data() + g * rows,
                          x_zero_point, o.packed.data() + g * block, o.offset.data() + g * rows);
  }
}

Operands operands(int64_t x, int64_t w, int64_t y, int64_t channels) {
  Operands o;
  o.x = codes(x, -128, 127);
  o.w = codes(w, -127, 127);
  o.y.resize(static_cast<size_t>(y));
  o.bias.assign(static_cast<size_t>(channels), 1000);
  o.m.assign(static_cast<size_t>(channels), qmath::FixedMultiplier{1 << 30, 16});
  return o;
}

k::ConvParams conv_params(int64_t channels_in, int64_t channels_out, int64_t group, int64_t hw) {
  k::ConvParams p;
  k::ConvGeometry& g = p.g;
  g.batch = 1;
  g.in_channels = channels_in;
  g.out_channels = channels_out;
  g.group = group;
  g.in = {1, hw, hw};
  g.kernel = {1, 3, 3};
  g.stride = {1, 1, 1};
  g.dilation = {1, 1, 1};
  g.pad = {0, 1, 1};
  g.out = {1, hw, hw};
  p.x_zero_point = -5;
  p.y_zero_point = 3;
  return p;
}

uint64_t digest(const void* data, size_t bytes) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  const auto* b = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

std::vector<float> floats(const std::vector<int8_t>& codes) {
  std::vector<float> v(codes.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(codes[i]) / 37.0f;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr,
                 "usage: arm_kernels "
                 "conv3x3[_packed]|depthwise3x3|fc[_packed]|gemm_batch8[_packed]|add|matmul|sgemm "
                 "REPEAT\n");
    return 2;
  }
  const std::string which = argv[1];
  const int repeat = std::atoi(argv[2]);
  Operands o;
  std::function<void()> call;
  if (which == "conv3x3") {  // 16 → 16 channels, 14×14: im2col and the int8 GEMM
    const k::ConvParams p = conv_params(16, 16, 1, 14);
    o = operands(16 * 196, 16 * 16 * 9, 16 * 196, 16);
    call = [&o, p] { k::qconv(p, o.x.data(), o.w.data(), o.bias.data(), o.m.data(), o.y.data()); };
  } else if (which == "conv3x3_packed") {  // the same over packed weights
    const k::ConvParams p = conv_params(16, 16, 1, 14);
    o = operands(16 * 196, 16 * 16 * 9, 16 * 196, 16);
    pack(o, 1, 16, 16 * 9, p.x_zero_point);
    call = [&o, p] {
      k::qconv_packed(p, o.x.data(), o.packed.data(), o.offset.data(), o.m.data(), o.y.data());
    };
  } else if (which == "depthwise3x3") {  // 32 channels, 28×28: the direct loop
    const k::ConvParams p = conv_params(32, 32, 32, 28);
    o = operands(32 * 784, 32 * 9, 32 * 784, 32);
    call = [&o, p] { k::qconv(p, o.x.data(), o.w.data(), o.bias.data(), o.m.data(), o.y.data()); };
  } else if (which == "fc") {  // 512 → 256 at batch 1: one GEMM column
    k::QGemmParams p;
    p.rows = 1;
    p.n = 256;
    p.k = 512;
    p.a_zero_point = 7;
    o = operands(512, 256 * 512, 256, 256);
    call = [&o, p] { k::qgemm(p, o.x.data(), o.w.data(), o.bias.data(), o.m.data(), o.y.data()); };
  } else if (which == "fc_packed" || which == "gemm_batch8_packed") {
    k::QGemmParams p;
    p.rows = which == "fc_packed" ? 1 : 8;
    p.n = which == "fc_packed" ? 256 : 64;
    p.k = 512;
    p.a_zero_point = 7;
    o = operands(p.rows * 512, p.n * 512, p.rows * p.n, p.n);
    pack(o, 1, p.n, 512, p.a_zero_point);
    call = [&o, p] {
      k::qgemm_packed(p, o.x.data(), o.packed.data(), o.offset.data(), o.m.data(), o.y.data());
    };
  } else if (which == "gemm_batch8") {  // 512 → 64 at batch 8
    k::QGemmParams p;
    p.rows = 8;
    p.n = 64;
    p.k = 512;
    p.a_zero_point = 7;
    o = operands(8 * 512, 64 * 512, 8 * 64, 64);
    call = [&o, p] { k::qgemm(p, o.x.data(), o.w.data(), o.bias.data(), o.m.data(), o.y.data()); };
  } else if (which == "add") {  // a residual QAdd of two 32-channel 28×28 tensors
    const int64_t n = 32 * 784;
    o = operands(2 * n, 0, n, 0);
    const k::BroadcastShapes s{{32, 784}, {32, 784}, {32, 784}};
    const qmath::AddParams p =
        qmath::encode_add(0.05, -3, 0.08, 7, 0.1, 2);  // the quantizer's encoding of the scales
    call = [&o, s, p] { k::qadd(s, p, false, o.x.data(), o.x.data() + n, o.y.data()); };
  } else if (which == "matmul") {  // attention scores of one head: (64 × 32) · (32 × 64)
    k::QMatMulParams p;
    p.batch = p.a_batch = p.b_batch = {1};
    p.m = 64;
    p.k = 32;
    p.n = 64;
    p.a_zero_point = 5;
    p.b_zero_point = -9;
    p.y_zero_point = 2;
    p.multiplier = qmath::FixedMultiplier{1 << 30, 14};
    o = operands(64 * 32 + 32 * 64, 0, 64 * 64, 0);
    call = [&o, p] { k::qmatmul(p, o.x.data(), o.x.data() + 64 * 32, o.y.data()); };
  } else if (which == "sgemm") {  // a float 3×3 conv 16 → 16, 14×14, as its im2col GEMM
    o.fa = floats(codes(16 * 144, -128, 127));
    o.fb = floats(codes(144 * 196, -128, 127));
    o.fc.assign(16 * 196, 0.0f);
    call = [&o] {
      eulernpu::kit::SerialBlas serial;
      eulernpu::kit::sgemm_f32_serial(false, false, 16, 196, 144, 1.0f, o.fa.data(), 144,
                                      o.fb.data(), 196, 0.0f, o.fc.data(), 196);
    };
  } else {
    std::fprintf(stderr, "arm_kernels: unknown case '%s'\n", which.c_str());
    return 2;
  }
  for (int r = 0; r < repeat; ++r) call();
  const uint64_t h = o.fc.empty() ? digest(o.y.data(), o.y.size())
                                  : digest(o.fc.data(), o.fc.size() * sizeof(float));
  std::printf("%s %016" PRIx64 "\n", which.c_str(), h);
  return 0;
}
