// Einsum: any equation (repeated subscripts, ellipsis, implicit output);
// floats accumulate in float64 and round once.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <type_traits>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/status.hpp"
#include "int_values.hpp"
#include "kernel_util.hpp"
#include "number_types.hpp"
#include "operands.hpp"
#include "run_time_inputs.hpp"

namespace eulernpu::kit {
namespace {

// Where this file's corrupt-artifact errors are located.
constexpr std::string_view kScope = "cpu_ref";

using Dims = std::vector<int64_t>;

using namespace run_time_inputs;  // NOLINT(google-build-using-namespace)

// --- Einsum ---------------------------------------------------------------

// Labels: 'A'-'Z' are 0-25, 'a'-'z' 26-51; the dims an ellipsis covers get
// the slots from 52 on, right-aligned across operands like numpy's
// broadcasting.
constexpr int kLetters = 52;
constexpr int kEllipsis = -1;

int label_id(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -2;
}

char label_char(int id) { return static_cast<char>(id < 26 ? 'A' + id : 'a' + (id - 26)); }

struct EinsumSpec {
  std::vector<std::vector<int>> inputs;  // label ids and kEllipsis
  std::vector<int> output;
  bool explicit_output = false;
};

std::optional<std::string> parse_term(std::string_view s, std::vector<int>& out) {
  bool ellipsis = false;
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, 3) == "...") {
      if (ellipsis) return "a term has more than one ellipsis";
      ellipsis = true;
      out.push_back(kEllipsis);
      i += 3;
      continue;
    }
    const int id = label_id(s[i]);
    if (id < 0) return std::string("'") + s[i] + "' is not a subscript letter";
    out.push_back(id);
    ++i;
  }
  return std::nullopt;
}

std::optional<std::string> parse_einsum(std::string equation, size_t operands, EinsumSpec& spec) {
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    spec.inputs.emplace_back();
    if (auto why =
            parse_term(std::string_view(lhs).substr(start, comma - start), spec.inputs.back())) {
      return why;
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (spec.inputs.size() != operands) {
    return "the equation has " + std::to_string(spec.inputs.size()) + " terms for " +
           std::to_string(operands) + " inputs";
  }
  spec.explicit_output = arrow != std::string::npos;
  if (spec.explicit_output)
    return parse_term(std::string_view(equation).substr(arrow + 2), spec.output);
  return std::nullopt;
}

// Slots of every operand dim and of the output, and each slot's size.
struct EinsumPlan {
  std::vector<int64_t> size;  // per slot; -1 if no operand uses it
  std::vector<std::vector<int>> operand_slots;
  std::vector<int> output_slots;
};

// Records `d` as the size of `slot`: letters must agree; ellipsis dims
// broadcast.
std::optional<std::string> bind_size(EinsumPlan& p, int slot, int64_t d) {
  int64_t& s = p.size[static_cast<size_t>(slot)];
  if (slot < kLetters) {
    if (s >= 0 && s != d) {
      return std::string("subscript '") + label_char(slot) + "' has sizes " + std::to_string(s) +
             " and " + std::to_string(d);
    }
    s = d;
  } else if (s < 0 || s == 1) {
    s = d;
  } else if (d != 1 && d != s) {
    return "the ellipsis dims do not broadcast";
  }
  return std::nullopt;
}

std::optional<std::string> plan_output(const EinsumSpec& spec, int64_t ellipsis_rank,
                                       EinsumPlan& p) {
  std::vector<int> count(kLetters, 0);
  for (const auto& term : spec.inputs) {
    for (int id : term) {
      if (id >= 0) ++count[static_cast<size_t>(id)];
    }
  }
  if (!spec.explicit_output) {
    for (int e = 0; e < ellipsis_rank; ++e) p.output_slots.push_back(kLetters + e);
    for (int id = 0; id < kLetters; ++id) {
      if (count[static_cast<size_t>(id)] == 1) p.output_slots.push_back(id);
    }
    return std::nullopt;
  }
  std::vector<bool> seen(kLetters, false);
  for (int id : spec.output) {
    if (id == kEllipsis) {
      for (int e = 0; e < ellipsis_rank; ++e) p.output_slots.push_back(kLetters + e);
      continue;
    }
    if (count[static_cast<size_t>(id)] == 0) {
      return std::string("output subscript '") + label_char(id) + "' is not in any input";
    }
    if (seen[static_cast<size_t>(id)]) {
      return std::string("output subscript '") + label_char(id) + "' repeats";
    }
    seen[static_cast<size_t>(id)] = true;
    p.output_slots.push_back(id);
  }
  return std::nullopt;
}

std::optional<std::string> plan_einsum(const EinsumSpec& spec, const std::vector<Dims>& shapes,
                                       EinsumPlan& p) {
  std::vector<int64_t> ellipsis(shapes.size(), 0);
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto& term = spec.inputs[i];
    const bool has = std::count(term.begin(), term.end(), kEllipsis) > 0;
    const auto letters = static_cast<int64_t>(term.size()) - (has ? 1 : 0);
    const auto rank = static_cast<int64_t>(shapes[i].size());
    if (has ? rank < letters : rank != letters) {
      return "input " + std::to_string(i) + " of rank " + std::to_string(rank) +
             " does not match its subscripts";
    }
    ellipsis[i] = rank - letters;
    ellipsis_rank = std::max(ellipsis_rank, ellipsis[i]);
  }
  p.size.assign(static_cast<size_t>(kLetters + ellipsis_rank), -1);
  for (size_t i = 0; i < shapes.size(); ++i) {
    auto& slots = p.operand_slots.emplace_back();
    for (int id : spec.inputs[i]) {
      if (id != kEllipsis) {
        slots.push_back(id);
        continue;
      }
      for (int64_t e = 0; e < ellipsis[i]; ++e) {
        slots.push_back(static_cast<int>(kLetters + ellipsis_rank - ellipsis[i] + e));
      }
    }
    for (size_t d = 0; d < slots.size(); ++d) {
      if (auto why = bind_size(p, slots[d], shapes[i][d])) return why;
    }
  }
  return plan_output(spec, ellipsis_rank, p);
}

