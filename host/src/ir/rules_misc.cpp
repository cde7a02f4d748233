// Shape rules of the misc ops (see sdk/kit/src/kernels_misc.cpp).
// Several take sizes as input tensors (AffineGrid's size, CenterCropPad's
// shape, Col2Im's image_shape): when those are constants the output is
// fully known; otherwise its rank is, and the model's declared output type
// may fill in the dims. The signal ops are in rules_signal.cpp.
#include <algorithm>
#include <array>

#include "op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

using Dims = std::vector<int64_t>;

int64_t product(Dims::const_iterator begin, Dims::const_iterator end) {
  int64_t n = 1;
  for (auto it = begin; it != end; ++it) {
    if (*it < 0) return -1;
    n *= *it;
  }
  return n;
}

// BitCast: x's shape, of type `to`, which must be as wide as x's.
void bit_cast(InferContext& ctx) {
  ValueType out = ctx.input(0);
  out.dtype = static_cast<DType>(ctx.attr_int("to", 0));
  ctx.require(dtype_size(out.dtype) != 0 && dtype_size(out.dtype) == dtype_size(ctx.input(0).dtype),
              std::string("cannot reinterpret ") + dtype_name(ctx.input(0).dtype) + " as " +
                  dtype_name(out.dtype) + ": the element sizes differ");
  ctx.set_output(0, out);
}

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

// --- sampling grids ---------------------------------------------------------

// GridSample: (N, C) of X, then the grid's output positions.
void grid_sample(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const ValueType& grid = ctx.input(1);
  if (!x.known || !grid.known) return ctx.set_output(0, unknown(x.dtype));
  ctx.require(x.dims.size() >= 3 && grid.dims.size() == x.dims.size(),
              "X " + shape_string(x.dims) + " and grid " + shape_string(grid.dims) +
                  " must have the same rank, at least 3");
  const auto spatial = static_cast<int64_t>(x.dims.size()) - 2;
  ctx.require(grid.dims.back() < 0 || grid.dims.back() == spatial,
              "the grid's last dim must be " + std::to_string(spatial));
  ctx.require(x.dims[0] < 0 || grid.dims[0] < 0 || x.dims[0] == grid.dims[0],
              "X and grid differ in batch size");
  Dims out{x.dims[0] >= 0 ? x.dims[0] : grid.dims[0], x.dims[1]};
  out.insert(out.end(), grid.dims.begin() + 1, grid.dims.end() - 1);
  ctx.set_output(0, ValueType{x.dtype, out, true});
}

// AffineGrid: theta (N, 2, 3) or (N, 3, 4) and size (N, C, [D,] H, W) give
// (N, [D,] H, W, 2 or 3).
void affine_grid(InferContext& ctx) {
  const ValueType& theta = ctx.input(0);
  const auto size = ctx.constant_ints(1);
  int64_t len = size ? static_cast<int64_t>(size->size()) : vector_length(ctx, 1);
  if (len < 0 && theta.known && theta.dims.size() == 3 && theta.dims[1] >= 0) {
    len = theta.dims[1] + 2;
  }
  if (len < 0) return ctx.set_output(0, unknown(theta.dtype));
  ctx.require(len == 4 || len == 5, "size must hold 4 or 5 values");
  const int64_t r = len - 2;
  if (theta.known) {
    ctx.require(theta.dims.size() == 3 && (theta.dims[1] < 0 || theta.dims[1] == r) &&
                    (theta.dims[2] < 0 || theta.dims[2] == r + 1),
                "theta " + shape_string(theta.dims) + " does not match a size of " +
                    std::to_string(len) + " values");
  }
  Dims out(static_cast<size_t>(r) + 2, -1);
  out.back() = r;
  if (theta.known) out[0] = theta.dims[0];
  if (size) {
    ctx.require(out[0] < 0 || out[0] == (*size)[0], "size's N differs from theta's");
    out[0] = (*size)[0];
    std::copy(size->begin() + 2, size->end(), out.begin() + 1);
  }
  ctx.set_output(0, ValueType{theta.dtype, out, true});
}

// CenterCropPad: x's dims, with `shape` on the cropped or padded axes.
void center_crop_pad(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  if (!x.known) return ctx.set_output(0, x);
  const auto rank = static_cast<int64_t>(x.dims.size());
  Dims axes = ctx.attr_ints("axes");
  if (!ctx.has_attr("axes")) {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  const auto shape = ctx.constant_ints(1);
  ctx.require(!shape || shape->size() == axes.size(),
              "shape has " + std::to_string(shape ? shape->size() : 0) + " values for " +
                  std::to_string(axes.size()) + " axes");
  ValueType out = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t v = shape ? (*shape)[i] : -1;
    ctx.require(!shape || v >= 0, "shape values must not be negative");
    out.dims[static_cast<size_t>(ctx.axis(axes[i], rank, "axes entry"))] = v;
  }
  ctx.set_output(0, out);
}

// Col2Im: (N, C * prod(block_shape), L) to (N, C, *image_shape).
void col2im(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  const auto image = ctx.constant_ints(1);
  const auto block = ctx.constant_ints(2);
  const int64_t n = image ? static_cast<int64_t>(image->size()) : vector_length(ctx, 1);
  if (n < 0) return ctx.set_output(0, unknown(in.dtype));
  if (in.known) ctx.require(in.dims.size() == 3, "input must be (N, C * block size, L)");
  Dims out(static_cast<size_t>(n) + 2, -1);
  if (in.known) out[0] = in.dims[0];
  if (image) std::copy(image->begin(), image->end(), out.begin() + 2);
  if (block && in.known && in.dims[1] >= 0) {
    ctx.require(static_cast<int64_t>(block->size()) == n,
                "block_shape and image_shape differ in length");
    const int64_t k = product(block->begin(), block->end());
    ctx.require(k > 0 && in.dims[1] % k == 0, "input dim 1 (" + std::to_string(in.dims[1]) +
                                                  ") is not a multiple of the block size " +
                                                  std::to_string(k));
    out[1] = in.dims[1] / k;
  }
  ctx.set_output(0, ValueType{in.dtype, out, true});
}

}  // namespace

std::vector<OpRule> misc_rules() {
  return {
      {"AffineGrid", &affine_grid, nullptr},        {"BitCast", &bit_cast, nullptr},
      {"CenterCropPad", &center_crop_pad, nullptr}, {"Col2Im", &col2im, nullptr},
      {"CumProd", &same_as_input, nullptr},         {"Einsum", &einsum, nullptr},
      {"GridSample", &grid_sample, nullptr},
  };
}

}  // namespace eulernpu::host::ir
