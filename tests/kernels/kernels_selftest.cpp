// The reference kernels against their definitions, on any CPU: C++17 and
// the kernel library only (no test framework), so the same file builds
// natively and with the ARM cross compilers and runs under qemu-user.
// Every case computes the kernel's output serially and on a three-thread
// runner, checks both against a term-by-term int64 evaluation of
// docs/quantization.md's formula, and prints one line, `name digest`, of
// the output bytes: tests/kernels/cross_check.sh compares those lines
// across x86-64, aarch64 and armv7-a.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "eulernpu/kernels/concat.hpp"
#include "eulernpu/kernels/conv.hpp"
#include "eulernpu/kernels/elementwise.hpp"
#include "eulernpu/kernels/int8_gemm.hpp"
#include "eulernpu/kernels/int8_gemm_packed.hpp"
#include "eulernpu/kernels/matmul.hpp"
#include "eulernpu/kernels/movement.hpp"
#include "eulernpu/kernels/pool.hpp"
#include "eulernpu/kernels/table.hpp"
#include "requantize_row.hpp"

// The definitions below index vectors with int64 positions for brevity,
// which -Wconversion reports on 32-bit ARM; the kernels themselves build
// with it as an error (cross_check.sh).
#pragma GCC diagnostic ignored "-Wconversion"

namespace k = eulernpu::kernels;
namespace qmath = eulernpu::sdk::qmath;
using Bytes = std::vector<int8_t>;

namespace {

int failures = 0;

// Tasks in index order on up to `threads` std::threads, each taking every
// threads-th index: a different split from any serial run.
void run_on_threads(void*, int64_t tasks, int threads, k::TaskRunner::Task task, void* arg) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([=] {
      for (int64_t i = t; i < tasks; i += threads) task(arg, i);
    });
  }
  for (auto& th : pool) th.join();
}
const k::TaskRunner kThreads{&run_on_threads, nullptr, 3};

uint64_t digest(const Bytes& b) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (int8_t v : b) h = (h ^ static_cast<uint8_t>(v)) * 1099511628211ull;
  return h;
}

void report(const char* name, const Bytes& serial, const Bytes& threaded, const Bytes& want) {
  const bool ok = serial == want && threaded == want;
  if (!ok) ++failures;
  std::printf("%s %016" PRIx64 "%s\n", name, digest(serial), ok ? "" : " MISMATCH");
}

std::mt19937 rng(20261202);
Bytes codes(int64_t n, int lo = -128, int hi = 127) {
  Bytes v(static_cast<size_t>(n));
  for (auto& c : v) c = static_cast<int8_t>(std::uniform_int_distribution<int>(lo, hi)(rng));
  return v;
}
std::vector<qmath::FixedMultiplier> multipliers(int64_t n) {
  std::vector<qmath::FixedMultiplier> m;
  for (int64_t i = 0; i < n; ++i) {
    m.push_back({static_cast<int32_t>(
                     std::uniform_int_distribution<int64_t>(1 << 30, (int64_t{1} << 31) - 1)(rng)),
                 std::uniform_int_distribution<int32_t>(8, 20)(rng)});
  }
  return m;
}
std::vector<int32_t> biases(int64_t n) {
  std::vector<int32_t> b(static_cast<size_t>(n));
  for (auto& v : b) v = std::uniform_int_distribution<int32_t>(-20000, 20000)(rng);
  return b;
}
int8_t rq(int64_t acc, qmath::FixedMultiplier m, int32_t zp, int32_t lo = -128, int32_t hi = 127) {
  return static_cast<int8_t>(qmath::requantize(static_cast<int32_t>(acc), m, zp, lo, hi));
}

// The packed GEMM (int8_gemm_packed.hpp) on w, x: the portable loop and
// the default (NEON on ARM) give `want`, the unpacked GEMM's bytes.
void packed_case(const std::string& dims, const k::QGemmShape& s, const Bytes& w, const Bytes& x,
                 const std::vector<int32_t>& b, const std::vector<qmath::FixedMultiplier>& m,
                 const k::QGemmOutput& out, const Bytes& want) {
  Bytes packed(static_cast<size_t>(k::packed_weight_bytes(s.rows, s.depth)));
  std::vector<int32_t> offset(static_cast<size_t>(s.rows));
  if (!k::pack_qgemm_weights(s, w.data(), b.data(), out.x_zero_point, packed.data(),
                             offset.data())) {
    std::printf("qgemm_packed/%s: packing failed\n", dims.c_str());
    ++failures;
    return;
  }
  for (const k::Int8GemmIsa isa : {k::Int8GemmIsa::kScalar, k::Int8GemmIsa::kAuto}) {
    Bytes y(want.size());
    k::qgemm_int8_packed(s, packed.data(), x.data(), offset.data(), m.data(), out, y.data(), isa);
    const char* which = isa == k::Int8GemmIsa::kScalar ? "scalar" : "auto";
    report(("qgemm_packed/" + std::string(which) + "/" + dims).c_str(), y, y, want);
  }
}

// Offsets past int32 are refused; weights that break the accumulator bound
// (a damaged artifact) wrap the same way in every implementation, which
// the sanitizer tree runs without a report.
void packed_limits() {
  const k::QGemmShape s{5, 40, 11};
  const Bytes w(static_cast<size_t>(s.rows * s.depth), 127);
  std::vector<int32_t> bias(static_cast<size_t>(s.rows), std::numeric_limits<int32_t>::max());
  Bytes packed(static_cast<size_t>(k::packed_weight_bytes(s.rows, s.depth)));
  std::vector<int32_t> offset(static_cast<size_t>(s.rows), 7);
  const bool refused =
      !k::pack_qgemm_weights(s, w.data(), bias.data(), -128, packed.data(), offset.data());
  const bool untouched = offset == std::vector<int32_t>(static_cast<size_t>(s.rows), 7);
  if (!refused || !untouched) ++failures;
  std::printf("qgemm_packed/offset_overflow %s\n", refused && untouched ? "refused" : "MISMATCH");
  bias.assign(bias.size(), 0);
  k::pack_qgemm_weights(s, w.data(), bias.data(), 0, packed.data(), offset.data());
  offset.assign(offset.size(), std::numeric_limits<int32_t>::max());
  const Bytes x(static_cast<size_t>(s.depth * s.columns), 127);
  const auto m = multipliers(s.rows);
  const k::QGemmOutput out{0, 0, -128, 127};
  Bytes serial(static_cast<size_t>(s.rows * s.columns)), neon(serial.size());
  k::qgemm_int8_packed(s, packed.data(), x.data(), offset.data(), m.data(), out, serial.data(),
                       k::Int8GemmIsa::kScalar);
  k::qgemm_int8_packed(s, packed.data(), x.data(), offset.data(), m.data(), out, neon.data());
  report("qgemm_packed/wraps", serial, neon, serial);
}

