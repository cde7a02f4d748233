// qgemm_int8's portable implementation, the list of implementations, and
// the run-time choice among them.
#include "eulernpu/kernels/int8_gemm.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "int8_gemm_variants.hpp"
#include "requantize_row.hpp"

namespace eulernpu::kernels {

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
    requantize_row(acc.data(), s.columns, offset, m[o], out.y_zero_point, out.qmin, out.qmax,
                   y + o * s.columns);
  }
}

bool avx512_loops_allowed() {
  static const bool allowed = [] {
    const char* v = std::getenv("EULERNPU_CPU_REF_ISA");
    return v == nullptr || (std::strcmp(v, "scalar") != 0 && std::strcmp(v, "avx2") != 0);
  }();
  return allowed;
}

}  // namespace detail

namespace {

bool always() { return true; }

const Int8GemmVariant* find_variant(Int8GemmIsa isa) {
  for (const Int8GemmVariant& v : int8_gemm_variants()) {
    if (v.isa == isa) return &v;
  }
  return nullptr;
}

}  // namespace

const std::vector<Int8GemmVariant>& int8_gemm_variants() {
  static const std::vector<Int8GemmVariant> list = [] {
    std::vector<Int8GemmVariant> v{
        {Int8GemmIsa::kScalar, "scalar", &always, &detail::qgemm_int8_scalar}};
#if EULERNPU_KERNELS_HAVE_NEON
    v.push_back({Int8GemmIsa::kNeon, "neon", &always, &detail::qgemm_int8_neon});
#endif
#if EULERNPU_KERNELS_HAVE_AVX2
    v.push_back({Int8GemmIsa::kAvx2, "avx2", &detail::cpu_has_avx2, &detail::qgemm_int8_avx2});
#endif
#if EULERNPU_KERNELS_HAVE_AVX512_VNNI
    v.push_back({Int8GemmIsa::kAvx512Vnni, "avx512_vnni", &detail::cpu_has_avx512_vnni,
                 &detail::qgemm_int8_avx512_vnni});
#endif
    return v;
  }();
  return list;
}

Int8GemmIsa int8_gemm_choose(const char* name) {
  // A name the CPU cannot run is ignored: the variable picks among equals
  // (for comparing them, or ruling one out), never a crash.
  Int8GemmIsa best = Int8GemmIsa::kScalar;
  for (const Int8GemmVariant& v : int8_gemm_variants()) {
    if (!v.supported()) continue;
    if (name != nullptr && std::strcmp(name, v.name) == 0) return v.isa;
    best = v.isa;
  }
  return best;
}

bool int8_gemm_isa_supported(Int8GemmIsa isa) {
  if (isa == Int8GemmIsa::kAuto) return true;
  const Int8GemmVariant* v = find_variant(isa);
  return v != nullptr && v->supported();
}

Int8GemmIsa int8_gemm_resolve(Int8GemmIsa isa) {
  if (isa == Int8GemmIsa::kAuto) {
    static const Int8GemmIsa best = int8_gemm_choose(std::getenv("EULERNPU_CPU_REF_ISA"));
    return best;
  }
  return int8_gemm_isa_supported(isa) ? isa : Int8GemmIsa::kScalar;
}

const char* int8_gemm_isa_name(Int8GemmIsa isa) {
  if (isa == Int8GemmIsa::kAuto) return "auto";
  const Int8GemmVariant* v = find_variant(isa);
  if (v != nullptr) return v->name;
  switch (isa) {
    case Int8GemmIsa::kNeon:
      return "neon";
    case Int8GemmIsa::kAvx2:
      return "avx2";
    case Int8GemmIsa::kAvx512Vnni:
      return "avx512_vnni";
    default:
      return "unknown";
  }
}

void qgemm_int8(const QGemmShape& s, const int8_t* w, const int8_t* x, const int32_t* bias,
                const sdk::qmath::FixedMultiplier* m, const QGemmOutput& out, int8_t* y,
                Int8GemmIsa isa) {
  if (s.rows <= 0 || s.columns <= 0) return;
  // Variants are few; the static list's lookup costs nothing beside a GEMM.
  const Int8GemmVariant* v = find_variant(int8_gemm_resolve(isa));
  (v != nullptr ? v->run : &detail::qgemm_int8_scalar)(s, w, x, bias, m, out, y);
}

}  // namespace eulernpu::kernels
