#include "kernels.hpp"

#include <algorithm>
#include <cmath>

namespace acme_npu {
namespace {

size_t dim(const Shape& s, size_t i) { return static_cast<size_t>(s[i]); }

size_t count(const Shape& s) {
  size_t n = 1;
  for (int64_t d : s) n *= static_cast<size_t>(d);
  return n;
}

}  // namespace

void gemm(const Attrs& attrs, const Buffer& a, const Buffer& b, const Buffer* c, Buffer& out) {
  const size_t m = dim(out.shape, 0), n = dim(out.shape, 1);
  const size_t k = dim(a.shape, attrs.trans_a ? 0 : 1);
  const float alpha = static_cast<float>(attrs.alpha);
  const float beta = static_cast<float>(attrs.beta);
  // Element (i, j) of op(X) as strides, so one loop serves every transpose.
  const size_t a_row = attrs.trans_a ? 1 : k, a_col = attrs.trans_a ? m : 1;
  const size_t b_row = attrs.trans_b ? 1 : n, b_col = attrs.trans_b ? k : 1;
  // C broadcasts along any dim of size 1, a missing dim counting as 1.
  size_t c_row = 0, c_col = 0;
  if (c != nullptr) {
    const Shape& cs = c->shape;
    const size_t cols = cs.empty() ? 1 : dim(cs, cs.size() - 1);
    const size_t rows = cs.size() == 2 ? dim(cs, 0) : 1;
    c_col = cols == 1 ? 0 : 1;
    c_row = rows == 1 ? 0 : cols;
  }
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      // float accumulation in k order: the result a plain C loop gives, so
      // it is reproducible on any compiler without fast-math.
      float acc = 0.0f;
      for (size_t p = 0; p < k; ++p) {
        acc += a.data[i * a_row + p * a_col] * b.data[p * b_row + j * b_col];
      }
      float y = alpha * acc;
      if (c != nullptr) y += beta * c->data[i * c_row + j * c_col];
      out.data[i * n + j] = y;
    }
  }
}

void matmul(const Buffer& a, const Buffer& b, Buffer& out) {
  Attrs plain;  // MatMul is Gemm without C, alpha 1 and no transposes
  gemm(plain, a, b, nullptr, out);
}

void add(const Buffer& a, const Buffer& b, Buffer& out) {
  // infer_shape() allows only "same shape" or "one is the other's trailing
  // dims", so the smaller operand simply repeats along the output.
  const Buffer& big = a.data.size() >= b.data.size() ? a : b;
  const Buffer& small = &big == &a ? b : a;
  const size_t n = out.data.size(), period = small.data.size();
  if (period == 0) return;  // then n == 0 as well
  // x + y == y + x exactly in IEEE arithmetic, so operand order is free.
  for (size_t i = 0; i < n; ++i) out.data[i] = big.data[i] + small.data[i % period];
}

void relu(const Buffer& x, Buffer& out) {
  for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = x.data[i] > 0.0f ? x.data[i] : 0.0f;
}

void softmax_last_axis(const Buffer& x, Buffer& out) {
  const size_t len = x.shape.empty() ? 1 : dim(x.shape, x.shape.size() - 1);
  if (len == 0) return;
  const size_t rows = count(x.shape) / len;
  for (size_t r = 0; r < rows; ++r) {
    const float* px = x.data.data() + r * len;
    float* py = out.data.data() + r * len;
    double mx = px[0];
    for (size_t j = 1; j < len; ++j) mx = std::max(mx, double{px[j]});
    // exp, sum and divide in double and round once: that is how a numpy
    // float64 golden is computed, so short rows match it bit for bit.
    double sum = 0.0;
    for (size_t j = 0; j < len; ++j) sum += std::exp(double{px[j]} - mx);
    for (size_t j = 0; j < len; ++j) {
      py[j] = static_cast<float>(std::exp(double{px[j]} - mx) / sum);
    }
  }
}

}  // namespace acme_npu