// Shapes that fill the ISA variants' register blocks (NEON: 4 rows × 8
// columns; AVX-512: 6 rows × 64 columns) and leave every kind of remainder.
void gemm_cases() {
  // The last two: a fully connected layer at batch 1 and a narrow GEMM,
  // which NEON computes as dot products of transposed columns.
  const k::QGemmShape shapes[] = {{7, 45, 37},  {16, 64, 24}, {5, 3, 9}, {1, 1, 1},
                                  {9, 200, 71}, {10, 300, 1}, {6, 33, 6}};
  const k::QGemmOutput outs[] = {{-9, 4, -100, 120}, {3, -2, -128, 127}, {0, 0, -128, 127},
                                 {-128, 5, 5, 127},  {127, -7, -128, 0}, {0, -3, -128, 127},
                                 {-1, 9, -20, 127}};
  for (size_t c = 0; c < std::size(shapes); ++c) {
    const k::QGemmShape s = shapes[c];
    const k::QGemmOutput out = outs[c];
    const Bytes w = codes(s.rows * s.depth), x = codes(s.depth * s.columns);
    const auto b = biases(s.rows);
    const auto m = multipliers(s.rows);
    Bytes want(static_cast<size_t>(s.rows * s.columns));
    for (int64_t o = 0; o < s.rows; ++o) {
      for (int64_t p = 0; p < s.columns; ++p) {
        int64_t acc = b[o];
        for (int64_t q = 0; q < s.depth; ++q)
          acc += int64_t{w[o * s.depth + q]} * (x[q * s.columns + p] - out.x_zero_point);
        want[o * s.columns + p] = rq(acc, m[o], out.y_zero_point, out.qmin, out.qmax);
      }
    }
    const std::string dims =
        std::to_string(s.rows) + "x" + std::to_string(s.depth) + "x" + std::to_string(s.columns);
    for (const auto& v : k::int8_gemm_variants()) {
      if (!v.supported()) continue;
      Bytes y(want.size());
      k::qgemm_int8(s, w.data(), x.data(), b.data(), m.data(), out, y.data(), v.isa);
      report((std::string("qgemm_int8/") + v.name + "/" + dims).c_str(), y, y, want);
    }
    packed_case(dims, s, w, x, b, m, out, want);
  }
  // Shapes at the packed layout's edges: depths of one chunk, one more and
  // one less, 4 and 8 rows (whole panels) beside 3 and 13.
  const k::QGemmShape edges[] = {{4, 16, 8}, {3, 17, 9}, {8, 32, 16}, {13, 15, 1}, {12, 48, 3}};
  for (const k::QGemmShape& s : edges) {
    const k::QGemmOutput out{-128, 3, -128, 127};
    const Bytes w = codes(s.rows * s.depth), x = codes(s.depth * s.columns);
    const auto b = biases(s.rows);
    const auto m = multipliers(s.rows);
    Bytes want(static_cast<size_t>(s.rows * s.columns));
    k::qgemm_int8(s, w.data(), x.data(), b.data(), m.data(), out, want.data(),
                  k::Int8GemmIsa::kScalar);
    packed_case(
        std::to_string(s.rows) + "x" + std::to_string(s.depth) + "x" + std::to_string(s.columns), s,
        w, x, b, m, out, want);
  }
  packed_limits();
}

// Convolution geometry with `n` spatial dims from the given extents.
k::ConvGeometry geometry(int64_t c, int64_t o, int64_t group, k::Dims3 in, k::Dims3 kernel,
                         k::Dims3 stride, k::Dims3 dilation, k::Dims3 pad, bool transpose) {
  k::ConvGeometry g;
  g.batch = 2;
  g.in_channels = c;
  g.out_channels = o;
  g.group = group;
  g.in = in;
  g.kernel = kernel;
  g.stride = stride;
  g.dilation = dilation;
  g.pad = pad;
  for (size_t d = 0; d < 3; ++d) {
    const int64_t span = dilation[d] * (kernel[d] - 1) + 1;
    g.out[d] = transpose ? stride[d] * (in[d] - 1) + span - 2 * pad[d]
                         : (in[d] + 2 * pad[d] - span) / stride[d] + 1;
  }
  return g;
}

