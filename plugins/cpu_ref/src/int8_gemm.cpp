// qgemm_int8's portable implementation and the run-time choice between it
// and the SIMD ones (int8_gemm_avx512_vnni.cpp).
#include "int8_gemm.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace eulernpu::cpu_ref {

namespace detail {

void qgemm_int8_scalar(const QGemmShape& s, const int8_t* w, const int8_t* x, const int32_t* bias,
                       const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out, int8_t* y) {
  std::vector<int32_t> acc(static_cast<size_t>(s.columns));
  for (int64_t o = 0; o < s.rows; ++o) {
    const int8_t* wrow = w + o * s.depth;
    std::fill(acc.begin(), acc.end(), 0);
    int32_t row_sum = 0;
    for (int64_t k = 0; k < s.depth; ++k) {
      const int32_t wk = wrow[k];
      row_sum += wk;
      if (wk == 0) continue;
      const int8_t* xrow = x + k * s.columns;
      // Contiguous multiply-adds on int32: the compiler vectorizes this.
      for (int64_t p = 0; p < s.columns; ++p) acc[static_cast<size_t>(p)] += wk * xrow[p];
    }
    // Σ w·(x − zp) = Σ w·x − zp·Σ w; both terms and their difference stay
    // inside the bound the quantizer proved.
    const int32_t offset = (bias ? bias[o] : 0) - out.x_zero_point * row_sum;
    int8_t* yrow = y + o * s.columns;
    for (int64_t p = 0; p < s.columns; ++p) {
      yrow[p] = static_cast<int8_t>(sdk::qmath::requantize(
          acc[static_cast<size_t>(p)] + offset, m[o], out.y_zero_point, out.qmin, out.qmax));
    }
  }
}

}  // namespace detail

namespace {

bool env_forces_scalar() {
  const char* v = std::getenv("EULERNPU_CPU_REF_ISA");
  return v != nullptr && std::string_view(v) == "scalar";
}

}  // namespace

bool int8_gemm_isa_supported(Int8GemmIsa isa) {
  if (isa == Int8GemmIsa::kAvx512Vnni) {
    static const bool has = detail::cpu_has_avx512_vnni();
    return has;
  }
  return true;
}

Int8GemmIsa int8_gemm_resolve(Int8GemmIsa isa) {
  if (isa == Int8GemmIsa::kAuto) {
    static const Int8GemmIsa best =
        !env_forces_scalar() && int8_gemm_isa_supported(Int8GemmIsa::kAvx512Vnni)
            ? Int8GemmIsa::kAvx512Vnni
            : Int8GemmIsa::kScalar;
    return best;
  }
  return int8_gemm_isa_supported(isa) ? isa : Int8GemmIsa::kScalar;
}

const char* int8_gemm_isa_name(Int8GemmIsa isa) {
  switch (isa) {
    case Int8GemmIsa::kAuto:
      return "auto";
    case Int8GemmIsa::kScalar:
      return "scalar";
    case Int8GemmIsa::kAvx512Vnni:
      return "avx512_vnni";
  }
  return "unknown";
}

void qgemm_int8(const QGemmShape& s, const int8_t* w, const int8_t* x, const int32_t* bias,
                const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out, int8_t* y,
                Int8GemmIsa isa) {
  if (s.rows <= 0 || s.columns <= 0) return;
  if (int8_gemm_resolve(isa) == Int8GemmIsa::kAvx512Vnni) {
    detail::qgemm_int8_avx512_vnni(s, w, x, bias, m, out, y);
  } else {
    detail::qgemm_int8_scalar(s, w, x, bias, m, out, y);
  }
}

}  // namespace eulernpu::cpu_ref