EinsumPlan einsum_plan(const KernelContext& ctx) {
  EinsumSpec spec;
  std::vector<Dims> shapes;
  for (const Buffer& b : ctx.inputs) shapes.push_back(b.shape);
  EinsumPlan p;
  auto why = parse_einsum(ctx.attr_string("equation", ""), shapes.size(), spec);
  if (!why) why = plan_einsum(spec, shapes, p);
  if (why) corrupt(kScope, "Einsum: " + *why);
  return p;
}

// Strides of every operand along `slots`: the sum over the operand's dims
// with that slot (a repeated subscript walks the diagonal); 0 for dims
// broadcast from size 1.
std::vector<Dims> slot_strides(const KernelContext& ctx, const EinsumPlan& p,
                               const std::vector<int>& slots) {
  std::vector<Dims> out;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const Dims strides = strides_of(ctx.inputs[i].shape);
    Dims& s = out.emplace_back(slots.size(), 0);
    for (size_t k = 0; k < slots.size(); ++k) {
      for (size_t d = 0; d < p.operand_slots[i].size(); ++d) {
        if (p.operand_slots[i][d] == slots[k] && ctx.inputs[i].shape[d] != 1) s[k] += strides[d];
      }
    }
  }
  return out;
}

// Every output element sums, in a fixed order, the products of the
// operands over the contracted subscripts. Floats accumulate in float64,
// integers in uint64 (wrapping like the element type).
template <typename T>
void einsum_typed(const KernelContext& ctx, const EinsumPlan& p) {
  std::vector<int> contracted;
  for (size_t s = 0; s < p.size.size(); ++s) {
    const auto slot = static_cast<int>(s);
    const bool out = std::count(p.output_slots.begin(), p.output_slots.end(), slot) > 0;
    if (p.size[s] >= 0 && !out) contracted.push_back(slot);
  }
  Dims out_dims, c_dims;
  for (int s : p.output_slots) out_dims.push_back(p.size[static_cast<size_t>(s)]);
  for (int s : contracted) c_dims.push_back(p.size[static_cast<size_t>(s)]);
  require(kScope, out_dims == ctx.outputs[0].shape,
          "Einsum: the output shape differs from the equation's");
  const auto out_strides = slot_strides(ctx, p, p.output_slots);
  const auto c_strides = slot_strides(ctx, p, contracted);
  const size_t ops = ctx.inputs.size();
  const int64_t c_total = product(c_dims);
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
  T* y = ctx.outputs[0].as<T>();
  const int64_t total = product(out_dims);
  parallel_for(total, threads_for(ctx, total * c_total), [&](int64_t begin, int64_t end) {
    Dims base(ops), off(ops), cidx(c_dims.size());
    for (int64_t o = begin; o < end; ++o) {
      std::fill(base.begin(), base.end(), 0);
      for (size_t k = out_dims.size(), rest = static_cast<size_t>(o); k-- > 0;) {
        const auto v = static_cast<int64_t>(rest % static_cast<size_t>(out_dims[k]));
        rest /= static_cast<size_t>(out_dims[k]);
        for (size_t i = 0; i < ops; ++i) base[i] += v * out_strides[i][k];
      }
      off = base;
      std::fill(cidx.begin(), cidx.end(), 0);
      Acc acc = 0;
      for (int64_t it = 0; it < c_total; ++it) {
        Acc term = 1;
        for (size_t i = 0; i < ops; ++i)
          term *= static_cast<Acc>(ctx.inputs[i].as<const T>()[off[i]]);
        acc += term;
        for (size_t k = c_dims.size(); k-- > 0;) {
          for (size_t i = 0; i < ops; ++i) off[i] += c_strides[i][k];
          if (++cidx[k] < c_dims[k]) break;
          for (size_t i = 0; i < ops; ++i) off[i] -= c_strides[i][k] * c_dims[k];
          cidx[k] = 0;
        }
      }
      y[o] = static_cast<T>(acc);
    }
  });
}