void conv_case(const char* name, const k::ConvGeometry& g, bool transpose) {
  k::ConvParams p;
  p.g = g;
  p.x_zero_point = -7;
  p.y_zero_point = 5;
  p.qmin = -128;
  p.qmax = 110;
  const int64_t cg = g.in_channels / g.group, og = g.out_channels / g.group;
  const Bytes x = codes(g.batch * g.in_channels * g.in_size());
  const Bytes w =
      codes((transpose ? g.in_channels * og : g.out_channels * cg) * g.kernel_size(), -60, 60);
  const auto b = biases(g.out_channels);
  const auto m = multipliers(g.out_channels);
  std::vector<int64_t> acc(static_cast<size_t>(g.batch * g.out_channels * g.out_size()), 0);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t o = 0; o < g.out_channels; ++o) {
      for (int64_t q = 0; q < g.out_size(); ++q)
        acc[(n * g.out_channels + o) * g.out_size() + q] = b[o];
    }
  }
  // The definition: every (input position, tap) pair whose indexes meet.
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t ci = 0; ci < g.in_channels; ++ci)
      for (int64_t j = 0; j < og; ++j)
        for (int64_t t = 0; t < g.kernel_size(); ++t) {
          const int64_t gi = ci / cg, o = gi * og + j;
          const k::Dims3 kk{t / (g.kernel[1] * g.kernel[2]), t / g.kernel[2] % g.kernel[1],
                            t % g.kernel[2]};
          const int32_t wv = transpose ? w[(ci * og + j) * g.kernel_size() + t]
                                       : w[(o * cg + ci % cg) * g.kernel_size() + t];
          for (int64_t q = 0; q < (transpose ? g.in_size() : g.out_size()); ++q) {
            const k::Dims3 at =
                transpose
                    ? k::Dims3{q / (g.in[1] * g.in[2]), q / g.in[2] % g.in[1], q % g.in[2]}
                    : k::Dims3{q / (g.out[1] * g.out[2]), q / g.out[2] % g.out[1], q % g.out[2]};
            k::Dims3 other{};
            bool inside = true;
            for (size_t d = 0; d < 3; ++d) {
              other[d] = at[d] * g.stride[d] - g.pad[d] + kk[d] * g.dilation[d];
              inside = inside && other[d] >= 0 && other[d] < (transpose ? g.out[d] : g.in[d]);
            }
            const int64_t xi = transpose ? q : (other[0] * g.in[1] + other[1]) * g.in[2] + other[2];
            const int64_t yi =
                transpose ? (other[0] * g.out[1] + other[1]) * g.out[2] + other[2] : q;
            // Padding taps read the zero point: they add nothing.
            if (!inside) continue;
            acc[(n * g.out_channels + o) * g.out_size() + yi] +=
                int64_t{wv} * (x[(n * g.in_channels + ci) * g.in_size() + xi] - p.x_zero_point);
          }
        }
  Bytes want(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    want[i] = rq(acc[i], m[i / g.out_size() % g.out_channels], p.y_zero_point, p.qmin, p.qmax);
  }
  Bytes serial(want.size()), threaded(want.size());
  for (Bytes* y : {&serial, &threaded}) {
    const k::TaskRunner& r = y == &serial ? k::kSerial : kThreads;
    if (transpose) {
      k::qconv_transpose(p, x.data(), w.data(), b.data(), m.data(), y->data(), r);
    } else {
      k::qconv(p, x.data(), w.data(), b.data(), m.data(), y->data(), r);
    }
  }
  report(name, serial, threaded, want);
}

void conv_cases() {
  conv_case("qconv/2d",
            geometry(5, 6, 1, {1, 9, 11}, {1, 3, 3}, {1, 2, 1}, {1, 1, 1}, {0, 1, 1}, false),
            false);
  conv_case("qconv/grouped",
            geometry(6, 9, 3, {1, 8, 7}, {1, 3, 2}, {1, 1, 2}, {1, 2, 1}, {0, 2, 1}, false), false);
  conv_case("qconv/depthwise",
            geometry(4, 4, 4, {1, 10, 9}, {1, 3, 3}, {1, 2, 2}, {1, 1, 2}, {0, 1, 2}, false),
            false);
  // 3-D, strides along D and H, a dilation along H: the depth slices and
  // row phases of the depthwise buffer.
  conv_case("qconv/depthwise_3d",
            geometry(4, 4, 4, {5, 7, 9}, {3, 3, 3}, {2, 2, 1}, {1, 2, 1}, {1, 1, 1}, false), false);
  // Output rows of 21: the vector requantization's blocks of 8 and a tail.
  conv_case("qconv/depthwise_wide",
            geometry(3, 3, 3, {1, 7, 21}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, false),
            false);
  // 2160 terms per output: blocks narrower than a 150-wide output row, so
  // im2col starts and ends mid-row.
  conv_case("qconv/long_rows",
            geometry(240, 2, 1, {1, 3, 150}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, false),
            false);
  // The direct VNNI kernel's cases (qconv_vnni.cpp) where the CPU has it:
  // a 1×1 conv read from X as it is and stored straight into Y, in panels
  // of 64 columns and a narrower last one, rows in tiles of 6 and a tail;
  // a conv without padding (X as it is, columns dropped); a small map with
  // many channels (row tiles split into blocks, two-vector panels); and
  // strides with dilations over the padded planes.
  conv_case("qconv/pointwise",
            geometry(13, 14, 1, {1, 9, 12}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, false),
            false);
  conv_case("qconv/valid",
            geometry(8, 7, 1, {1, 10, 13}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, false),
            false);
  conv_case("qconv/small_map",
            geometry(20, 40, 1, {1, 4, 5}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, false),
            false);
  conv_case("qconv/dilated_strided",
            geometry(7, 9, 1, {1, 15, 17}, {1, 3, 3}, {1, 2, 2}, {1, 2, 2}, {0, 2, 2}, false),
            false);
  conv_case("qconv/1d",
            geometry(3, 4, 1, {1, 1, 30}, {1, 1, 5}, {1, 1, 3}, {1, 1, 1}, {0, 0, 2}, false),
            false);
  conv_case("qconv/3d",
            geometry(2, 3, 1, {4, 5, 6}, {2, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1}, false), false);
  conv_case("qconv_transpose/2d",
            geometry(4, 6, 2, {1, 5, 6}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, true), true);
  // Stride = kernel: the output-tiling GEMM path, its column blocks split
  // mid-row (in 40×41 positions, a block of 1024 > 12 channels' width).
  conv_case("qconv_transpose/tiled",
            geometry(12, 6, 2, {1, 40, 41}, {1, 2, 2}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0}, true),
            true);
  conv_case("qconv_transpose/tiled_3d",
            geometry(3, 4, 1, {2, 3, 5}, {2, 1, 3}, {2, 1, 3}, {1, 1, 1}, {0, 0, 0}, true), true);
}

