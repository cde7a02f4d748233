// Data-movement and shape kernels (Reshape, Transpose, Gather, Slice, ...).
//
// Data movement copies whole elements by width (1, 2, 4 or 8 bytes), so one
// kernel serves every dtype. Values read at run time (indices, starts,
// shapes) are checked against the compiled shapes: a mismatch raises an
// error instead of touching memory outside a buffer.
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstring>
#include <type_traits>

#include "eulernpu/kernels/movement.hpp"
#include "eulernpu/kit/errors.hpp"
#include "float16.hpp"
#include "int_values.hpp"
#include "kernel_util.hpp"

namespace eulernpu::kit {
namespace {

// Where this file's corrupt-artifact errors are located.
constexpr std::string_view kScope = "cpu_ref";

using Dims = std::vector<int64_t>;

constexpr uint32_t kAllDtypes = kAnyDtype | ENP_DTYPE_BIT(ENP_DTYPE_UINT16) |
                                ENP_DTYPE_BIT(ENP_DTYPE_UINT32) | ENP_DTYPE_BIT(ENP_DTYPE_UINT64) |
                                ENP_DTYPE_BIT(ENP_DTYPE_BFLOAT16);

// 16-bit floats, which dispatch_dtype has no C++ type for: kernels that do
// arithmetic on elements convert them through float16.hpp.
bool is_half_float(int32_t dtype) {
  return dtype == ENP_DTYPE_FLOAT16 || dtype == ENP_DTYPE_BFLOAT16;
}
constexpr uint32_t kIndexDtypes = ENP_DTYPE_BIT(ENP_DTYPE_INT32) | ENP_DTYPE_BIT(ENP_DTYPE_INT64);

std::string dims_string(const Dims& d) { return sdk::shape_string(d); }

// --- helpers --------------------------------------------------------------

// Calls f.template operator()<T>() with T an unsigned integer as wide as one
// element of `dtype`: data movement needs only the bytes.
template <typename F>
void dispatch_width_of(int32_t dtype, F&& f) {
  if (!dispatch_width(sdk::dtype_size(dtype), f)) {
    corrupt(kScope, std::string("no element width for ") + sdk::dtype_name(dtype));
  }
}

size_t width(const Buffer& b) { return sdk::dtype_size(b.dtype); }

// a * b and a + b of values read at run time, which may be absurd.
int64_t checked_mul(int64_t a, int64_t b, const char* op) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    index_out_of_range(std::string(op) + ": a size overflows int64");
  }
  return r;
}

int64_t checked_add(int64_t a, int64_t b, const char* op) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    index_out_of_range(std::string(op) + ": a size overflows int64");
  }
  return r;
}

// An int list read from attribute `attr` before opset `since`, from input
// `index` from then on; nullopt if neither is present.
std::optional<Dims> int_list(const KernelContext& ctx, const char* attr, size_t index,
                             int64_t since) {
  if (ctx.opset < since) {
    if (!ctx.has_attr(attr)) return std::nullopt;
    return ctx.attr_ints(attr);
  }
  if (!ctx.has_input(index)) return std::nullopt;
  return read_ints(ctx.inputs[index]);
}

// A possibly negative axis for `rank`, checked.
int64_t axis_for(int64_t axis, size_t rank, const char* op) {
  const auto r = static_cast<int64_t>(rank);
  const int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r) {
    index_out_of_range(std::string(op) + ": axis " + std::to_string(axis) +
                       " is out of range for rank " + std::to_string(rank));
  }
  return a;
}

// A possibly negative index into an axis of size `dim`, checked.
int64_t index_for(int64_t i, int64_t dim, const char* op) {
  if (i < -dim || i >= dim) {
    index_out_of_range(std::string(op) + ": index " + std::to_string(i) +
                       " is out of range for an axis of size " + std::to_string(dim));
  }
  return i < 0 ? i + dim : i;
}

// Index i of an int32 or int64 tensor.
int64_t int_at(const Buffer& b, int64_t i) {
  return b.dtype == ENP_DTYPE_INT32 ? b.as<const int32_t>()[i] : b.as<const int64_t>()[i];
}

// Increments a row-major multi-index; returns false after the last one.
bool next_index(Dims& idx, const Dims& dims) {
  for (size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < dims[d]) return true;
    idx[d] = 0;
  }
  return false;
}

// --- strided views --------------------------------------------------------

// Transpose, Slice, Split, Expand, Tile, DepthToSpace and SpaceToDepth are
// views, copied by the portable kernel (eulernpu/kernels/movement.hpp).
using kernels::StridedView;

void copy_view(const KernelContext& ctx, const Buffer& in, const StridedView& v, void* dst) {
  const size_t w = width(in);
  if (w != 1 && w != 2 && w != 4 && w != 8) {
    corrupt(kScope, std::string("no element width for ") + sdk::dtype_name(in.dtype));
  }
  kernels::copy_view(v, w, in.data, dst, task_runner(ctx));
}

// The view reading `in` broadcast to `out`.
StridedView broadcast_to(const Dims& in, const Dims& out) {
  require(kScope, in.size() <= out.size(),
          "cannot broadcast " + dims_string(in) + " to " + dims_string(out));
  for (size_t i = 0; i < in.size(); ++i) {
    const size_t d = out.size() - in.size() + i;
    require(kScope, in[i] == 1 || in[i] == out[d],
            "cannot broadcast " + dims_string(in) + " to " + dims_string(out));
  }
  return kernels::expand_view(in, out);
}

// --- Reshape, Flatten, Squeeze, Unsqueeze ---------------------------------

void copy_all(const Buffer& in, const Buffer& out) {
  require(kScope, in.count() == out.count() && in.dtype == out.dtype,
          "input " + dims_string(in.shape) + " and output " + dims_string(out.shape) +
              " differ in size");
  if (in.data != out.data) {
    std::memcpy(out.data, in.data, static_cast<size_t>(out.count()) * width(out));
  }
}

