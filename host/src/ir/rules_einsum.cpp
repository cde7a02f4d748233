// Shape rule of Einsum (see sdk/kit/src/kernels_einsum.cpp).
#include <algorithm>
#include <array>

#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

using Dims = std::vector<int64_t>;

// --- Einsum -----------------------------------------------------------------

// Labels 'A'-'Z' are 0-25 and 'a'-'z' 26-51; the dims an ellipsis covers
// take slots from 52 on, right-aligned across operands.
constexpr int kLetters = 52;
constexpr int kEllipsis = -1;
constexpr int64_t kUnset = -2;

int label_id(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -2;
}

std::vector<int> parse_term(const InferContext& ctx, std::string_view s) {
  std::vector<int> out;
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, 3) == "...") {
      ctx.require(std::count(out.begin(), out.end(), kEllipsis) == 0,
                  "an Einsum term has more than one ellipsis");
      out.push_back(kEllipsis);
      i += 3;
      continue;
    }
    ctx.require(label_id(s[i]) >= 0, std::string("'") + s[i] + "' is not an Einsum subscript");
    out.push_back(label_id(s[i++]));
  }
  return out;
}

// Records dim d (-1: unknown) for `slot`: letters must agree, ellipsis dims
// broadcast.
void bind(const InferContext& ctx, int64_t& s, int64_t d, bool letter) {
  // An unknown ellipsis dim stays unknown next to a 1: it may be the larger.
  if (s == kUnset || (s == -1 && d >= 0 && (letter || d != 1)) || (!letter && s == 1)) {
    s = d;
  } else if (d >= 0 && s >= 0 && d != s) {
    ctx.require(!letter && d == 1, "Einsum operands disagree on a dim: " + std::to_string(s) +
                                       " and " + std::to_string(d));
  }
}

void einsum(InferContext& ctx) {
  std::string eq = ctx.attr_string("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t arrow = eq.find("->");
  std::vector<std::vector<int>> terms;
  const std::string lhs = eq.substr(0, arrow);
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(ctx, std::string_view(lhs).substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  ctx.require(terms.size() == ctx.input_count(), "the equation has " +
                                                     std::to_string(terms.size()) + " terms for " +
                                                     std::to_string(ctx.input_count()) + " inputs");
  for (size_t i = 0; i < terms.size(); ++i) {
    if (!ctx.input(i).known) return ctx.set_output(0, unknown(ctx.input(0).dtype));
  }
  // Ellipsis ranks, then every slot's size.
  std::vector<int64_t> ellipsis(terms.size(), 0);
  int64_t e_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const bool has = std::count(terms[i].begin(), terms[i].end(), kEllipsis) > 0;
    const auto letters = static_cast<int64_t>(terms[i].size()) - (has ? 1 : 0);
    const auto rank = static_cast<int64_t>(ctx.input(i).dims.size());
    ctx.require(has ? rank >= letters : rank == letters, "input " + std::to_string(i) +
                                                             " of rank " + std::to_string(rank) +
                                                             " does not match its subscripts");
    ellipsis[i] = rank - letters;
    e_rank = std::max(e_rank, ellipsis[i]);
  }
  std::vector<int64_t> size(static_cast<size_t>(kLetters + e_rank), kUnset);
  std::array<int, kLetters> count{};
  for (size_t i = 0; i < terms.size(); ++i) {
    size_t d = 0;
    for (int id : terms[i]) {
      if (id != kEllipsis) {
        ++count[static_cast<size_t>(id)];
        bind(ctx, size[static_cast<size_t>(id)], ctx.input(i).dims[d++], true);
        continue;
      }
      for (int64_t k = 0; k < ellipsis[i]; ++k) {
        bind(ctx, size[static_cast<size_t>(kLetters + e_rank - ellipsis[i] + k)],
             ctx.input(i).dims[d++], false);
      }
    }
  }
  Dims out;
  if (arrow == std::string::npos) {
    // Implicit output: the ellipsis dims, then the letters used once, sorted.
    for (int64_t k = 0; k < e_rank; ++k) out.push_back(size[static_cast<size_t>(kLetters + k)]);
    for (size_t id = 0; id < kLetters; ++id) {
      if (count[id] == 1) out.push_back(size[id]);
    }
  } else {
    std::array<bool, kLetters> seen{};
    for (int id : parse_term(ctx, std::string_view(eq).substr(arrow + 2))) {
      if (id == kEllipsis) {
        for (int64_t k = 0; k < e_rank; ++k) out.push_back(size[static_cast<size_t>(kLetters + k)]);
        continue;
      }
      const auto u = static_cast<size_t>(id);
      ctx.require(count[u] > 0 && !seen[u], "an output subscript repeats or is in no input");
      seen[u] = true;
      out.push_back(size[u]);
    }
  }
  ctx.set_output(0, ValueType{ctx.input(0).dtype, out, true});
}

}  // namespace

std::vector<OpRule> einsum_rules() { return {{"Einsum", &einsum, nullptr}}; }

}  // namespace eulernpu::host::ir