// im2col of a box of output positions as npu_sim's tiles ask for it: g.out
// left unset, the box reaching past the real output (a tile padded to the
// engine's size), strides and padding on both sides. Each column element
// is its tap's input or the zero point, by the definition.
void im2col_box_cases() {
  k::ConvGeometry g;
  g.in = {1, 7, 9};
  g.kernel = {1, 3, 3};
  g.stride = {1, 2, 2};
  g.pad = {0, 1, 1};
  g.dilation = {1, 1, 1};
  const int64_t channels = 2, ksize = 9;
  const k::Dims3 begin{0, 1, 2}, count{1, 4, 6};  // output rows 1-4, columns 2-7 (of 4 × 5)
  const Bytes x = codes(channels * 7 * 9);
  const int8_t zp = -3;
  const int64_t width = count[1] * count[2];
  Bytes got(static_cast<size_t>(channels * ksize * width)), want(got.size());
  k::im2col_box(x.data(), g, channels, begin, count, zp, got.data());
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t t = 0; t < ksize; ++t) {
      for (int64_t a = 0; a < count[1]; ++a) {
        for (int64_t e = 0; e < count[2]; ++e) {
          const int64_t ih = (begin[1] + a) * 2 - 1 + t / 3, iw = (begin[2] + e) * 2 - 1 + t % 3;
          const bool inside = ih >= 0 && ih < 7 && iw >= 0 && iw < 9;
          want[static_cast<size_t>((c * ksize + t) * width + a * count[2] + e)] =
              inside ? x[static_cast<size_t>((c * 7 + ih) * 9 + iw)] : zp;
        }
      }
    }
  }
  report("im2col_box/past_the_output", got, got, want);
}

// The requantization of a row of accumulators (NEON lanes on ARM) against
// qmath::requantize, one output at a time, at the edges of its arithmetic:
// int32's extremes, the largest and smallest multipliers and shifts, zero,
// and narrowed clamps.
void requantize_cases() {
  const int32_t accs[] = {0,           1,         -1,     2147483647, -2147483647 - 1, 1073741824,
                          -1073741825, 123456789, -98765, 65535,      32768,           -32769,
                          255,         -256,      127,    -128};
  const qmath::FixedMultiplier ms[] = {{1 << 30, 1},  {2147483647, 1}, {2147483647, 62},
                                       {1 << 30, 62}, {0, 1},          {1518500250, 31},
                                       {1 << 30, 8},  {1999999999, 20}};
  const int32_t clamps[][3] = {{0, -128, 127}, {-128, -128, 127}, {127, -128, 127}, {5, -3, 90}};
  const int64_t n = static_cast<int64_t>(std::size(accs));
  for (const auto& c : clamps) {
    Bytes got, want;
    for (const auto& m : ms) {
      for (const int32_t offset : {0, -7, 3}) {
        // Offsets keep acc + offset in int32, as the callers prove.
        std::vector<int32_t> acc;
        for (const int32_t a : accs) {
          acc.push_back(a > 2147483647 - 8 || a < -2147483647 + 8 ? a - (a > 0 ? 8 : -8) : a);
        }
        Bytes y(static_cast<size_t>(n));
        k::detail::requantize_row(acc.data(), n, offset, m, c[0], c[1], c[2], y.data());
        got.insert(got.end(), y.begin(), y.end());
        for (int64_t i = 0; i < n; ++i)
          want.push_back(rq(int64_t{acc[i]} + offset, m, c[0], c[1], c[2]));
      }
    }
    const std::string name = "requantize_row/zp" + std::to_string(c[0]) + "/" +
                             std::to_string(c[1]) + ".." + std::to_string(c[2]);
    report(name.c_str(), got, got, want);
  }
}

void matmul_cases() {
  // More than one block of 128 rows; more than one chunk of output
  // channels (a tail chunk of 16, and one of 6 that ends inside a packed
  // panel); and five blocks, where the channels are not cut.
  struct QGemmCase {
    int64_t rows, n, k;
  };
  for (const QGemmCase& c : {QGemmCase{150, 11, 19}, QGemmCase{150, 400, 19},
                             QGemmCase{20, 390, 33}, QGemmCase{600, 7, 5}}) {
    k::QGemmParams p;
    p.rows = c.rows;
    p.n = c.n;
    p.k = c.k;
    p.a_zero_point = 12;
    p.y_zero_point = -3;
    const Bytes a = codes(p.rows * p.k), w = codes(p.n * p.k);
    const auto b = biases(p.n);
    const auto m = multipliers(p.n);
    Bytes want(static_cast<size_t>(p.rows * p.n)), serial(want.size()), threaded(want.size());
    for (int64_t r = 0; r < p.rows; ++r)
      for (int64_t o = 0; o < p.n; ++o) {
        int64_t acc = b[o];
        for (int64_t q = 0; q < p.k; ++q)
          acc += int64_t{w[o * p.k + q]} * (a[r * p.k + q] - p.a_zero_point);
        want[r * p.n + o] = rq(acc, m[o], p.y_zero_point);
      }
    const std::string dims =
        std::to_string(c.rows) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k);
    k::qgemm(p, a.data(), w.data(), b.data(), m.data(), serial.data(), k::kSerial);
    k::qgemm(p, a.data(), w.data(), b.data(), m.data(), threaded.data(), kThreads);
    report(("qgemm/" + dims).c_str(), serial, threaded, want);
    Bytes packed(static_cast<size_t>(k::packed_weight_bytes(p.n, p.k)));
    std::vector<int32_t> offset(static_cast<size_t>(p.n));
    k::pack_qgemm_weights(k::QGemmShape{p.n, p.k, 0}, w.data(), b.data(), p.a_zero_point,
                          packed.data(), offset.data());
    k::qgemm_packed(p, a.data(), packed.data(), offset.data(), m.data(), serial.data(), k::kSerial);
    k::qgemm_packed(p, a.data(), packed.data(), offset.data(), m.data(), threaded.data(), kThreads);
    report(("qgemm_packed_rows/" + dims).c_str(), serial, threaded, want);
  }
  // Batch broadcasting; then rows wide enough for NEON's 16 columns, with
  // a tail, at the extreme zero points.
  struct MatMulCase {
    const char* name;
    int64_t m, k, n;
    int32_t a_zero_point, b_zero_point;
  };
  for (const MatMulCase& mc : {MatMulCase{"qmatmul/broadcast", 5, 7, 4, 3, -2},
                               MatMulCase{"qmatmul/wide", 3, 23, 37, -128, 127}}) {
    k::QMatMulParams p;
    p.a_batch = {3, 1};
    p.b_batch = {1, 2};
    p.batch = {3, 2};
    p.m = mc.m;
    p.k = mc.k;
    p.n = mc.n;
    p.a_zero_point = mc.a_zero_point;
    p.b_zero_point = mc.b_zero_point;
    p.y_zero_point = 1;
    p.multiplier = multipliers(1)[0];
    const Bytes a = codes(3 * p.m * p.k), b = codes(2 * p.k * p.n);
    Bytes want(static_cast<size_t>(6 * p.m * p.n)), serial(want.size()), threaded(want.size());
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 2; ++j)
        for (int64_t r = 0; r < p.m; ++r)
          for (int64_t c = 0; c < p.n; ++c) {
            int64_t acc = 0;
            for (int64_t q = 0; q < p.k; ++q) {
              acc += int64_t{a[(i * p.m + r) * p.k + q] - p.a_zero_point} *
                     (b[(j * p.k + q) * p.n + c] - p.b_zero_point);
            }
            want[((i * 2 + j) * p.m + r) * p.n + c] = rq(acc, p.multiplier, p.y_zero_point);
          }
    k::qmatmul(p, a.data(), b.data(), serial.data(), k::kSerial);
    k::qmatmul(p, a.data(), b.data(), threaded.data(), kThreads);
    report(mc.name, serial, threaded, want);
  }
}