void any_copy(const KernelContext& ctx) { copy_all(ctx.inputs[0], ctx.outputs[0]); }

// Reshape's target with 0 (copy unless allowzero) and -1 resolved.
Dims reshape_target(const KernelContext& ctx, const Buffer& in) {
  Dims shape = ctx.opset < 5 ? ctx.attr_ints("shape") : read_ints(ctx.inputs[1]);
  const bool allowzero = ctx.attr_int("allowzero", 0) != 0;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) {
      if (i >= in.shape.size()) {
        index_out_of_range("Reshape: shape entry " + std::to_string(i) + " is 0");
      }
      shape[i] = in.shape[i];
    }
    if (shape[i] == -1 && inferred < 0) {
      inferred = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      index_out_of_range("Reshape: shape " + dims_string(shape) + " is invalid");
    } else {
      known = checked_mul(known, shape[i], "Reshape");
    }
  }
  if (inferred >= 0) shape[static_cast<size_t>(inferred)] = known ? in.count() / known : -1;
  return shape;
}

void any_reshape(const KernelContext& ctx) {
  const Dims target = reshape_target(ctx, ctx.inputs[0]);
  if (target != ctx.outputs[0].shape) {
    index_out_of_range("Reshape: the shape input gives " + dims_string(target) +
                       " but the model was compiled for " + dims_string(ctx.outputs[0].shape));
  }
  if (product(target) != ctx.inputs[0].count()) {
    index_out_of_range("Reshape: shape " + dims_string(target) + " does not hold the " +
                       std::to_string(ctx.inputs[0].count()) + " elements of the input");
  }
  copy_all(ctx.inputs[0], ctx.outputs[0]);
}

// --- Transpose, DepthToSpace, SpaceToDepth --------------------------------

// A view reading `in` (seen with `dims`) in the order of `perm`.
void any_transpose(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const size_t rank = in.shape.size();
  Dims perm = ctx.attr_ints("perm");
  if (!ctx.has_attr("perm")) {
    for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  Dims sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    require(kScope, sorted[i] == static_cast<int64_t>(i), "Transpose: perm is not a permutation");
  }
  require(kScope, perm.size() == rank, "Transpose: perm does not match the rank");
  const StridedView v = kernels::transpose_view(in.shape, perm);
  require(kScope, v.dims == ctx.outputs[0].shape, "Transpose: output shape differs");
  copy_view(ctx, in, v, ctx.outputs[0].data);
}

// DepthToSpace and SpaceToDepth are a transpose of a 6-D view.
void space_depth(const KernelContext& ctx, const StridedView& v) {
  require(kScope, product(v.dims) == ctx.outputs[0].count(), "output size differs");
  copy_view(ctx, ctx.inputs[0], v, ctx.outputs[0].data);
}

void any_depth_to_space(const KernelContext& ctx) {
  const Dims& s = ctx.inputs[0].shape;
  const int64_t b = ctx.attr_int("blocksize", 0);
  require(kScope, s.size() == 4 && b > 0 && s[1] % (b * b) == 0, "DepthToSpace: bad input shape");
  const Dims out{s[0], s[1] / (b * b), s[2] * b, s[3] * b};
  require(kScope, out == ctx.outputs[0].shape, "DepthToSpace: output shape differs");
  space_depth(ctx, kernels::depth_to_space_view(s, b, ctx.attr_string("mode", "DCR") == "CRD"));
}

void any_space_to_depth(const KernelContext& ctx) {
  const Dims& s = ctx.inputs[0].shape;
  const int64_t b = ctx.attr_int("blocksize", 0);
  require(kScope, s.size() == 4 && b > 0 && s[2] % b == 0 && s[3] % b == 0,
          "SpaceToDepth: bad input shape");
  const Dims out{s[0], s[1] * b * b, s[2] / b, s[3] / b};
  require(kScope, out == ctx.outputs[0].shape, "SpaceToDepth: output shape differs");
  space_depth(ctx, kernels::space_to_depth_view(s, b));
}

// --- Concat, Split --------------------------------------------------------

void any_concat(const KernelContext& ctx) {
  const Buffer& out = ctx.outputs[0];
  const auto axis = static_cast<size_t>(
      axis_for(ctx.attr_int("axis", ctx.opset < 4 ? 1 : 0), out.shape.size(), "Concat"));
  const int64_t outer = product(out.shape.begin(), out.shape.begin() + static_cast<int64_t>(axis));
  const int64_t inner =
      product(out.shape.begin() + static_cast<int64_t>(axis) + 1, out.shape.end());
  const size_t w = width(out);
  int64_t along = 0;
  for (const Buffer& in : ctx.inputs) {
    Dims expect = out.shape;
    expect[axis] = in.shape.size() == out.shape.size() ? in.shape[axis] : -1;
    require(kScope, in.shape == expect && in.dtype == out.dtype,
            "Concat: input " + dims_string(in.shape) + " does not fit the output");
    along += in.shape[axis];
  }
  require(kScope, along == out.shape[axis], "Concat: inputs do not fill the output");
  const auto out_block = static_cast<size_t>(out.shape[axis] * inner) * w;
  auto* dst = out.as<uint8_t>();
  for (const Buffer& in : ctx.inputs) {
    const auto block = static_cast<size_t>(in.shape[axis] * inner) * w;
    const auto* src = in.as<const uint8_t>();
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(dst + static_cast<size_t>(o) * out_block, src + static_cast<size_t>(o) * block,
                  block);
    }
    dst += block;
  }
}

