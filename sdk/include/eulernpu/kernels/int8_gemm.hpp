// The int8 GEMM under QConv, QGemm and the NPU models' tiles: integer
// products, int32 accumulation, one requantization per output (the
// arithmetic of docs/quantization.md, through eulernpu/sdk/qmath.hpp).
//
// Its implementations are one list, int8_gemm_variants(): the dispatcher,
// the tests and the benchmarks all read it, so a new ISA is one
// entry, tested and measured as soon as it is listed.
#pragma once

#include <cstdint>
#include <vector>

#include "eulernpu/sdk/qmath.hpp"

namespace eulernpu::kernels {

struct QGemmShape {
  int64_t rows = 0;     // O: output channels
  int64_t depth = 0;    // K: terms per output
  int64_t columns = 0;  // P: output positions
};

struct QGemmOutput {
  int32_t x_zero_point = 0;
  int32_t y_zero_point = 0;
  int32_t qmin = -128, qmax = 127;  // a fused Relu/Clip narrows these; qmin <= qmax
};

// The implementations. All compute the same integers and requantize them
// with the same qmath functions, so they write the same bytes; they differ
// only in speed and in the CPUs they run on.
enum class Int8GemmIsa {
  kAuto,        // the fastest this CPU supports, unless EULERNPU_CPU_REF_ISA names another
  kScalar,      // portable C++ (auto-vectorized): runs everywhere
  kAvx512Vnni,  // vpdpbusd (AVX-512 VNNI, with AVX-512 F/BW/VL)
  kNeon,        // widening multiply-accumulates (ARM NEON, armv7-a and aarch64; no SDOT)
  kAvx2,        // int16 pair products, vpmaddwd (x86-64 without VNNI; never vpmaddubsw)
};

using QGemmFn = void (*)(const QGemmShape& s, const int8_t* w, const int8_t* x, const int32_t* bias,
                         const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out, int8_t* y);

struct Int8GemmVariant {
  Int8GemmIsa isa;
  const char* name;     // "scalar", "avx2", "avx512_vnni", "neon"
  bool (*supported)();  // whether this CPU runs it
  QGemmFn run;          // call only where supported()
};

// Every implementation built into this library, the portable one first.
const std::vector<Int8GemmVariant>& int8_gemm_variants();

// Whether this CPU can run `isa` (kAuto and kScalar: always; an ISA not
// built in: never).
bool int8_gemm_isa_supported(Int8GemmIsa isa);

// The implementation qgemm_int8 runs for `isa`: kAuto resolves to the
// variant the environment variable EULERNPU_CPU_REF_ISA names (read once
// per process) when this CPU supports it, else to the last supported
// variant of the list (the fastest); an unsupported request falls back to
// kScalar. Never returns kAuto. Thread-safe.
Int8GemmIsa int8_gemm_resolve(Int8GemmIsa isa);

// What kAuto resolves to when EULERNPU_CPU_REF_ISA is `name` (null: not
// set): the supported variant of that name, else the fastest supported.
Int8GemmIsa int8_gemm_choose(const char* name);

// "auto" or the variant's name.
const char* int8_gemm_isa_name(Int8GemmIsa isa);

// y[o, p] = clamp(rounding_multiply(Σ_k w[o, k] · (x[k, p] − x_zp) + bias[o],
//                                   m[o]) + y_zp, qmin, qmax)
// w: rows × depth, x: depth × columns, y: rows × columns, all row-major;
// bias may be null (0). The caller has proven
// depth · 255 · max|w[o]| + |bias[o]| < 2^31 for every row, so the int32
// accumulators are exact; the zero point is applied through the row sums of
// w, which keeps the inner loop a plain multiply-add. Thread-safe; `isa`
// picks the implementation (int8_gemm_resolve), never the result.
void qgemm_int8(const QGemmShape& s, const int8_t* w, const int8_t* x, const int32_t* bias,
                const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out, int8_t* y,
                Int8GemmIsa isa = Int8GemmIsa::kAuto);

}  // namespace eulernpu::kernels
