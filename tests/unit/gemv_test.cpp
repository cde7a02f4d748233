// cpu_ref's Gemm and MatMul on one row of A (sdk/kit/src/gemv.hpp): every
// output must be the bytes of the order gemv.hpp documents, whatever the
// thread count and the CPU's vector width, with Gemm's alpha, beta and C.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eulernpu/kit/op_table.hpp"

namespace eulernpu::kit {
namespace gemv_test {
namespace {

// Σ_k a[k] · w(k) as gemv.hpp's rows() adds it: 16 lanes of terms k ≡ l
// (mod 16) in order of k, then the lanes pairwise (l, l+8), (l, l+4), ...
template <typename W>
float lane_sum(const std::vector<float>& a, W w) {
  float lane[16] = {};
  for (size_t k = 0; k < a.size(); ++k) {
    volatile float product = a[k] * w(k);  // two roundings, as the kit's build
    lane[k % 16] += product;
  }
  for (int half = 8; half >= 1; half /= 2) {
    for (int l = 0; l < half; ++l) lane[l] += lane[l + half];
  }
  return lane[0];
}

// Σ_k a[k] · w(k) in order of k (columns()).
template <typename W>
float ordered_sum(const std::vector<float>& a, W w) {
  float acc = 0.0f;
  for (size_t k = 0; k < a.size(); ++k) {
    volatile float product = a[k] * w(k);
    acc += product;
  }
  return acc;
}

std::vector<float> random(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

size_t differing(const std::vector<float>& got, const std::vector<float>& want) {
  size_t differ = got.size() == want.size() ? 0 : got.size() + want.size();
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0) ++differ;
  }
  return differ;
}

std::vector<float> run(const char* op, const nlohmann::json& attrs, std::vector<Buffer> ins,
                       std::vector<int64_t> out_shape, int64_t count, int threads) {
  std::vector<float> y(static_cast<size_t>(count), -1.0f);
  std::vector<Buffer> outs{Buffer{ENP_DTYPE_FLOAT32, std::move(out_shape), y.data()}};
  KernelContext ctx{attrs, ins, outs, 13};
  ctx.threads = threads;
  const OpEntry* entry = find_op("", op, 13);
  EXPECT_NE(entry, nullptr);
  if (entry) entry->kernel(ctx);
  return y;
}

TEST(GemvTest, GemmOfOneRowGivesTheDocumentedSums) {
  std::mt19937 rng(11);
  // K around the 16 lanes, N around the 4-row step and the 64-output block.
  for (int64_t k : {1, 15, 16, 17, 800}) {
    for (int64_t n : {1, 3, 4, 65, 400}) {
      for (bool trans_b : {true, false}) {
        const std::vector<float> a = random(static_cast<size_t>(k), rng);
        const std::vector<float> b = random(static_cast<size_t>(k * n), rng);
        const std::vector<float> c = random(static_cast<size_t>(n), rng);
        const float alpha = 0.75f, beta = -1.5f;
        std::vector<float> want(static_cast<size_t>(n));
        for (int64_t j = 0; j < n; ++j) {
          auto w = [&](size_t kk) {
            return trans_b ? b[static_cast<size_t>(j * k) + kk] : b[kk * n + j];
          };
          const float s = trans_b ? lane_sum(a, w) : ordered_sum(a, w);
          volatile float scaled = alpha * s;
          volatile float bc = beta * c[static_cast<size_t>(j)];
          want[static_cast<size_t>(j)] = scaled + bc;
        }
        const nlohmann::json attrs = {
            {"alpha", alpha}, {"beta", beta}, {"transB", trans_b ? 1 : 0}};
        for (int threads : {1, 2}) {
          std::vector<float> ca = a, cb = b, cc = c;
          std::vector<Buffer> ins{
              Buffer{ENP_DTYPE_FLOAT32, {1, k}, ca.data()},
              Buffer{ENP_DTYPE_FLOAT32,
                     trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, cb.data()},
              Buffer{ENP_DTYPE_FLOAT32, {n}, cc.data()}};
          const std::vector<float> got = run("Gemm", attrs, ins, {1, n}, n, threads);
          EXPECT_EQ(differing(got, want), 0u) << "K " << k << " N " << n << " transB " << trans_b
                                              << ", " << threads << " thread(s)";
        }
      }
    }
  }
}

TEST(GemvTest, MatMulOfOneRowAddsInOrderOfK) {
  std::mt19937 rng(12);
  for (int64_t k : {1, 17, 200}) {
    for (int64_t n : {2, 16, 63, 64, 130}) {
      const std::vector<float> a = random(static_cast<size_t>(k), rng);
      const std::vector<float> b = random(static_cast<size_t>(k * n), rng);
      std::vector<float> want(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) {
        want[static_cast<size_t>(j)] = ordered_sum(a, [&](size_t kk) { return b[kk * n + j]; });
      }
      for (int threads : {1, 2}) {
        std::vector<float> ca = a, cb = b;
        // A as (K), promoted to (1, K) as numpy does.
        std::vector<Buffer> ins{Buffer{ENP_DTYPE_FLOAT32, {k}, ca.data()},
                                Buffer{ENP_DTYPE_FLOAT32, {k, n}, cb.data()}};
        const std::vector<float> got =
            run("MatMul", nlohmann::json::object(), ins, {n}, n, threads);
        EXPECT_EQ(differing(got, want), 0u)
            << "K " << k << " N " << n << ", " << threads << " thread(s)";
      }
    }
  }
}

}  // namespace
}  // namespace gemv_test
}  // namespace eulernpu::kit