void any_split(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const auto axis =
      static_cast<size_t>(axis_for(ctx.attr_int("axis", 0), in.shape.size(), "Split"));
  const Dims strides = strides_of(in.shape);
  int64_t start = 0;
  for (const Buffer& out : ctx.outputs) {
    if (out.dtype == ENP_DTYPE_UNDEFINED) continue;  // an omitted output
    Dims expect = in.shape;
    expect[axis] = out.shape.size() == in.shape.size() ? out.shape[axis] : -1;
    require(kScope, out.shape == expect && start + out.shape[axis] <= in.shape[axis],
            "Split: output " + dims_string(out.shape) + " does not fit the input");
    copy_view(ctx, in, StridedView{out.shape, strides, start * strides[axis]}, out.data);
    start += out.shape[axis];
  }
  if (auto split = int_list(ctx, "split", 1, 13)) {
    for (size_t i = 0; i < ctx.outputs.size(); ++i) {
      const Buffer& out = ctx.outputs[i];
      if (i >= split->size() ||
          (out.dtype != ENP_DTYPE_UNDEFINED && (*split)[i] != out.shape[axis])) {
        index_out_of_range("Split: split " + dims_string(*split) +
                           " differs from the compiled sizes");
      }
    }
  }
}

// --- Slice ----------------------------------------------------------------

void any_slice(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  const Dims starts = int_list(ctx, "starts", 1, 10).value_or(Dims{});
  const Dims ends = int_list(ctx, "ends", 2, 10).value_or(Dims{});
  Dims axes = int_list(ctx, "axes", 3, 10).value_or(Dims{});
  const Dims steps = int_list(ctx, "steps", 4, 10).value_or(Dims(starts.size(), 1));
  if (!ctx.has_attr("axes") && !ctx.has_input(3)) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    index_out_of_range("Slice: starts, ends, axes and steps differ in length");
  }
  std::vector<kernels::SliceAxis> ranges(in.shape.size());
  for (size_t d = 0; d < in.shape.size(); ++d) ranges[d] = {0, in.shape[d], 1};
  std::vector<bool> seen(in.shape.size(), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    const auto d = static_cast<size_t>(axis_for(axes[i], in.shape.size(), "Slice"));
    if (steps[i] == 0 || seen[d]) index_out_of_range("Slice: a step is 0 or an axis repeats");
    seen[d] = true;
    ranges[d] = kernels::slice_axis(in.shape[d], starts[i], ends[i], steps[i]);
  }
  const StridedView v = kernels::slice_view(in.shape, ranges);
  if (v.dims != out.shape) {
    index_out_of_range("Slice: starts/ends give " + dims_string(v.dims) +
                       " but the model was compiled for " + dims_string(out.shape));
  }
  copy_view(ctx, in, v, out.data);
}

// --- Gather family --------------------------------------------------------

void any_gather(const KernelContext& ctx) {
  const Buffer& data = ctx.inputs[0];
  const Buffer& indices = ctx.inputs[1];
  const Buffer& out = ctx.outputs[0];
  const int64_t axis = axis_for(ctx.attr_int("axis", 0), data.shape.size(), "Gather");
  const int64_t dim = data.shape[static_cast<size_t>(axis)];
  const int64_t outer = product(data.shape.begin(), data.shape.begin() + axis);
  const int64_t inner = product(data.shape.begin() + axis + 1, data.shape.end());
  const int64_t n = indices.count();
  require(kScope, out.count() == outer * n * inner, "Gather: output size differs");
  std::vector<int64_t> at(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    at[static_cast<size_t>(j)] = index_for(int_at(indices, j), dim, "Gather");
  }
  kernels::gather({outer, dim, inner, width(data)}, at.data(), n, data.data, out.data,
                  task_runner(ctx));
}

// Offset into `data` of the element at `idx` of indices, with the axis
// coordinate replaced by that element's value (GatherElements, Scatter).
struct ElementIndexer {
  Dims data_strides;
  size_t axis;
  int64_t dim;
  const char* op;

  int64_t offset(const Dims& idx, int64_t value) const {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      off += (d == axis ? index_for(value, dim, op) : idx[d]) * data_strides[d];
    }
    return off;
  }
};

ElementIndexer element_indexer(const KernelContext& ctx, const Buffer& data, const Buffer& indices,
                               const char* op) {
  const auto axis = static_cast<size_t>(axis_for(ctx.attr_int("axis", 0), data.shape.size(), op));
  require(kScope, indices.shape.size() == data.shape.size(),
          std::string(op) + ": indices and data differ in rank");
  for (size_t d = 0; d < data.shape.size(); ++d) {
    require(kScope, d == axis || indices.shape[d] <= data.shape[d],
            std::string(op) + ": indices " + dims_string(indices.shape) + " exceed data " +
                dims_string(data.shape));
  }
  return {strides_of(data.shape), axis, data.shape[axis], op};
}

void any_gather_elements(const KernelContext& ctx) {
  const Buffer& data = ctx.inputs[0];
  const Buffer& indices = ctx.inputs[1];
  const Buffer& out = ctx.outputs[0];
  const ElementIndexer ix = element_indexer(ctx, data, indices, "GatherElements");
  require(kScope, out.shape == indices.shape, "GatherElements: output shape differs");
  if (out.count() == 0) return;
  dispatch_width_of(data.dtype, [&]<typename T>() {
    const T* src = data.as<const T>();
    T* dst = out.as<T>();
    Dims idx(indices.shape.size(), 0);
    int64_t i = 0;
    do {
      dst[i] = src[ix.offset(idx, int_at(indices, i))];
      ++i;
    } while (next_index(idx, indices.shape));
  });
}