void elementwise_cases() {
  // A (4, 1, 3) with B (5, 1): Y (4, 5, 3).
  const k::BroadcastShapes s{{4, 1, 3}, {5, 1}, {4, 5, 3}};
  const Bytes a = codes(12), b = codes(5);
  auto at = [&](int64_t i, int64_t j, int64_t l) {
    return std::pair<int8_t, int8_t>{a[i * 3 + l], b[j]};
  };
  qmath::AddParams ap;
  ap.a_zero_point = 4;
  ap.b_zero_point = -6;
  ap.out_zero_point = 2;
  ap.a = {1500000000, 31};
  ap.b = {1200000000, 32};
  ap.out = {1300000000, 22};
  k::QMulParams mp;
  mp.a_zero_point = 1;
  mp.b_zero_point = -1;
  mp.y_zero_point = 3;
  mp.multiplier = {1400000000, 38};
  for (int op = 0; op < 3; ++op) {
    Bytes want(60), serial(60), threaded(60);
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 5; ++j)
        for (int64_t l = 0; l < 3; ++l) {
          const auto [u, v] = at(i, j, l);
          want[(i * 5 + j) * 3 + l] = op < 2 ? static_cast<int8_t>(qmath::add(u, v, ap, op == 1))
                                             : rq((u - mp.a_zero_point) * (v - mp.b_zero_point),
                                                  mp.multiplier, mp.y_zero_point);
        }
    for (const k::TaskRunner* r : {&k::kSerial, &kThreads}) {
      Bytes& y = r == &k::kSerial ? serial : threaded;
      if (op < 2) {
        k::qadd(s, ap, op == 1, a.data(), b.data(), y.data(), *r);
      } else {
        k::qmul(s, mp, a.data(), b.data(), y.data(), *r);
      }
    }
    report(op == 0 ? "qadd" : op == 1 ? "qsub" : "qmul", serial, threaded, want);
  }
}

// Rows long enough for NEON's eight lanes, with tails: two tensors of one
// shape, B broadcast along the row (step 0) and across rows, A broadcast
// across rows; extreme zero points, and multipliers that saturate.
void elementwise_row_cases() {
  struct Case {
    const char* name;
    k::BroadcastShapes s;
  };
  const Case cases[] = {{"same", {{3, 37}, {3, 37}, {3, 37}}},
                        {"row_scalar", {{3, 37}, {3, 1}, {3, 37}}},
                        {"a_rows", {{1, 37}, {3, 37}, {3, 37}}},
                        {"b_rows", {{2, 3, 19}, {19}, {2, 3, 19}}},
                        // Dims that merge (broadcast_binary's rows): a
                        // per-channel scale, one broadcast across channels
                        // only, a scalar A, and a size-1 dim in between.
                        {"channel_scale", {{2, 3, 4, 5}, {3, 1, 1}, {2, 3, 4, 5}}},
                        {"across_channels", {{2, 1, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}}},
                        {"a_scale", {{1, 3, 1, 1}, {2, 3, 4, 5}, {2, 3, 4, 5}}},
                        {"unit_dim", {{2, 3, 1, 5}, {2, 3, 1, 5}, {2, 3, 1, 5}}}};
  const std::pair<qmath::AddParams, k::QMulParams> params[] = {
      {{-128, 127, 5, {1500000000, 31}, {1200000000, 32}, {1300000000, 22}, -128, 127},
       {127, -128, -3, -128, 127, {1400000000, 38}}},
      // a and b at the largest scale encode_add gives (0.5), out saturating.
      {{0, 0, -128, {2147483647, 32}, {1073741824, 31}, {2147483647, 2}, -128, 127},
       {0, 0, 0, -20, 90, {2147483647, 1}}}};
  auto index = [](const k::Dims& shape, const k::Dims& y, int64_t flat) {
    // The element of a broadcast operand of `shape` at output index `flat`.
    int64_t at = 0, stride = 1, rest = flat;
    for (size_t d = y.size(); d-- > 0;) {
      const int64_t i = rest % y[d];
      rest /= y[d];
      const size_t back = y.size() - 1 - d;
      if (back < shape.size()) {
        const int64_t n = shape[shape.size() - 1 - back];
        at += (n == 1 ? 0 : i) * stride;
        stride *= n;
      }
    }
    return at;
  };
  for (const Case& c : cases) {
    int64_t na = 1, nb = 1, ny = 1;
    for (int64_t d : c.s.a) na *= d;
    for (int64_t d : c.s.b) nb *= d;
    for (int64_t d : c.s.y) ny *= d;
    const Bytes a = codes(na), b = codes(nb);
    for (size_t pi = 0; pi < std::size(params); ++pi) {
      const auto& [ap2, mp2] = params[pi];
      for (int op = 0; op < 3; ++op) {
        Bytes want(static_cast<size_t>(ny)), serial(want.size()), threaded(want.size());
        for (int64_t i = 0; i < ny; ++i) {
          const int8_t u = a[static_cast<size_t>(index(c.s.a, c.s.y, i))];
          const int8_t v = b[static_cast<size_t>(index(c.s.b, c.s.y, i))];
          want[static_cast<size_t>(i)] =
              op < 2 ? static_cast<int8_t>(qmath::add(u, v, ap2, op == 1))
                     : static_cast<int8_t>(
                           qmath::requantize((u - mp2.a_zero_point) * (v - mp2.b_zero_point),
                                             mp2.multiplier, mp2.y_zero_point, mp2.qmin, mp2.qmax));
        }
        for (const k::TaskRunner* r : {&k::kSerial, &kThreads}) {
          Bytes& y = r == &k::kSerial ? serial : threaded;
          if (op < 2) {
            k::qadd(c.s, ap2, op == 1, a.data(), b.data(), y.data(), *r);
          } else {
            k::qmul(c.s, mp2, a.data(), b.data(), y.data(), *r);
          }
        }
        const std::string name = std::string(op == 0   ? "qadd/"
                                             : op == 1 ? "qsub/"
                                                       : "qmul/") +
                                 c.name + "/" + std::to_string(pi);
        report(name.c_str(), serial, threaded, want);
        // The same through a table of every result (kernels::PairTable).
        auto table = std::make_unique<k::PairTable>();
        if (op < 2) {
          k::qadd_table(ap2, op == 1, *table);
        } else {
          k::qmul_table(mp2, *table);
        }
        for (const k::TaskRunner* r : {&k::kSerial, &kThreads}) {
          Bytes& y = r == &k::kSerial ? serial : threaded;
          std::fill(y.begin(), y.end(), int8_t{0});
          k::pair_lookup(c.s, *table, a.data(), b.data(), y.data(), *r);
        }
        report((name + "/table").c_str(), serial, threaded, want);
      }
    }
  }
}