void einsum(const KernelContext& ctx) {
  const EinsumPlan p = einsum_plan(ctx);
  for (const Buffer& b : ctx.inputs)
    require(kScope, b.dtype == ctx.inputs[0].dtype, "Einsum: mixed dtypes");
  dispatch_dtype(ctx.inputs[0].dtype, [&]<typename T>() {
    if constexpr (is_number<T>) {
      einsum_typed<T>(ctx, p);
    } else {
      corrupt(kScope, std::string("Einsum of dtype ") + sdk::dtype_name(ctx.inputs[0].dtype));
    }
  });
}

// --- lowering checks --------------------------------------------------------

std::optional<std::string> einsum_check(const sdk::NodeView& node, const sdk::GraphView& g) {
  std::vector<Dims> shapes;
  for (size_t i = 0; i < node.input_count(); ++i) {
    if (dtype_of(g, node.input(i)) != dtype_of(g, node.input(0)))
      return "the inputs' dtypes differ";
    shapes.push_back(shape_of(g, node.input(i)));
  }
  EinsumSpec spec;
  EinsumPlan plan;
  if (auto why = parse_einsum(node.attr_string("equation", ""), shapes.size(), spec)) return why;
  return plan_einsum(spec, shapes, plan);
}

}  // namespace

std::vector<OpEntry> einsum_ops() {
  constexpr uint32_t kNumbers = kFloats | ENP_DTYPE_BIT(ENP_DTYPE_INT32) |
                                ENP_DTYPE_BIT(ENP_DTYPE_INT64) | ENP_DTYPE_BIT(ENP_DTYPE_UINT32) |
                                ENP_DTYPE_BIT(ENP_DTYPE_UINT64);
  return {
      {"Einsum", 12, 0, kNumbers,
       "any equation: repeated subscripts (diagonals), ellipsis, implicit output; "
       "floats accumulate in float64",
       &einsum_check, &einsum},
  };
}

}  // namespace eulernpu::kit