void any_gather_nd(const KernelContext& ctx) {
  const Buffer& data = ctx.inputs[0];
  const Buffer& indices = ctx.inputs[1];
  const Buffer& out = ctx.outputs[0];
  const auto b = static_cast<size_t>(ctx.attr_int("batch_dims", 0));
  const Dims& is = indices.shape;
  const Dims& ds = data.shape;
  require(kScope,
          !is.empty() && b < is.size() && b + static_cast<size_t>(is.back()) <= ds.size() &&
              std::equal(is.begin(), is.begin() + static_cast<int64_t>(b), ds.begin()),
          "GatherND: indices " + dims_string(is) + " do not fit data " + dims_string(ds));
  const auto k = static_cast<size_t>(is.back());
  const int64_t batches = product(ds.begin(), ds.begin() + static_cast<int64_t>(b));
  const int64_t per_batch = product(ds.begin() + static_cast<int64_t>(b), ds.end());
  const int64_t slice = product(ds.begin() + static_cast<int64_t>(b + k), ds.end());
  const int64_t tuples = product(is.begin() + static_cast<int64_t>(b), is.end() - 1);
  require(kScope, out.count() == batches * tuples * slice, "GatherND: output size differs");
  const size_t bytes = static_cast<size_t>(slice) * width(data);
  const Dims sub(ds.begin() + static_cast<int64_t>(b), ds.begin() + static_cast<int64_t>(b + k));
  const Dims sub_strides = strides_of(sub);
  for (int64_t t = 0; t < batches * tuples; ++t) {
    int64_t off = 0;
    for (size_t j = 0; j < k; ++j) {
      off += index_for(int_at(indices, t * static_cast<int64_t>(k) + static_cast<int64_t>(j)),
                       sub[j], "GatherND") *
             sub_strides[j];
    }
    const int64_t src = (t / std::max<int64_t>(tuples, 1)) * per_batch + off * slice;
    std::memcpy(out.as<uint8_t>() + static_cast<size_t>(t) * bytes,
                data.as<const uint8_t>() + static_cast<size_t>(src) * width(data), bytes);
  }
}

// Scatter's reductions, in the element type; integers wrap instead of
// overflowing, bool add/mul are or/and.
enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction reduction_of(const std::string& s) {
  if (s == "add") return Reduction::kAdd;
  if (s == "mul") return Reduction::kMul;
  if (s == "max") return Reduction::kMax;
  if (s == "min") return Reduction::kMin;
  return Reduction::kNone;
}

// The type integer arithmetic wraps in: unsigned, at least as wide as
// unsigned int so that no promotion to a signed type can overflow.
template <typename T>
struct Wrapping {
  using type = T;
};
template <std::integral T>
struct Wrapping<T> {
  using type = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
};

template <typename T>
T combine(Reduction r, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return r == Reduction::kAdd || r == Reduction::kMax ? (a || b)
           : r == Reduction::kNone                      ? b
                                                        : (a && b);
  } else {
    using U = typename Wrapping<T>::type;
    switch (r) {
      case Reduction::kAdd:
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      case Reduction::kMul:
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      case Reduction::kMax:
        return std::max(a, b);
      case Reduction::kMin:
        return std::min(a, b);
      case Reduction::kNone:
        break;
    }
    return b;
  }
}

// Runs f.template operator()<T>() with the element type when a reduction
// needs arithmetic, else with an unsigned type of the element's width.
template <typename F>
void dispatch_scatter(Reduction r, int32_t dtype, F&& f) {
  if (r == Reduction::kNone) {
    dispatch_width_of(dtype, std::forward<F>(f));
  } else {
    dispatch_dtype(dtype, std::forward<F>(f));
  }
}

void any_scatter_elements(const KernelContext& ctx) {
  const Buffer& data = ctx.inputs[0];
  const Buffer& indices = ctx.inputs[1];
  const Buffer& updates = ctx.inputs[2];
  const Buffer& out = ctx.outputs[0];
  const char* op = ctx.opset < 11 ? "Scatter" : "ScatterElements";
  const ElementIndexer ix = element_indexer(ctx, data, indices, op);
  require(kScope, updates.shape == indices.shape,
          std::string(op) + ": updates differ from indices");
  copy_all(data, out);
  if (indices.count() == 0) return;
  const Reduction r = reduction_of(ctx.attr_string("reduction", "none"));
  // In index order, one at a time: duplicates resolve as ONNX's reference.
  dispatch_scatter(r, data.dtype, [&]<typename T>() {
    T* dst = out.as<T>();
    const T* upd = updates.as<const T>();
    Dims idx(indices.shape.size(), 0);
    int64_t i = 0;
    do {
      T& target = dst[ix.offset(idx, int_at(indices, i))];
      target = combine(r, target, upd[i]);
      ++i;
    } while (next_index(idx, indices.shape));
  });
}

void any_scatter_nd(const KernelContext& ctx) {
  const Buffer& data = ctx.inputs[0];
  const Buffer& indices = ctx.inputs[1];
  const Buffer& updates = ctx.inputs[2];
  const Buffer& out = ctx.outputs[0];
  const Dims& is = indices.shape;
  const Dims& ds = data.shape;
  require(kScope, !is.empty() && static_cast<size_t>(is.back()) <= ds.size(),
          "ScatterND: indices " + dims_string(is) + " do not fit data " + dims_string(ds));
  const auto k = static_cast<size_t>(is.back());
  Dims expect(is.begin(), is.end() - 1);
  expect.insert(expect.end(), ds.begin() + static_cast<int64_t>(k), ds.end());
  require(kScope, updates.shape == expect,
          "ScatterND: updates " + dims_string(updates.shape) + " should be " + dims_string(expect));
  copy_all(data, out);
  const int64_t slice = product(ds.begin() + static_cast<int64_t>(k), ds.end());
  const int64_t tuples = product(is.begin(), is.end() - 1);
  const Dims sub(ds.begin(), ds.begin() + static_cast<int64_t>(k));
  const Dims sub_strides = strides_of(sub);
  const Reduction r = reduction_of(ctx.attr_string("reduction", "none"));
  dispatch_scatter(r, data.dtype, [&]<typename T>() {
    T* dst = out.as<T>();
    const T* upd = updates.as<const T>();
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (size_t j = 0; j < k; ++j) {
        off += index_for(int_at(indices, t * static_cast<int64_t>(k) + static_cast<int64_t>(j)),
                         sub[j], "ScatterND") *
               sub_strides[j];
      }
      for (int64_t e = 0; e < slice; ++e) {
        T& target = dst[off * slice + e];
        target = combine(r, target, upd[t * slice + e]);
      }
    }
  });
}

