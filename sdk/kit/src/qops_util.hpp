// Validation shared by the lowering checks and the kernels of the ai.eulernpu
// integer ops (kernels_qops.cpp, kernels_qconv.cpp). Each op has one
// function that reads its attributes (from the node at lowering, from
// graph.json at run time) and its operands, and says what is wrong: what
// lowers is what runs, and a corrupt artifact is rejected before any access.
// Value checks (multipliers, accumulator bounds, tables) run on constants at
// lowering and on the actual tensors at run time, so no input ever reaches
// qmath with an argument outside its contract. (Packed weights are the
// exception: the compiler checked their bound before packing, and the
// packed GEMM's sums wrap instead of overflowing.)
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "eulernpu/kernels/int8_gemm_packed.hpp"
#include "eulernpu/kit/errors.hpp"
#include "eulernpu/kit/op_table.hpp"
#include "eulernpu/sdk/qmath.hpp"
#include "operands.hpp"

namespace eulernpu::kit::qops {

namespace qmath = sdk::qmath;
using Dims = std::vector<int64_t>;
using Problem = std::optional<std::string>;

// A node's attributes at lowering time.
struct NodeAttrs {
  const sdk::NodeView& node;
  bool has(const char* name) const { return node.find_attribute(name) != nullptr; }
  int64_t get(const char* name, int64_t fallback) const { return node.attr_int(name, fallback); }
  Dims ints(const char* name, Dims fallback = {}) const {
    return node.attr_ints(name, std::move(fallback));
  }
  std::string str(const char* name, std::string fallback) const {
    return node.attr_string(name, std::move(fallback));
  }
};

// The same attributes as the kernel reads them from graph.json.
struct KernelAttrs {
  const KernelContext& ctx;
  bool has(const char* name) const { return ctx.has_attr(name); }
  int64_t get(const char* name, int64_t fallback) const { return ctx.attr_int(name, fallback); }
  Dims ints(const char* name, Dims fallback = {}) const {
    return ctx.attr_ints(name, std::move(fallback));
  }
  std::string str(const char* name, std::string fallback) const {
    return ctx.attr_string(name, std::move(fallback));
  }
};

inline Problem multiplier_problem(int64_t m, int64_t s, const std::string& what,
                                  int64_t min_shift = 1) {
  if (qmath::is_valid_multiplier(m, s, min_shift)) return std::nullopt;
  return what + " (" + std::to_string(m) + ", " + std::to_string(s) +
         ") is not a fixed-point multiplier (M 0 or in [2^30, 2^31), S in [" +
         std::to_string(min_shift) + ", 62])";
}

inline qmath::FixedMultiplier fixed(int64_t m, int64_t s) {
  return {static_cast<int32_t>(m), static_cast<int32_t>(s)};
}

template <typename A>
Problem zero_point_problem(const A& attrs, const char* name) {
  const int64_t z = attrs.get(name, 0);
  if (z >= -128 && z <= 127) return std::nullopt;
  return std::string(name) + " " + std::to_string(z) + " is outside int8";
}

template <typename A>
Problem clamp_problem(const A& attrs) {
  const int64_t lo = attrs.get("qmin", -128), hi = attrs.get("qmax", 127);
  if (lo >= -128 && hi <= 127 && lo <= hi) return std::nullopt;
  return "qmin " + std::to_string(lo) + " and qmax " + std::to_string(hi) +
         " must satisfy -128 <= qmin <= qmax <= 127";
}

// A required (multiplier, shift) attribute pair.
template <typename A>
Problem multiplier_attr_problem(const A& attrs, const char* m, const char* s,
                                int64_t min_shift = 1) {
  if (!attrs.has(m) || !attrs.has(s)) {
    return std::string("attributes '") + m + "' and '" + s + "' are required";
  }
  return multiplier_problem(attrs.get(m, 0), attrs.get(s, 0), std::string(m) + "/" + s, min_shift);
}

// The first problem of several.
inline Problem first_of(std::initializer_list<Problem> problems) {
  for (const Problem& p : problems) {
    if (p) return p;
  }
  return std::nullopt;
}

// Operand i is `dtype` (and, with `length` >= 0, a vector of that length).
inline Problem operand_problem(const std::vector<Operand>& ops, size_t i, int32_t dtype,
                               const char* name, int64_t length = -1) {
  const Operand o = operand_at(ops, i);
  if (o.dtype != dtype) {
    return std::string(name) + " must be " + sdk::dtype_name(dtype) + ", not " +
           sdk::dtype_name(o.dtype);
  }
  if (length >= 0 && (o.shape.size() != 1 || o.shape[0] != length)) {
    return std::string(name) + " " + sdk::shape_string(o.shape) + " must hold " +
           std::to_string(length) + " values";
  }
  return std::nullopt;
}

// Values of per-channel M and S (either may be null: not known yet).
inline Problem multipliers_problem(const int32_t* m, const int32_t* s, int64_t n) {
  if (!m || !s) return std::nullopt;
  for (int64_t i = 0; i < n; ++i) {
    if (auto p = multiplier_problem(m[i], s[i], "(M, S)[" + std::to_string(i) + "]")) return p;
  }
  return std::nullopt;
}

// docs/quantization.md's accumulator bound for output channel o: `terms`
// products with |X - zero point| <= 255 and |W| <= max_w[o], plus |Bias[o]|.
// int32 accumulation is exact when every channel fits.
inline Problem bound_problem(int64_t terms, const std::vector<int64_t>& max_w,
                             const int32_t* bias) {
  for (size_t o = 0; o < max_w.size(); ++o) {
    const int64_t b = bias ? std::abs(static_cast<int64_t>(bias[o])) : 0;
    if (terms > (int64_t{1} << 31) || !qmath::accumulator_fits_int32(terms, 255, max_w[o], b)) {
      return "output channel " + std::to_string(o) + " can overflow its int32 accumulator (" +
             std::to_string(terms) + " terms, max|W| " + std::to_string(max_w[o]) + ", |Bias| " +
             std::to_string(b) + ")";
    }
  }
  return std::nullopt;
}

// The data of `name` if it is an initializer of dtype `dtype` (lowering
// checks values only where they are constants).
template <typename T>
const T* constant_data(const sdk::GraphView& g, std::string_view name, int32_t dtype) {
  const auto t = g.initializer(name);
  return t && t->dtype() == dtype ? static_cast<const T*>(t->data()) : nullptr;
}

// A kernel's verdict: a shape or attribute problem means the artifact
// contradicts what lowering checked; a value problem is a run-time input
// (a non-constant M, S, W, Bias or table) outside the op's contract.
inline void require_shapes(const char* op, const Problem& p) {
  if (p) corrupt(op, *p);
}
inline void require_values(const char* op, const Problem& p) {
  if (p) value_out_of_range(std::string(op) + ": " + *p);
}

// Whether the compiler packed this node's W (op_table.hpp's
// kWeightLayoutAttr); a layout this build does not know is a damaged
// artifact.
inline bool packed_weights(const KernelContext& ctx, const char* op) {
  if (!ctx.has_attr(kWeightLayoutAttr)) return false;
  const std::string layout = ctx.attr_string(kWeightLayoutAttr, "");
  if (layout != kernels::kPanelLayout) corrupt(op, "unknown weight layout '" + layout + "'");
  return true;
}

// The node's inputs as the op's checks read them: a packed W with the
// logical shape it was packed from.
inline std::vector<Operand> logical_operands(const KernelContext& ctx, bool packed) {
  std::vector<Operand> in = buffer_operands(ctx.inputs);
  if (packed && in.size() > 1) in[1].shape = ctx.attr_ints(kWeightShapeAttr);
  return in;
}

// A packed W holds exactly `bytes`.
inline void require_packed_bytes(const char* op, const Buffer& w, int64_t bytes) {
  if (w.dtype != ENP_DTYPE_INT8 || w.shape.size() != 1 || w.shape[0] != bytes) {
    corrupt(op, "packed W " + sdk::shape_string(w.shape) + " should hold " + std::to_string(bytes) +
                    " int8 values");
  }
}

// Shape-checking function of an op: attributes, inputs, outputs.
template <typename A>
using ShapeFn = Problem (*)(const A&, const std::vector<Operand>&, const std::vector<Operand>&);

// The lowering check of an op whose values need no constant: shapes only.
template <ShapeFn<NodeAttrs> kShapes>
std::optional<std::string> shapes_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  return kShapes(NodeAttrs{node}, graph_operands(node, g), graph_operands(node, g, true));
}

template <typename A>
Problem arity(const std::vector<Operand>& in, const std::vector<Operand>& out, size_t inputs) {
  if (in.size() == inputs && out.size() == 1 && out[0].dtype == ENP_DTYPE_INT8) return std::nullopt;
  return "takes " + std::to_string(inputs) + " inputs and one int8 output";
}

inline Problem output_shape_problem(const Operand& y, const Dims& want) {
  if (y.shape == want) return std::nullopt;
  return "Y " + sdk::shape_string(y.shape) + " should be " + sdk::shape_string(want);
}

}  // namespace eulernpu::kit::qops