void pool_cases() {
  k::PoolParams p;
  p.planes = 6;
  p.in = {1, 9, 8};
  p.kernel = {1, 3, 3};
  p.stride = {1, 2, 2};
  p.pad_begin = {0, 1, 1};
  p.pad_end = {0, 1, 0};
  p.out = {1, 5, 4};
  p.taps = 9;
  p.x_zero_point = -4;
  p.y_zero_point = 6;
  for (int include = 0; include < 2; ++include) {
    p.include_pad = include == 1;
    const Bytes x = codes(p.planes * 72);
    const auto m = multipliers(p.taps + 1);
    Bytes want(static_cast<size_t>(p.planes * 20)), serial(want.size()), threaded(want.size());
    for (int64_t q = 0; q < p.planes; ++q)
      for (int64_t i = 0; i < 5; ++i)
        for (int64_t j = 0; j < 4; ++j) {
          int64_t acc = 0, n = 0;
          for (int64_t u = 0; u < 3; ++u)
            for (int64_t v = 0; v < 3; ++v) {
              const int64_t r = i * 2 - 1 + u, c = j * 2 - 1 + v;
              const bool inside = r >= 0 && r < 9 && c >= 0 && c < 8;
              const bool padded = r >= -1 && r < 10 && c >= -1 && c < 8;
              if (inside) acc += x[q * 72 + r * 8 + c] - p.x_zero_point;
              if (p.include_pad ? padded : inside) ++n;
            }
          want[q * 20 + i * 4 + j] = rq(acc, m[n], p.y_zero_point);
        }
    k::qaverage_pool(p, x.data(), m.data(), serial.data(), k::kSerial);
    k::qaverage_pool(p, x.data(), m.data(), threaded.data(), kThreads);
    report(include ? "qaverage_pool/include_pad" : "qaverage_pool", serial, threaded, want);
  }
  k::GlobalPoolParams g;
  g.planes = 5;
  g.size = 49;
  g.x_zero_point = 9;
  g.y_zero_point = -2;
  g.multiplier = multipliers(1)[0];
  const Bytes x = codes(5 * 49);
  Bytes want(5), serial(5), threaded(5);
  for (int64_t q = 0; q < 5; ++q) {
    int64_t acc = 0;
    for (int64_t i = 0; i < 49; ++i) acc += x[q * 49 + i] - g.x_zero_point;
    want[q] = rq(acc, g.multiplier, g.y_zero_point);
  }
  k::qglobal_average_pool(g, x.data(), serial.data(), k::kSerial);
  k::qglobal_average_pool(g, x.data(), threaded.data(), kThreads);
  report("qglobal_average_pool", serial, threaded, want);
}

void table_cases() {
  {
    // Inputs (2, 3, 4) and (2, 1, 4) along axis 1.
    const Bytes x0 = codes(24), x1 = codes(8);
    const k::ConcatInput in[] = {{x0.data(), 3, -5, {1500000000, 31}},
                                 {x1.data(), 1, 7, {1100000000, 30}}};
    const k::ConcatParams p{2, 4, 3};
    Bytes want(32), y(32);
    for (int64_t o = 0; o < 2; ++o)
      for (int64_t a = 0; a < 4; ++a)
        for (int64_t i = 0; i < 4; ++i) {
          const k::ConcatInput& src = a < 3 ? in[0] : in[1];
          const int64_t row = a < 3 ? a : 0, dim = a < 3 ? 3 : 1;
          want[(o * 4 + a) * 4 + i] = rq(src.data[(o * dim + row) * 4 + i] - src.zero_point,
                                         src.multiplier, p.y_zero_point);
        }
    k::qconcat(p, in, 2, y.data());
    report("qconcat", y, y, want);
  }
  {
    // Chunks of 120 and 80 codes (two 64-code blocks of the VBMI loop and
    // tails): inputs (2, 3, 40) and (2, 2, 40) along axis 1.
    const int64_t inner = 40, outer = 2;
    const Bytes x0 = codes(outer * 3 * inner), x1 = codes(outer * 2 * inner);
    const k::ConcatInput in[] = {{x0.data(), 3, 100, {1800000000, 31}},
                                 {x1.data(), 2, -128, {1100000000, 31}}};
    const k::ConcatParams p{outer, inner, -7};
    Bytes want(static_cast<size_t>(outer * 5 * inner)), y(want.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t a = 0; a < 5; ++a)
        for (int64_t i = 0; i < inner; ++i) {
          const k::ConcatInput& src = a < 3 ? in[0] : in[1];
          const int64_t row = a < 3 ? a : a - 3, dim = a < 3 ? 3 : 2;
          want[static_cast<size_t>((o * 5 + a) * inner + i)] =
              rq(src.data[(o * dim + row) * inner + i] - src.zero_point, src.multiplier,
                 p.y_zero_point);
        }
    k::qconcat(p, in, 2, y.data());
    report("qconcat/long", y, y, want);
  }
  {
    std::array<int8_t, 256> table{};
    for (int i = 0; i < 256; ++i) table[static_cast<size_t>(i)] = static_cast<int8_t>(127 - i);
    // Every code, then random ones (a tail past the 64-code blocks).
    Bytes x = codes(1000);
    for (int c = -128; c <= 127; ++c) x[static_cast<size_t>(c + 128)] = static_cast<int8_t>(c);
    Bytes want(1000), serial(1000), threaded(1000);
    for (size_t i = 0; i < x.size(); ++i) want[i] = table[static_cast<size_t>(x[i] + 128)];
    k::qlookup(table, x.data(), 1000, serial.data(), k::kSerial);
    k::qlookup(table, x.data(), 1000, threaded.data(), kThreads);
    report("qlookup", serial, threaded, want);
  }
  {
    // X (3, 6, 5), softmax along the middle axis.
    std::array<int32_t, 256> e{};
    for (int d = 0; d < 256; ++d) e[static_cast<size_t>(d)] = (1 << 20) >> (d / 16);
    const Bytes x = codes(90);
    Bytes want(90), serial(90), threaded(90), row(6), out(6);
    for (int64_t o = 0; o < 3; ++o)
      for (int64_t i = 0; i < 5; ++i) {
        for (int64_t a = 0; a < 6; ++a) row[a] = x[(o * 6 + a) * 5 + i];
        qmath::softmax_row(row.data(), out.data(), 6, e);
        for (int64_t a = 0; a < 6; ++a) want[(o * 6 + a) * 5 + i] = out[a];
      }
    const k::SoftmaxParams p{3, 6, 5};
    k::qsoftmax(p, e, x.data(), serial.data(), k::kSerial);
    k::qsoftmax(p, e, x.data(), threaded.data(), kThreads);
    report("qsoftmax/axis1", serial, threaded, want);
  }
}