// --- Expand, Tile ---------------------------------------------------------

void any_expand(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  // The shape input broadcasts with the input both ways.
  const Dims shape = read_ints(ctx.inputs[1]);
  const size_t rank = std::max(shape.size(), in.shape.size());
  Dims want(rank, 1);
  bool ok = true;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t a = i + in.shape.size() < rank ? 1 : in.shape[i + in.shape.size() - rank];
    const int64_t b = i + shape.size() < rank ? 1 : shape[i + shape.size() - rank];
    ok = ok && (a == b || a == 1 || b == 1);
    want[i] = a == 1 ? b : a;
  }
  if (!ok || want != out.shape) {
    index_out_of_range("Expand: shape " + dims_string(shape) + " gives " + dims_string(want) +
                       " but the model was compiled for " + dims_string(out.shape));
  }
  copy_view(ctx, in, broadcast_to(in.shape, out.shape), out.data);
}

// Tile reads dims (r0, d0, r1, d1, ...) with strides (0, s0, 0, s1, ...).
void any_tile(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  const Dims repeats = read_ints(ctx.inputs[1]);
  Dims want;
  for (size_t d = 0; d < in.shape.size() && d < repeats.size(); ++d) {
    want.push_back(checked_mul(in.shape[d], repeats[d], "Tile"));
  }
  if (want != out.shape || repeats.size() != in.shape.size()) {
    index_out_of_range("Tile: repeats " + dims_string(repeats) +
                       " do not give the compiled shape " + dims_string(out.shape));
  }
  copy_view(ctx, in, kernels::tile_view(in.shape, repeats), out.data);
}

// --- Pad ------------------------------------------------------------------

kernels::PadMode pad_mode(const std::string& mode) {
  if (mode == "constant") return kernels::PadMode::kConstant;
  if (mode == "edge") return kernels::PadMode::kEdge;
  if (mode == "wrap") return kernels::PadMode::kWrap;
  return kernels::PadMode::kReflect;
}

// The constant fill value's bytes in the data's dtype (zero by default).
std::vector<uint8_t> pad_value(const KernelContext& ctx, const Buffer& data) {
  std::vector<uint8_t> bytes(width(data), 0);
  if (ctx.opset >= 11) {
    if (ctx.has_input(2) && ctx.inputs[2].count() > 0 && ctx.inputs[2].dtype == data.dtype) {
      std::memcpy(bytes.data(), ctx.inputs[2].data, bytes.size());
    }
    return bytes;
  }
  const double value = ctx.attr_float("value", 0.0);
  dispatch_dtype(data.dtype, [&]<typename T>() {
    const T v = static_cast<T>(value);
    std::memcpy(bytes.data(), &v, sizeof(T));
  });
  return bytes;
}

void any_pad(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  const size_t rank = in.shape.size();
  const std::string mode = ctx.attr_string("mode", "constant");
  const Dims pads = ctx.opset < 2    ? ctx.attr_ints("paddings")
                    : ctx.opset < 11 ? ctx.attr_ints("pads")
                                     : read_ints(ctx.inputs[1]);
  Dims axes;
  if (ctx.opset >= 18 && ctx.has_input(3)) {
    for (int64_t a : read_ints(ctx.inputs[3])) axes.push_back(axis_for(a, rank, "Pad"));
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  }
  if (pads.size() != 2 * axes.size()) index_out_of_range("Pad: pads has the wrong length");
  Dims before(rank, 0), after(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    before[static_cast<size_t>(axes[i])] = pads[i];
    after[static_cast<size_t>(axes[i])] = pads[i + axes.size()];
  }
  kernels::PadParams pp{in.shape, out.shape, {}};
  for (size_t d = 0; d < rank; ++d) {
    if (checked_add(checked_add(in.shape[d], before[d], "Pad"), after[d], "Pad") != out.shape[d]) {
      index_out_of_range("Pad: pads " + dims_string(pads) + " do not give the compiled shape " +
                         dims_string(out.shape));
    }
    if (mode != "constant" && in.shape[d] == 0 && out.shape[d] > 0) {
      index_out_of_range("Pad: cannot pad an empty axis in mode '" + mode + "'");
    }
    pp.maps.push_back(kernels::pad_axis_map(in.shape[d], before[d], out.shape[d], pad_mode(mode)));
  }
  const std::vector<uint8_t> fill = pad_value(ctx, in);
  kernels::pad(pp, width(in), in.data, fill.data(), out.data, task_runner(ctx));
}

// --- Shape, Size, ConstantOfShape, Range ----------------------------------

void any_shape(const KernelContext& ctx) {
  const Dims& dims = ctx.inputs[0].shape;
  const auto rank = static_cast<int64_t>(dims.size());
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(ctx.attr_int("start", 0));
  const int64_t end = std::max(start, clamp(ctx.attr_int("end", rank)));
  require(kScope, ctx.outputs[0].count() == end - start, "Shape: output size differs");
  std::copy(dims.begin() + start, dims.begin() + end, ctx.outputs[0].as<int64_t>());
}

