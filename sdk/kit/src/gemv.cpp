#include "gemv.hpp"

#include <algorithm>
#include <cstring>

#include "eulernpu/sdk/simd_clones.hpp"

namespace eulernpu::kit::gemv {

namespace {

// 16 floats: one AVX-512 register, two AVX2 ones, four SSE ones; each clone
// lowers it to what its target has, with the same IEEE operations (the
// kit's build keeps a multiply and an add apart).
using Lanes = float __attribute__((vector_size(64)));
constexpr int64_t kLanes = 16;

// The lanes' total in the order rows() documents.
[[gnu::always_inline]] inline float total(Lanes v) {
  for (int64_t half = kLanes / 2; half >= 1; half /= 2) {
    for (int64_t l = 0; l < half; ++l) v[l] += v[l + half];
  }
  return v[0];
}

// R rows of B at once, which share each load of A.
template <int R>
[[gnu::always_inline]] inline void dot_rows(const float* a, const float* b, int64_t k_len,
                                            float* y) {
  Lanes acc[R] = {};
  int64_t k = 0;
  for (; k + kLanes <= k_len; k += kLanes) {
    Lanes x;
    std::memcpy(&x, a + k, sizeof x);
    for (int r = 0; r < R; ++r) {
      Lanes w;
      std::memcpy(&w, b + r * k_len + k, sizeof w);
      acc[r] += x * w;
    }
  }
  // The last terms go to the lanes their k gives (k - k0 < 16).
  const int64_t k0 = k;
  for (; k < k_len; ++k) {
    for (int r = 0; r < R; ++r) acc[r][k - k0] += a[k] * b[r * k_len + k];
  }
  for (int r = 0; r < R; ++r) y[r] = total(acc[r]);
}

}  // namespace

EULERNPU_SIMD_CLONES
void rows(const float* a, const float* b, int64_t k_len, int64_t j0, int64_t j1, float* y) {
  int64_t j = j0;
  for (; j + 4 <= j1; j += 4) dot_rows<4>(a, b + j * k_len, k_len, y + j);
  for (; j < j1; ++j) dot_rows<1>(a, b + j * k_len, k_len, y + j);
}

EULERNPU_SIMD_CLONES
void columns(const float* a, const float* b, int64_t k_len, int64_t n, int64_t j0, int64_t j1,
             float* y) {
  // 64 outputs in registers across every k, then the rest 16 and one at a
  // time; a term's place in its sum never depends on which of these runs.
  int64_t j = j0;
  for (; j + 4 * kLanes <= j1; j += 4 * kLanes) {
    Lanes acc[4] = {};
    for (int64_t k = 0; k < k_len; ++k) {
      const float x = a[k];
      for (int v = 0; v < 4; ++v) {
        Lanes w;
        std::memcpy(&w, b + k * n + j + v * kLanes, sizeof w);
        acc[v] += x * w;
      }
    }
    std::memcpy(y + j, acc, sizeof acc);
  }
  for (; j + kLanes <= j1; j += kLanes) {
    Lanes acc = {};
    for (int64_t k = 0; k < k_len; ++k) {
      Lanes w;
      std::memcpy(&w, b + k * n + j, sizeof w);
      acc += a[k] * w;
    }
    std::memcpy(y + j, &acc, sizeof acc);
  }
  for (; j < j1; ++j) {
    float acc = 0.0f;
    for (int64_t k = 0; k < k_len; ++k) acc += a[k] * b[k * n + j];
    y[j] = acc;
  }
}

}  // namespace eulernpu::kit::gemv