// Row-major offset of `idx` in `dims`.
int64_t offset_of(const k::Dims& dims, const k::Dims& idx) {
  int64_t off = 0;
  for (size_t d = 0; d < dims.size(); ++d) off = off * dims[d] + idx[d];
  return off;
}

// Calls fn(idx) for every multi-index of `dims` in row-major order.
template <typename Fn>
void for_each_index(const k::Dims& dims, Fn fn) {
  k::Dims idx(dims.size(), 0);
  if (k::product(dims) == 0) return;
  for (;;) {
    fn(idx);
    size_t d = dims.size();
    while (d > 0 && ++idx[d - 1] == dims[d - 1]) idx[--d] = 0;
    if (d == 0) return;
  }
}

// A view against its definition y[idx] = x[source(idx)], elements of `width` bytes.
template <typename Source>
void view_case(const char* name, const k::StridedView& v, const k::Dims& x_dims, size_t width,
               Source source) {
  const Bytes x = codes(k::product(x_dims) * static_cast<int64_t>(width));
  const size_t n = static_cast<size_t>(k::product(v.dims)) * width;
  Bytes want(n), serial(n), threaded(n);
  int64_t o = 0;
  for_each_index(v.dims, [&](const k::Dims& idx) {
    const int64_t s = offset_of(x_dims, source(idx));
    for (size_t b = 0; b < width; ++b) want[o * width + b] = x[s * width + b];
    ++o;
  });
  k::copy_view(v, width, x.data(), serial.data(), k::kSerial);
  k::copy_view(v, width, x.data(), threaded.data(), kThreads);
  report(name, serial, threaded, want);
}

int64_t reflect(int64_t j, int64_t dim) {
  while (j < 0 || j >= dim) j = j < 0 ? -j : 2 * (dim - 1) - j;
  return j;
}