void any_size(const KernelContext& ctx) {
  require(kScope, ctx.outputs[0].count() == 1, "Size: output is not a scalar");
  ctx.outputs[0].as<int64_t>()[0] = ctx.inputs[0].count();
}

void any_constant_of_shape(const KernelContext& ctx) {
  const Buffer& out = ctx.outputs[0];
  if (read_ints(ctx.inputs[0]) != out.shape) {
    index_out_of_range("ConstantOfShape: input " + dims_string(read_ints(ctx.inputs[0])) +
                       " differs from the compiled shape " + dims_string(out.shape));
  }
  const Buffer* value = ctx.attr_tensor("value");
  std::vector<uint8_t> bytes(width(out), 0);
  if (value) {
    require(kScope, value->dtype == out.dtype && value->count() == 1,
            "ConstantOfShape: value does not match the output");
    std::memcpy(bytes.data(), value->data, bytes.size());
  } else {
    // Without a value the fill is float 0; another dtype lost its value.
    require(kScope, out.dtype == ENP_DTYPE_FLOAT32,
            "ConstantOfShape: the value attribute is missing");
  }
  dispatch_width_of(out.dtype, [&]<typename T>() {
    T v;
    std::memcpy(&v, bytes.data(), sizeof(T));
    std::fill_n(out.as<T>(), out.count(), v);
  });
}

template <typename T>
int64_t range_length(T start, T limit, T delta) {
  if constexpr (std::is_integral_v<T>) {
    if (delta == 0) index_out_of_range("Range: delta is 0");
    if (delta > 0 ? limit <= start : limit >= start) return 0;
    const auto a = static_cast<int64_t>(start), b = static_cast<int64_t>(limit);
    const uint64_t span = delta > 0 ? static_cast<uint64_t>(b) - static_cast<uint64_t>(a)
                                    : static_cast<uint64_t>(a) - static_cast<uint64_t>(b);
    const uint64_t step = delta > 0 ? static_cast<uint64_t>(delta)
                                    : 0 - static_cast<uint64_t>(static_cast<int64_t>(delta));
    return static_cast<int64_t>(span / step + (span % step != 0));
  } else {
    const double n = std::ceil((double{limit} - double{start}) / double{delta});
    if (!(n < 9.0e18)) index_out_of_range("Range: the length is not finite");
    return n > 0 ? static_cast<int64_t>(n) : 0;
  }
}

// float16 and bfloat16 Range: the length from the widened values, each
// element start + i * delta computed in double and rounded once.
void half_float_range(const KernelContext& ctx) {
  const Buffer& out = ctx.outputs[0];
  const bool bf16 = out.dtype == ENP_DTYPE_BFLOAT16;
  auto value = [&](size_t input) {
    const uint16_t bits = ctx.inputs[input].as<const uint16_t>()[0];
    return bf16 ? double{bfloat16_to_float(bits)} : half_to_double(bits);
  };
  const double start = value(0), delta = value(2);
  const int64_t n = range_length(start, value(1), delta);
  if (n != out.count()) {
    index_out_of_range("Range: start, limit and delta give " + std::to_string(n) +
                       " values but the model was compiled for " + std::to_string(out.count()));
  }
  auto* dst = out.as<uint16_t>();
  for (int64_t i = 0; i < n; ++i) {
    const double v = start + static_cast<double>(i) * delta;
    dst[i] = bf16 ? bfloat16_from_double(v) : half_from_double(v);
  }
}

void num_range(const KernelContext& ctx) {
  const Buffer& out = ctx.outputs[0];
  if (is_half_float(out.dtype)) return half_float_range(ctx);
  dispatch_dtype(out.dtype, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      return;  // not a Range type; the table excludes it
    } else {
      const T start = ctx.inputs[0].as<const T>()[0];
      const T delta = ctx.inputs[2].as<const T>()[0];
      const int64_t n = range_length(start, ctx.inputs[1].as<const T>()[0], delta);
      if (n != out.count()) {
        index_out_of_range("Range: start, limit and delta give " + std::to_string(n) +
                           " values but the model was compiled for " + std::to_string(out.count()));
      }
      T* dst = out.as<T>();
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_integral_v<T>) {
          // Wrapping arithmetic: the values stay in range, a product may not.
          dst[i] = static_cast<T>(static_cast<uint64_t>(start) +
                                  static_cast<uint64_t>(i) * static_cast<uint64_t>(delta));
        } else {
          dst[i] = static_cast<T>(double{start} + static_cast<double>(i) * double{delta});
        }
      }
    }
  });
}

// --- Trilu, OneHot, EyeLike -----------------------------------------------

void any_trilu(const KernelContext& ctx) {
  const Buffer& in = ctx.inputs[0];
  const Buffer& out = ctx.outputs[0];
  require(kScope, in.shape.size() >= 2 && in.shape == out.shape, "Trilu: bad shapes");
  const int64_t k = ctx.has_input(1) && ctx.inputs[1].count() > 0 ? int_at(ctx.inputs[1], 0) : 0;
  const bool upper = ctx.attr_int("upper", 1) != 0;
  const int64_t rows = in.shape[in.shape.size() - 2], cols = in.shape.back();
  const int64_t mats = rows * cols == 0 ? 0 : in.count() / (rows * cols);
  dispatch_width_of(in.dtype, [&]<typename T>() {
    const T* src = in.as<const T>();
    T* dst = out.as<T>();
    for (int64_t m = 0; m < mats; ++m) {
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t e = (m * rows + i) * cols + j;
          // j - i is small; comparing it with k cannot overflow.
          const bool keep = upper ? j - i >= k : j - i <= k;
          dst[e] = keep ? src[e] : T{0};
        }
      }
    }
  });
}

// Element i of a numeric tensor as double.
double number_at(const Buffer& b, int64_t i) {
  double v = 0;
  dispatch_dtype(b.dtype, [&]<typename T>() { v = static_cast<double>(b.as<const T>()[i]); });
  return v;
}

