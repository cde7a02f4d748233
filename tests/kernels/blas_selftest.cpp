// The portable float GEMM that exported bundles compile in place of
// OpenBLAS (sdk/kit/src/blas_portable.cpp), against its contract: each
// element of C is beta·C (0 when beta is 0), then its K products added in
// order, one multiply-add each, with the rounding of that CPU's madd (fused
// on aarch64, where it is one instruction; a multiply then an add
// elsewhere). So the bytes follow from the shapes alone, whichever of its
// loops (4 × 8 NEON blocks, 4 × 4 scalar blocks, column and row tails) and
// whichever build (NEON or not) computed them. Shapes cover every tail,
// both transposes, leading dimensions wider than the matrices, and K past
// one block. Prints `name digest` per case: blas_cross.sh builds this with
// and without NEON for aarch64 and checks the two print the same.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernel_util.hpp"

namespace kit = eulernpu::kit;

namespace {

float madd(float c, float a, float b) {
#if defined(__aarch64__)
  return std::fma(a, b, c);
#else
  return c + a * b;
#endif
}

uint32_t state = 7;
float value() {
  state = state * 1664525u + 1013904223u;
  // Quarter steps in [-4, 4): sums of many are inexact, so the order shows.
  return static_cast<float>(static_cast<int>((state >> 8) % 32) - 16) / 4.0f + 1e-3f;
}

uint64_t digest(const std::vector<float>& v) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the bytes
  for (float f : v) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    for (int i = 0; i < 4; ++i) h = (h ^ ((bits >> (8 * i)) & 0xffu)) * 1099511628211ull;
  }
  return h;
}

// Returns the number of elements that differ from the definition.
int check(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, float beta, int64_t pad) {
  const int64_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
  std::vector<float> a(static_cast<size_t>((ta ? k : m) * lda)),
      b(static_cast<size_t>((tb ? n : k) * ldb)), c(static_cast<size_t>(m * ldc));
  for (auto* v : {&a, &b, &c}) {
    for (float& x : *v) x = value();
  }
  std::vector<float> want = c;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = beta == 0 ? 0.0f : beta * c[static_cast<size_t>(i * ldc + j)];
      for (int64_t p = 0; p < k; ++p) {
        const float x =
            ta ? a[static_cast<size_t>(p * lda + i)] : a[static_cast<size_t>(i * lda + p)];
        const float y =
            tb ? b[static_cast<size_t>(j * ldb + p)] : b[static_cast<size_t>(p * ldb + j)];
        sum = madd(sum, alpha * x, y);
      }
      want[static_cast<size_t>(i * ldc + j)] = sum;
    }
  }
  {
    kit::SerialBlas serial;
    kit::sgemm_f32_serial(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(),
                          ldc);
  }
  int bad = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    if (std::memcmp(&c[i], &want[i], 4) != 0) ++bad;  // the padding too: left as it was
  }
  std::printf("sgemm/%c%c/%lldx%lldx%lld/pad%lld %016" PRIx64 "\n", ta ? 't' : 'n', tb ? 't' : 'n',
              static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
              static_cast<long long>(pad), digest(c));
  if (bad != 0) std::printf("  %d elements differ from the definition\n", bad);
  return bad;
}

}  // namespace

int main() {
  int failures = 0, cases = 0;
  // m: under, at and past the 4-row block; n: past the 8- and 4-column
  // blocks with tails, and past one 256-column block of B; k: 1, under and
  // past the 64-deep block of K.
  const int64_t ms[] = {1, 3, 4, 9};
  const int64_t ns[] = {1, 7, 8, 21, 260};
  const int64_t ks[] = {1, 5, 64, 130};
  for (int64_t m : ms) {
    for (int64_t n : ns) {
      for (int64_t k : ks) {
        const bool ta = (m + k) % 2 == 1, tb = (n + k) % 3 == 0;
        const float beta = (m * n) % 3 == 0 ? 0.0f : 0.5f;
        failures += check(ta, tb, m, n, k, 1.25f, beta, (m + n) % 2) != 0;
        ++cases;
      }
    }
  }
  failures += check(false, false, 5, 12, 0, 1.0f, 2.0f, 1) != 0;  // K = 0: beta·C
  failures += check(true, true, 6, 33, 70, -0.75f, 1.0f, 3) != 0;
  cases += 2;
  if (failures != 0) {
    std::printf("blas_selftest: %d of %d cases differ from the definition\n", failures, cases);
    return 1;
  }
  std::printf("blas_selftest: %d cases, each element as defined\n", cases);
  return 0;
}
