// Shape rules of the image sampling and crop ops: GridSample, AffineGrid,
// CenterCropPad, Col2Im (see sdk/kit/src/kernels_image.cpp). Several take
// sizes as input tensors (AffineGrid's size, CenterCropPad's shape, Col2Im's
// image_shape): when those are constants the output is fully known;
// otherwise its rank is, and the model's declared output type may fill in
// the dims.
#include <algorithm>
#include <array>

#include "ir/op_rules.hpp"

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

std::vector<OpRule> image_rules() {
  return {
      {"AffineGrid", &affine_grid, nullptr},
      {"CenterCropPad", &center_crop_pad, nullptr},
      {"Col2Im", &col2im, nullptr},
      {"GridSample", &grid_sample, nullptr},
  };
}

}  // namespace eulernpu::host::ir