void any_one_hot(const KernelContext& ctx) {
  const Buffer& indices = ctx.inputs[0];
  const Buffer& values = ctx.inputs[2];
  const Buffer& out = ctx.outputs[0];
  const size_t rank = out.shape.size();
  const auto axis = static_cast<size_t>(axis_for(ctx.attr_int("axis", -1), rank, "OneHot"));
  if (ctx.inputs[1].count() != 1) index_out_of_range("OneHot: depth must hold one value");
  const double depth_value = number_at(ctx.inputs[1], 0);
  const int64_t depth = out.shape[axis];
  if (!(depth_value >= 1 && depth_value < 9.0e18) || static_cast<int64_t>(depth_value) != depth) {
    index_out_of_range("OneHot: depth " + std::to_string(depth_value) +
                       " differs from the compiled depth " + std::to_string(depth));
  }
  Dims expect = indices.shape;
  expect.insert(expect.begin() + static_cast<int64_t>(axis), depth);
  require(kScope, expect == out.shape && values.count() == 2 && values.dtype == out.dtype,
          "OneHot: shapes do not fit");
  const int64_t outer =
      product(indices.shape.begin(), indices.shape.begin() + static_cast<int64_t>(axis));
  const int64_t inner =
      product(indices.shape.begin() + static_cast<int64_t>(axis), indices.shape.end());
  dispatch_width_of(out.dtype, [&]<typename T>() {
    const T off = values.as<const T>()[0], on = values.as<const T>()[1];
    T* dst = out.as<T>();
    std::fill_n(dst, out.count(), off);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        double v = std::trunc(number_at(indices, o * inner + i));
        if (v < 0) v += static_cast<double>(depth);
        // Out-of-range indices leave the row all off, as ONNX defines.
        if (v >= 0 && v < static_cast<double>(depth)) {
          dst[(o * depth + static_cast<int64_t>(v)) * inner + i] = on;
        }
      }
    }
  });
}

// The bytes of 1 in `dtype`.
std::vector<uint8_t> one_bytes(int32_t dtype) {
  std::vector<uint8_t> bytes(sdk::dtype_size(dtype), 0);
  if (is_half_float(dtype)) {
    const uint16_t one = dtype == ENP_DTYPE_FLOAT16 ? 0x3C00 : 0x3F80;
    std::memcpy(bytes.data(), &one, 2);
  }
  dispatch_dtype(dtype, [&]<typename T>() {
    const T one = static_cast<T>(1);
    std::memcpy(bytes.data(), &one, sizeof(T));
  });
  return bytes;
}

void any_eye_like(const KernelContext& ctx) {
  const Buffer& out = ctx.outputs[0];
  require(kScope, out.shape.size() == 2 && out.shape == ctx.inputs[0].shape,
          "EyeLike: shapes do not fit");
  const int64_t k = ctx.attr_int("k", 0);
  const std::vector<uint8_t> one = one_bytes(out.dtype);
  dispatch_width_of(out.dtype, [&]<typename T>() {
    T v;
    std::memcpy(&v, one.data(), sizeof(T));
    T* dst = out.as<T>();
    std::fill_n(dst, out.count(), T{0});
    const int64_t rows = out.shape[0], cols = out.shape[1];
    if (k >= cols || k <= -rows) return;  // no diagonal; i + k below cannot overflow
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t j = i + k;
      if (j >= 0 && j < cols) dst[i * cols + j] = v;
    }
  });
}

// --- lowering checks ------------------------------------------------------

int32_t input_dtype(const sdk::NodeView& node, const sdk::GraphView& graph, size_t i) {
  if (node.input(i).empty()) return ENP_DTYPE_UNDEFINED;
  const auto v = graph.value(node.input(i));
  return v ? v->dtype() : ENP_DTYPE_UNDEFINED;
}

// Inputs [first, last] (when present) must be int32 or int64.
std::optional<std::string> int_inputs(const sdk::NodeView& node, const sdk::GraphView& graph,
                                      size_t first, size_t last) {
  for (size_t i = first; i <= last && i < node.input_count(); ++i) {
    const int32_t d = input_dtype(node, graph, i);
    if (d != ENP_DTYPE_UNDEFINED && !(ENP_DTYPE_BIT(d) & kIndexDtypes)) {
      return "input " + std::to_string(i) + " is " + sdk::dtype_name(d) +
             "; only int32 and int64 are supported";
    }
  }
  return std::nullopt;
}

std::optional<std::string> check_second_int(const sdk::NodeView& node, const sdk::GraphView& g) {
  return int_inputs(node, g, 1, 1);
}

std::optional<std::string> check_slice(const sdk::NodeView& node, const sdk::GraphView& g) {
  return int_inputs(node, g, 1, 4);
}

std::optional<std::string> check_gather_nd(const sdk::NodeView& node, const sdk::GraphView& g) {
  if (node.attr_int("batch_dims", 0) < 0) return "batch_dims must be non-negative";
  return int_inputs(node, g, 1, 1);
}

std::optional<std::string> check_scatter(const sdk::NodeView& node, const sdk::GraphView& g) {
  const std::string r = node.attr_string("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min") {
    return "reduction '" + r + "' is not one of none, add, mul, max, min";
  }
  const int32_t d = input_dtype(node, g, 0);
  if (r != "none" && is_half_float(d)) {
    return "reductions on " + std::string(sdk::dtype_name(d)) + " are not supported";
  }
  return int_inputs(node, g, 1, 1);
}