void movement_cases() {
  // Large enough for the runner to split it across threads.
  const k::Dims big{64, 40, 30};
  view_case("transpose/int8", k::transpose_view(big, {2, 0, 1}), big, 1, [](const k::Dims& i) {
    return k::Dims{i[1], i[2], i[0]};
  });
  view_case("transpose/float32", k::transpose_view({2, 3, 4}, {1, 2, 0}), {2, 3, 4}, 4,
            [](const k::Dims& i) {
              return k::Dims{i[2], i[0], i[1]};
            });
  // Rows 4, 2, 0 (ONNX clamps end -10 to before the first) and columns 1, 3.
  const std::vector<k::SliceAxis> ranges{k::slice_axis(5, 4, -10, -2), k::slice_axis(6, 1, 5, 2)};
  if (ranges[0].length != 3 || ranges[1].length != 2) {
    std::printf("slice_axis clamps wrongly\n");
    ++failures;
  }
  view_case("slice/negative_step", k::slice_view({5, 6}, ranges), {5, 6}, 1, [](const k::Dims& i) {
    return k::Dims{4 - 2 * i[0], 1 + 2 * i[1]};
  });
  view_case("expand", k::expand_view({3, 1}, {2, 3, 4}), {3, 1}, 2, [](const k::Dims& i) {
    return k::Dims{i[1], 0};
  });
  view_case("tile", k::tile_view({2, 3}, {2, 2}), {2, 3}, 1, [](const k::Dims& i) {
    return k::Dims{i[1], i[3]};
  });
  // (1, 8, 2, 3) with block 2: C' = 2.
  const k::Dims d2s{1, 8, 2, 3};
  view_case("depth_to_space/dcr", k::depth_to_space_view(d2s, 2, false), d2s, 1,
            [](const k::Dims& v) {  // v: (n, c, h, i, w, j) over (1, 2, 2, 2, 3, 2)
              return k::Dims{0, (v[3] * 2 + v[5]) * 2 + v[1], v[2], v[4]};
            });
  view_case("depth_to_space/crd", k::depth_to_space_view(d2s, 2, true), d2s, 1,
            [](const k::Dims& v) {
              return k::Dims{0, v[1] * 4 + v[3] * 2 + v[5], v[2], v[4]};
            });
  const k::Dims s2d{1, 2, 4, 6};
  view_case("space_to_depth", k::space_to_depth_view(s2d, 2), s2d, 1,
            [](const k::Dims& v) {  // v: (n, i, j, c, h, w) over (1, 2, 2, 2, 2, 3)
              return k::Dims{0, v[3], v[4] * 2 + v[1], v[5] * 2 + v[2]};
            });
  {
    // x (2, 4, 3), along axis 1 at 2, 0, 3, 2.
    const Bytes x = codes(24);
    const int64_t at[] = {2, 0, 3, 2};
    Bytes want(24), serial(24), threaded(24);
    for (int64_t o = 0; o < 2; ++o)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t i = 0; i < 3; ++i) want[(o * 4 + j) * 3 + i] = x[(o * 4 + at[j]) * 3 + i];
    k::gather({2, 4, 3, 1}, at, 4, x.data(), serial.data(), k::kSerial);
    k::gather({2, 4, 3, 1}, at, 4, x.data(), threaded.data(), kThreads);
    report("gather/axis1", serial, threaded, want);
  }
  // Along the last axis with index j reading j / s (a nearest upsampling by
  // s, repeated rather than gathered), bytes and 4-byte elements; and a map
  // that is j / 2 but for one index, which must gather.
  for (const int64_t s : {2, 3}) {
    for (const size_t width : {size_t{1}, size_t{4}}) {
      for (const bool broken : {false, true}) {
        if (broken && s == 3) continue;
        const int64_t outer = 5, axis = 7, count = axis * s;
        std::vector<int64_t> at(static_cast<size_t>(count));
        for (int64_t j = 0; j < count; ++j) at[static_cast<size_t>(j)] = j / s;
        if (broken) at[3] = 6;
        const Bytes x = codes(outer * axis * static_cast<int64_t>(width));
        Bytes want(static_cast<size_t>(outer * count) * width), serial(want.size()),
            threaded(want.size());
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t j = 0; j < count; ++j)
            for (size_t b = 0; b < width; ++b)
              want[static_cast<size_t>(o * count + j) * width + b] =
                  x[static_cast<size_t>(o * axis + at[static_cast<size_t>(j)]) * width + b];
        const k::GatherParams gp{outer, axis, 1, width};
        k::gather(gp, at.data(), count, x.data(), serial.data(), k::kSerial);
        k::gather(gp, at.data(), count, x.data(), threaded.data(), kThreads);
        const std::string name = "gather/repeat" + std::to_string(s) + "/w" +
                                 std::to_string(width) + (broken ? "/not" : "");
        report(name.c_str(), serial, threaded, want);
      }
    }
  }
  const char* pad_names[] = {"pad/constant", "pad/edge", "pad/reflect", "pad/wrap"};
  const k::PadMode modes[] = {k::PadMode::kConstant, k::PadMode::kEdge, k::PadMode::kReflect,
                              k::PadMode::kWrap};
  for (int m = 0; m < 4; ++m) {
    // x (3, 4) padded by (1, 5) before and (2, 1) after: wider than x on
    // the second axis, so reflect and wrap go round more than once.
    const k::Dims x_dims{3, 4}, y_dims{6, 10};
    const Bytes x = codes(12);
    const int8_t fill = 77;
    Bytes want(60), serial(60), threaded(60);
    for (int64_t r = 0; r < 6; ++r)
      for (int64_t c = 0; c < 10; ++c) {
        int64_t i = r - 1, j = c - 5;
        const bool outside = i < 0 || i >= 3 || j < 0 || j >= 4;
        if (modes[m] == k::PadMode::kEdge) {
          i = std::clamp<int64_t>(i, 0, 2), j = std::clamp<int64_t>(j, 0, 3);
        } else if (modes[m] == k::PadMode::kReflect) {
          i = reflect(i, 3), j = reflect(j, 4);
        } else if (modes[m] == k::PadMode::kWrap) {
          i = (i % 3 + 3) % 3, j = (j % 4 + 4) % 4;
        }
        want[r * 10 + c] = modes[m] == k::PadMode::kConstant && outside ? fill : x[i * 4 + j];
      }
    k::PadParams p{x_dims, y_dims, {}};
    p.maps.push_back(k::pad_axis_map(3, 1, 6, modes[m]));
    p.maps.push_back(k::pad_axis_map(4, 5, 10, modes[m]));
    k::pad(p, 1, x.data(), &fill, serial.data(), k::kSerial);
    k::pad(p, 1, x.data(), &fill, threaded.data(), kThreads);
    report(pad_names[m], serial, threaded, want);
  }
  {
    // 3x3 windows, stride 2, one row and column of padding before: the
    // codes' max over the taps inside x; argmax is the first maximum.
    k::PoolParams p;
    p.planes = 4;
    p.in = {1, 7, 6};
    p.kernel = {1, 3, 3};
    p.stride = {1, 2, 2};
    p.pad_begin = {0, 1, 1};
    p.pad_end = {0, 1, 1};
    p.out = {1, 4, 3};
    const Bytes x = codes(4 * 42, -128, -120);  // few values: ties are common
    Bytes want(48), serial(48), threaded(48);
    std::vector<int64_t> want_at(48), at(48);
    for (int64_t q = 0; q < 4; ++q)
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 3; ++j) {
          int8_t best = -128;
          int64_t first = -1;
          for (int64_t u = 0; u < 3; ++u)
            for (int64_t v = 0; v < 3; ++v) {
              const int64_t r = i * 2 - 1 + u, c = j * 2 - 1 + v;
              if (r < 0 || r >= 7 || c < 0 || c >= 6) continue;
              if (first < 0 || x[q * 42 + r * 6 + c] > best) {
                best = x[q * 42 + r * 6 + c];
                first = r * 6 + c;
              }
            }
          want[q * 12 + i * 3 + j] = best;
          want_at[q * 12 + i * 3 + j] = first;
        }
    k::max_pool(p, x.data(), serial.data(), at.data(), k::kSerial);
    k::max_pool<int8_t>(p, x.data(), threaded.data(), nullptr, kThreads);
    if (at != want_at) {
      std::printf("max_pool: argmax differs\n");
      ++failures;
    }
    report("max_pool/int8", serial, threaded, want);
  }
}

}  // namespace

int main() {
  gemm_cases();
  requantize_cases();
  conv_cases();
  im2col_box_cases();
  matmul_cases();
  elementwise_cases();
  elementwise_row_cases();
  pool_cases();
  table_cases();
  movement_cases();
  if (failures != 0) std::printf("%d case(s) differ from the definition\n", failures);
  return failures == 0 ? 0 : 1;
}