std::optional<std::string> check_pad(const sdk::NodeView& node, const sdk::GraphView& g) {
  const std::string mode = node.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
    return "mode '" + mode + "' is not one of constant, reflect, edge, wrap";
  }
  if (g.opset("") < 11) {
    const int32_t d = input_dtype(node, g, 0);
    if (is_half_float(d) && node.attr_float("value", 0.0) != 0.0) {
      return "a non-zero value attribute on " + std::string(sdk::dtype_name(d)) +
             " is not supported";
    }
    return std::nullopt;
  }
  if (!node.input(2).empty() && input_dtype(node, g, 2) != input_dtype(node, g, 0)) {
    return "constant_value must have the data's dtype";
  }
  if (auto p = int_inputs(node, g, 1, 1)) return p;
  return int_inputs(node, g, 3, 3);
}

std::optional<std::string> check_depth_to_space(const sdk::NodeView& node, const sdk::GraphView&) {
  const std::string mode = node.attr_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return "mode '" + mode + "' is not DCR or CRD";
  return std::nullopt;
}

// OneHot reads indices and depth as numbers of any type but the 16-bit
// floats.
std::optional<std::string> check_one_hot(const sdk::NodeView& node, const sdk::GraphView& g) {
  for (size_t i = 0; i < 2; ++i) {
    const int32_t d = input_dtype(node, g, i);
    if (is_half_float(d) || d == ENP_DTYPE_BOOL || sdk::dtype_size(d) == 0) {
      return "input " + std::to_string(i) + " of dtype " + sdk::dtype_name(d) + " is not supported";
    }
  }
  return std::nullopt;
}

std::optional<std::string> check_eye_like(const sdk::NodeView& node, const sdk::GraphView& g) {
  const auto out = g.value(node.output(0));
  if (!out || sdk::dtype_size(out->dtype()) == 0) return "the output dtype is not supported";
  return std::nullopt;
}

constexpr uint32_t kRangeDtypes =
    kF32 | ENP_DTYPE_BIT(ENP_DTYPE_FLOAT64) | ENP_DTYPE_BIT(ENP_DTYPE_FLOAT16) |
    ENP_DTYPE_BIT(ENP_DTYPE_BFLOAT16) | ENP_DTYPE_BIT(ENP_DTYPE_INT16) |
    ENP_DTYPE_BIT(ENP_DTYPE_INT32) | ENP_DTYPE_BIT(ENP_DTYPE_INT64);
constexpr uint32_t kNumbers = kRangeDtypes | kInts | ENP_DTYPE_BIT(ENP_DTYPE_UINT16) |
                              ENP_DTYPE_BIT(ENP_DTYPE_UINT32) | ENP_DTYPE_BIT(ENP_DTYPE_UINT64);

}  // namespace

std::vector<OpEntry> shape_ops() {
  return {
      {"Concat", 1, 0, kAllDtypes, "", nullptr, &any_concat},
      {"ConstantOfShape", 9, 0, kIndexDtypes, "value of any dtype", nullptr,
       &any_constant_of_shape},
      {"DepthToSpace", 1, 0, kAllDtypes, "DCR and CRD modes", &check_depth_to_space,
       &any_depth_to_space},
      {"EyeLike", 9, 0, kAllDtypes, "", &check_eye_like, &any_eye_like},
      {"Expand", 8, 0, kAllDtypes, "shape int32/int64", &check_second_int, &any_expand},
      {"Flatten", 1, 0, kAllDtypes, "", nullptr, &any_copy},
      {"Gather", 1, 0, kAllDtypes, "indices int32/int64, checked at run time", &check_second_int,
       &any_gather},
      {"GatherElements", 11, 0, kAllDtypes, "indices int32/int64, checked at run time",
       &check_second_int, &any_gather_elements},
      {"GatherND", 11, 0, kAllDtypes, "indices int32/int64, checked at run time", &check_gather_nd,
       &any_gather_nd},
      {"OneHot", 9, 0, kNumbers, "indices and depth of any numeric dtype but float16/bfloat16",
       &check_one_hot, &any_one_hot},
      {"Pad", 1, 0, kAllDtypes, "constant, reflect, edge and wrap modes", &check_pad, &any_pad},
      {"Range", 11, 0, kRangeDtypes, "float16/bfloat16 computed in float64, rounded once", nullptr,
       &num_range},
      {"Reshape", 1, 0, kAllDtypes, "", &check_second_int, &any_reshape},
      {"Scatter", 9, 10, kAllDtypes, "indices int32/int64, checked at run time", &check_scatter,
       &any_scatter_elements},
      {"ScatterElements", 11, 0, kAllDtypes,
       "reductions none/add/mul/max/min (not on float16/bfloat16); applied in index order",
       &check_scatter, &any_scatter_elements},
      {"ScatterND", 11, 0, kAllDtypes,
       "reductions none/add/mul/max/min (not on float16/bfloat16); applied in index order",
       &check_scatter, &any_scatter_nd},
      {"Shape", 1, 0, kAllDtypes, "", nullptr, &any_shape},
      {"Size", 1, 0, kAllDtypes, "", nullptr, &any_size},
      {"Slice", 1, 0, kAllDtypes, "negative steps; ONNX clamping", &check_slice, &any_slice},
      {"SpaceToDepth", 1, 0, kAllDtypes, "", nullptr, &any_space_to_depth},
      {"Split", 2, 0, kAllDtypes, "", &check_second_int, &any_split},
      {"Squeeze", 1, 0, kAllDtypes, "", &check_second_int, &any_copy},
      {"Tile", 6, 0, kAllDtypes, "", &check_second_int, &any_tile},
      {"Transpose", 1, 0, kAllDtypes, "", nullptr, &any_transpose},
      {"Trilu", 14, 0, kAllDtypes, "", &check_second_int, &any_trilu},
      {"Unsqueeze", 1, 0, kAllDtypes, "", &check_second_int, &any_copy},
  };
}

}  // namespace eulernpu::kit
