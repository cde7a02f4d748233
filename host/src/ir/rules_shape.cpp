// Rules of the data-movement and shape ops (Reshape, Transpose, Gather, ...)
// and the constant folding of shape arithmetic.
//
// Folds move bytes, so they work for every dtype of known width; only Range
// and ConstantOfShape look at values. Exporters (PyTorch's dynamic reshape)
// emit Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains: folding
// each link turns the chain into one constant shape.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ir/onnx_convert.hpp"
#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

using Dims = std::vector<int64_t>;
using Folded = std::optional<std::vector<Tensor>>;

// Known rank, unknown extents.
ValueType ranked(DType dtype, size_t rank) { return ValueType{dtype, Dims(rank, -1), true}; }

int64_t rank_of(const ValueType& t) { return static_cast<int64_t>(t.dims.size()); }

// Product of dims; -1 if any is unknown. Fails instead of overflowing.
int64_t product(const InferContext& ctx, Dims::const_iterator begin, Dims::const_iterator end) {
  int64_t n = 1;
  bool unknown_dim = false;
  for (auto it = begin; it != end; ++it) {
    if (*it < 0) {
      unknown_dim = true;
    } else if (__builtin_mul_overflow(n, *it, &n)) {
      ctx.fail("the tensor has more elements than int64 can count");
    }
  }
  return unknown_dim ? -1 : n;
}

int64_t product(const InferContext& ctx, const Dims& dims) {
  return product(ctx, dims.begin(), dims.end());
}

// An int list an op reads from attribute `attr` before opset `since` and
// from input `index` from then on.
struct IntList {
  bool given = false;  // the attribute or input is present
  bool known = false;  // its values are known now (attribute or constant)
  Dims values;
};

IntList int_list(const InferContext& ctx, const char* attr, size_t index, int64_t since) {
  IntList l;
  if (ctx.opset() < since) {
    l.known = true;
    l.given = ctx.has_attr(attr);
    if (l.given) l.values = ctx.attr_ints(attr);
    return l;
  }
  if (!ctx.has_input(index)) {
    l.known = true;
    return l;
  }
  l.given = true;
  // A statically empty input holds no values to wait for.
  const ValueType& t = ctx.input(index);
  if (t.is_static() && t.element_count() == 0) {
    l.known = true;
    return l;
  }
  if (auto v = ctx.constant_ints(index)) {
    l.known = true;
    l.values = std::move(*v);
  }
  return l;
}

// --- fold helpers: every fold moves whole elements as bytes ---------------

size_t width(const Tensor& t) { return dtype_size(t.dtype); }

Tensor make(const ValueType& type, std::vector<uint8_t> bytes) {
  Tensor t;
  t.dtype = type.dtype;
  t.shape = type.dims;
  t.data = std::move(bytes);
  return t;
}

Dims strides_of(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// The elements of a strided view of `in` (offset and strides in elements,
// strides may be 0 or negative) as a dense tensor of `dims`.
std::vector<uint8_t> gather_view(const Tensor& in, const Dims& dims, int64_t offset,
                                 const Dims& strides) {
  const size_t w = width(in);
  uint64_t n = 1;
  for (int64_t d : dims) n *= static_cast<uint64_t>(d);
  std::vector<uint8_t> out(n * w);
  Dims idx(dims.size(), 0);
  int64_t src = offset;
  for (uint64_t i = 0; i < n; ++i) {
    std::memcpy(out.data() + i * w, in.data.data() + static_cast<uint64_t>(src) * w, w);
    for (size_t d = dims.size(); d-- > 0;) {
      src += strides[d];
      if (++idx[d] < dims[d]) break;
      src -= strides[d] * dims[d];
      idx[d] = 0;
    }
  }
  return out;
}

// Data movement folds need a known element width and data that fills the
// shape (a malformed initializer stays unfolded and fails in the backend).
bool foldable(const Tensor* t) {
  return t && width(*t) > 0 && t->data.size() == t->element_count() * width(*t);
}

// The same bytes under the output's shape (Reshape, Flatten, Squeeze, ...).
Folded same_bytes_fold(InferContext& ctx) {
  if (!foldable(ctx.constant(0))) return std::nullopt;
  return std::vector<Tensor>{make(ctx.outputs()[0], ctx.constant(0)->data)};
}

// --- Reshape, Flatten, Squeeze, Unsqueeze ---------------------------------

// Resolves 0 (copy, unless allowzero) and -1 (inferred) in a target shape.
Dims reshape_dims(const InferContext& ctx, const ValueType& in, Dims shape, bool allowzero) {
  const auto minus_one = std::find(shape.begin(), shape.end(), -1);
  ctx.require(std::count(shape.begin(), shape.end(), -1) <= 1, "shape has more than one -1");
  const bool has_zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
  ctx.require(!(allowzero && has_zero && minus_one != shape.end()),
              "with allowzero=1 the shape cannot hold both 0 and -1");
  const auto inferred = minus_one - shape.begin();
  for (size_t i = 0; i < shape.size(); ++i) {
    ctx.require(shape[i] >= -1, "shape entry " + std::to_string(shape[i]) + " is invalid");
    if (shape[i] != 0 || allowzero) continue;
    ctx.require(!in.known || i < in.dims.size(), "shape entry " + std::to_string(i) +
                                                     " is 0 (copy) but the input has rank " +
                                                     std::to_string(in.dims.size()));
    shape[i] = in.known ? in.dims[i] : -1;
  }
  const int64_t total = in.known ? product(ctx, in.dims) : -1;
  if (minus_one == shape.end()) {
    const int64_t count = product(ctx, shape);
    ctx.require(total < 0 || count < 0 || count == total,
                "cannot reshape " + shape_string(in.dims) + " (" + std::to_string(total) +
                    " elements) to " + shape_string(shape));
    return shape;
  }
  Dims rest = shape;
  rest.erase(rest.begin() + inferred);
  const int64_t known = product(ctx, rest);
  if (total < 0 || known < 0) return shape;  // the -1 stays unknown
  ctx.require(known > 0 && total % known == 0,
              "cannot reshape " + shape_string(in.dims) + " to " + shape_string(shape));
  shape[static_cast<size_t>(inferred)] = total / known;
  return shape;
}

void reshape(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  std::optional<Dims> shape;
  if (ctx.opset() < 5) {
    shape = ctx.attr_ints("shape");
  } else {
    shape = ctx.constant_ints(1);
    if (!shape) {
      // Unknown values; the rank is the shape input's length, if known.
      const ValueType& s = ctx.input(1);
      const bool rank_known = s.known && s.dims.size() == 1 && s.dims[0] >= 0;
      return ctx.set_output(
          0, rank_known ? ranked(in.dtype, static_cast<size_t>(s.dims[0])) : unknown(in.dtype));
    }
  }
  const bool allowzero = ctx.attr_int("allowzero", 0) != 0;
  ctx.set_output(0, ValueType{in.dtype, reshape_dims(ctx, in, *shape, allowzero), true});
}

void flatten(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  if (!in.known) return ctx.set_output(0, ranked(in.dtype, 2));
  const int64_t rank = rank_of(in);
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  ctx.require(axis >= 0 && axis <= rank, "axis " + std::to_string(ctx.attr_int("axis", 1)) +
                                             " is out of range for rank " + std::to_string(rank));
  ctx.set_output(0, ValueType{in.dtype,
                              {product(ctx, in.dims.begin(), in.dims.begin() + axis),
                               product(ctx, in.dims.begin() + axis, in.dims.end())},
                              true});
}

void squeeze(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  const IntList axes = int_list(ctx, "axes", 1, 13);
  if (!in.known || !axes.known) return ctx.set_output(0, unknown(in.dtype));
  Dims out;
  if (!axes.given || axes.values.empty()) {
    // Without axes every 1 goes: an unknown dim leaves the rank unknown.
    for (int64_t d : in.dims) {
      if (d < 0) return ctx.set_output(0, unknown(in.dtype));
      if (d != 1) out.push_back(d);
    }
    return ctx.set_output(0, ValueType{in.dtype, out, true});
  }
  const Dims a = normalize_axes(ctx, axes.values, rank_of(in));
  for (int64_t d = 0; d < rank_of(in); ++d) {
    const int64_t dim = in.dims[static_cast<size_t>(d)];
    if (std::find(a.begin(), a.end(), d) == a.end()) {
      out.push_back(dim);
    } else {
      ctx.require(dim == 1 || dim < 0,
                  "cannot squeeze axis " + std::to_string(d) + " of size " + std::to_string(dim));
    }
  }
  ctx.set_output(0, ValueType{in.dtype, out, true});
}

void unsqueeze(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  const IntList axes = int_list(ctx, "axes", 1, 13);
  if (!in.known) return ctx.set_output(0, unknown(in.dtype));
  if (!axes.known) {
    const ValueType& a = ctx.input(1);
    if (a.known && a.dims.size() == 1 && a.dims[0] >= 0) {
      return ctx.set_output(0, ranked(in.dtype, in.dims.size() + static_cast<size_t>(a.dims[0])));
    }
    return ctx.set_output(0, unknown(in.dtype));
  }
  ctx.require(!axes.values.empty(), "axes is required and must not be empty");
  const int64_t rank = rank_of(in) + static_cast<int64_t>(axes.values.size());
  const Dims a = normalize_axes(ctx, axes.values, rank);
  Dims out;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    out.push_back(std::find(a.begin(), a.end(), d) != a.end() ? 1 : in.dims[next++]);
  }
  ctx.set_output(0, ValueType{in.dtype, out, true});
}

// --- Transpose ------------------------------------------------------------

Dims transpose_perm(const InferContext& ctx, size_t rank) {
  Dims perm = ctx.attr_ints("perm");
  if (perm.empty() && !ctx.has_attr("perm")) {
    for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  ctx.require(perm.size() == rank, "perm has " + std::to_string(perm.size()) +
                                       " entries for an input of rank " + std::to_string(rank));
  // Normalizing rejects duplicates: a valid perm is a permutation.
  return normalize_axes(ctx, perm, static_cast<int64_t>(rank));
}

void transpose(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  if (!in.known) return ctx.set_output(0, unknown(in.dtype));
  const Dims perm = transpose_perm(ctx, in.dims.size());
  Dims out;
  for (int64_t p : perm) out.push_back(in.dims[static_cast<size_t>(p)]);
  ctx.set_output(0, ValueType{in.dtype, out, true});
}

Folded transpose_fold(InferContext& ctx) {
  const Tensor* in = ctx.constant(0);
  if (!foldable(in)) return std::nullopt;
  const Dims perm = transpose_perm(ctx, in->shape.size());
  const Dims s = strides_of(in->shape);
  Dims strides;
  for (int64_t p : perm) strides.push_back(s[static_cast<size_t>(p)]);
  const ValueType& out = ctx.outputs()[0];
  return std::vector<Tensor>{make(out, gather_view(*in, out.dims, 0, strides))};
}

// --- Concat, Split --------------------------------------------------------

void concat(InferContext& ctx) {
  const ValueType* first = nullptr;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (ctx.has_input(i) && ctx.input(i).known && !first) first = &ctx.input(i);
  }
  ctx.require(ctx.input_count() > 0, "Concat needs at least one input");
  const DType dtype = ctx.input(0).dtype;
  if (!first) return ctx.set_output(0, unknown(dtype));
  const int64_t axis = ctx.axis(ctx.attr_int("axis", ctx.opset() < 4 ? 1 : 0), rank_of(*first));
  Dims out = first->dims;
  out[static_cast<size_t>(axis)] = 0;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    const ValueType& t = ctx.input(i);
    ctx.require(t.dtype == dtype, "inputs have different dtypes");
    if (!t.known) {
      out[static_cast<size_t>(axis)] = -1;
      continue;
    }
    ctx.require(t.dims.size() == out.size(),
                "inputs have different ranks: " + shape_string(first->dims) + " and " +
                    shape_string(t.dims));
    for (size_t d = 0; d < out.size(); ++d) {
      int64_t& o = out[d];
      if (static_cast<int64_t>(d) == axis) {
        o = o < 0 || t.dims[d] < 0 ? -1 : o + t.dims[d];
      } else if (o < 0) {
        o = t.dims[d];
      } else {
        ctx.require(t.dims[d] < 0 || t.dims[d] == o,
                    "inputs " + shape_string(first->dims) + " and " + shape_string(t.dims) +
                        " differ outside axis " + std::to_string(axis));
      }
    }
  }
  ctx.set_output(0, ValueType{dtype, out, true});
}

Folded concat_fold(InferContext& ctx) {
  const ValueType& out = ctx.outputs()[0];
  const auto axis =
      static_cast<size_t>(ctx.axis(ctx.attr_int("axis", ctx.opset() < 4 ? 1 : 0), rank_of(out)));
  const int64_t outer =
      product(ctx, out.dims.begin(), out.dims.begin() + static_cast<int64_t>(axis));
  const int64_t inner =
      product(ctx, out.dims.begin() + static_cast<int64_t>(axis) + 1, out.dims.end());
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (!foldable(ctx.constant(i))) return std::nullopt;
    ins.push_back(ctx.constant(i));
  }
  const size_t w = width(*ins[0]);
  std::vector<uint8_t> bytes;
  bytes.reserve(out.element_count() * w);
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor* t : ins) {
      const auto block = static_cast<size_t>(t->shape[axis] * inner) * w;
      const uint8_t* src = t->data.data() + static_cast<size_t>(o) * block;
      bytes.insert(bytes.end(), src, src + block);
    }
  }
  return std::vector<Tensor>{make(out, std::move(bytes))};
}

// Sizes of Split's outputs along the axis; -1 where unknown.
Dims split_sizes(InferContext& ctx, int64_t dim) {
  const size_t n = ctx.output_count();
  const IntList split = int_list(ctx, "split", 1, 13);
  if (split.given && !split.known) return Dims(n, -1);
  if (split.given) {
    ctx.require(split.values.size() == n, "split has " + std::to_string(split.values.size()) +
                                              " entries for " + std::to_string(n) + " outputs");
    int64_t sum = 0;
    for (int64_t s : split.values) {
      ctx.require(s >= 0, "split entries must be non-negative");
      sum += s;
    }
    ctx.require(dim < 0 || sum == dim, "split sums to " + std::to_string(sum) +
                                           " but the axis has size " + std::to_string(dim));
    return split.values;
  }
  if (ctx.opset() >= 18) {
    ctx.require(ctx.has_attr("num_outputs"), "Split needs split or num_outputs");
    ctx.require(ctx.attr_int("num_outputs", 0) == static_cast<int64_t>(n),
                "num_outputs does not match the number of outputs");
  }
  if (dim < 0) return Dims(n, -1);
  const auto parts = static_cast<int64_t>(n);
  if (ctx.opset() < 18) {
    ctx.require(dim % parts == 0, "axis of size " + std::to_string(dim) + " does not split into " +
                                      std::to_string(n) + " equal parts");
    return Dims(n, dim / parts);
  }
  // Opset 18: ceil-sized chunks, the last one smaller.
  const int64_t chunk = (dim + parts - 1) / parts;
  ctx.require(chunk * (parts - 1) <= dim, "axis of size " + std::to_string(dim) +
                                              " cannot split into " + std::to_string(n) + " parts");
  Dims sizes(n, chunk);
  sizes.back() = dim - chunk * (parts - 1);
  return sizes;
}

void split(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  if (!in.known) {
    for (size_t i = 0; i < ctx.output_count(); ++i) ctx.set_output(i, unknown(in.dtype));
    return;
  }
  const auto axis = static_cast<size_t>(ctx.axis(ctx.attr_int("axis", 0), rank_of(in)));
  const Dims sizes = split_sizes(ctx, in.dims[axis]);
  for (size_t i = 0; i < ctx.output_count(); ++i) {
    ValueType out = in;
    out.dims[axis] = sizes[i];
    ctx.set_output(i, out);
  }
}

Folded split_fold(InferContext& ctx) {
  const Tensor* in = ctx.constant(0);
  if (!foldable(in)) return std::nullopt;
  const auto axis = static_cast<int64_t>(ctx.axis(ctx.attr_int("axis", 0), rank_of(ctx.input(0))));
  const Dims strides = strides_of(in->shape);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (size_t i = 0; i < ctx.output_count(); ++i) {
    const ValueType& t = ctx.outputs()[i];
    out.push_back(
        make(t, gather_view(*in, t.dims, start * strides[static_cast<size_t>(axis)], strides)));
    start += t.dims[static_cast<size_t>(axis)];
  }
  return out;
}

// --- Slice ----------------------------------------------------------------

// One axis of a slice: the first element, the step and the length.
struct SliceAxis {
  int64_t start = 0, step = 1, length = -1;
};

// ONNX's clamping: start and end are adjusted for negatives, then clamped
// to [0, dim] for positive steps and to [0, dim-1] / [-1, dim-1] for
// negative ones.
SliceAxis slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  SliceAxis s;
  s.step = step;
  if (dim < 0) return s;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  // Lengths as (distance - 1) / |step| + 1: no overflow for any step.
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    s.length = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    const uint64_t magnitude = 0 - static_cast<uint64_t>(step);
    s.length = start > end
                   ? static_cast<int64_t>(static_cast<uint64_t>(start - end - 1) / magnitude) + 1
                   : 0;
  }
  s.start = start;
  return s;
}

// Per-dimension slices, or nullopt when the arguments are not constants
// (then `touched` lists the sliced axes, if known).
std::optional<std::vector<SliceAxis>> slice_axes(InferContext& ctx, const ValueType& in,
                                                 std::optional<Dims>& touched) {
  const int64_t rank = rank_of(in);
  const IntList starts = int_list(ctx, "starts", 1, 10);
  const IntList ends = int_list(ctx, "ends", 2, 10);
  const IntList axes = int_list(ctx, "axes", 3, 10);
  const IntList steps = int_list(ctx, "steps", 4, 10);
  if (axes.known) {
    Dims a = axes.values;
    if (!axes.given) {
      if (!starts.known) return std::nullopt;
      for (size_t i = 0; i < starts.values.size(); ++i) a.push_back(static_cast<int64_t>(i));
    }
    touched = normalize_axes(ctx, a, rank);
  }
  if (!starts.known || !ends.known || !axes.known || !steps.known) return std::nullopt;
  const size_t n = starts.values.size();
  ctx.require(
      ends.values.size() == n && touched->size() == n && (!steps.given || steps.values.size() == n),
      "starts, ends, axes and steps must have the same length");
  std::vector<SliceAxis> out(in.dims.size());
  for (size_t d = 0; d < out.size(); ++d) out[d].length = in.dims[d];
  for (size_t i = 0; i < n; ++i) {
    const int64_t step = steps.given ? steps.values[i] : 1;
    ctx.require(step != 0, "steps must not be 0");
    const auto d = static_cast<size_t>((*touched)[i]);
    out[d] = slice_axis(in.dims[d], starts.values[i], ends.values[i], step);
  }
  return out;
}

void slice(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  if (!in.known) return ctx.set_output(0, unknown(in.dtype));
  std::optional<Dims> touched;
  const auto axes = slice_axes(ctx, in, touched);
  ValueType out = in;
  if (!axes) {
    if (!touched) return ctx.set_output(0, ranked(in.dtype, in.dims.size()));
    for (int64_t a : *touched) out.dims[static_cast<size_t>(a)] = -1;
    return ctx.set_output(0, out);
  }
  for (size_t d = 0; d < out.dims.size(); ++d) out.dims[d] = (*axes)[d].length;
  ctx.set_output(0, out);
}

Folded slice_fold(InferContext& ctx) {
  const Tensor* in = ctx.constant(0);
  if (!foldable(in)) return std::nullopt;
  std::optional<Dims> touched;
  const auto axes = slice_axes(ctx, ctx.input(0), touched);
  if (!axes) return std::nullopt;
  const Dims s = strides_of(in->shape);
  int64_t offset = 0;
  Dims strides;
  for (size_t d = 0; d < s.size(); ++d) {
    const SliceAxis& a = (*axes)[d];
    offset += a.length > 0 ? a.start * s[d] : 0;
    // Two or more elements imply |step| < dim: step * stride cannot overflow.
    strides.push_back(a.length > 1 ? a.step * s[d] : 0);
  }
  const ValueType& out = ctx.outputs()[0];
  return std::vector<Tensor>{make(out, gather_view(*in, out.dims, offset, strides))};
}

// --- Gather family --------------------------------------------------------

void gather(InferContext& ctx) {
  const ValueType& data = ctx.input(0);
  const ValueType& indices = ctx.input(1);
  if (!data.known || !indices.known) return ctx.set_output(0, unknown(data.dtype));
  const auto axis = ctx.axis(ctx.attr_int("axis", 0), rank_of(data));
  Dims out(data.dims.begin(), data.dims.begin() + axis);
  out.insert(out.end(), indices.dims.begin(), indices.dims.end());
  out.insert(out.end(), data.dims.begin() + axis + 1, data.dims.end());
  ctx.set_output(0, ValueType{data.dtype, out, true});
}

// Out-of-range indices stay unfolded: the backend reports them at run time.
Folded gather_fold(InferContext& ctx) {
  const Tensor* data = ctx.constant(0);
  const auto indices = ctx.constant_ints(1);
  if (!foldable(data) || !indices) return std::nullopt;
  const auto axis = ctx.axis(ctx.attr_int("axis", 0), rank_of(ctx.input(0)));
  const int64_t dim = data->shape[static_cast<size_t>(axis)];
  const int64_t outer = product(ctx, data->shape.begin(), data->shape.begin() + axis);
  const int64_t inner = product(ctx, data->shape.begin() + axis + 1, data->shape.end());
  const size_t block = static_cast<size_t>(inner) * width(*data);
  std::vector<uint8_t> bytes;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : *indices) {
      if (i < -dim || i >= dim) return std::nullopt;
      const uint8_t* src =
          data->data.data() + static_cast<size_t>(o * dim + (i < 0 ? i + dim : i)) * block;
      bytes.insert(bytes.end(), src, src + block);
    }
  }
  return std::vector<Tensor>{make(ctx.outputs()[0], std::move(bytes))};
}

void gather_elements(InferContext& ctx) {
  const ValueType& data = ctx.input(0);
  const ValueType& indices = ctx.input(1);
  if (data.known && indices.known) {
    ctx.require(data.dims.size() == indices.dims.size(),
                "data and indices must have the same rank");
    ctx.axis(ctx.attr_int("axis", 0), rank_of(data));
  }
  ctx.set_output(0, ValueType{data.dtype, indices.dims, indices.known});
}

void gather_nd(InferContext& ctx) {
  const ValueType& data = ctx.input(0);
  const ValueType& indices = ctx.input(1);
  if (!data.known || !indices.known || indices.dims.empty() || indices.dims.back() < 0) {
    return ctx.set_output(0, unknown(data.dtype));
  }
  const int64_t b = ctx.attr_int("batch_dims", 0);
  const int64_t k = indices.dims.back();
  ctx.require(b >= 0 && b < rank_of(indices) && b + k <= rank_of(data),
              "batch_dims and the last indices dimension exceed the data's rank");
  Dims out(indices.dims.begin(), indices.dims.end() - 1);
  out.insert(out.end(), data.dims.begin() + b + k, data.dims.end());
  ctx.set_output(0, ValueType{data.dtype, out, true});
}

void same_as_data(InferContext& ctx) { ctx.set_output(0, ctx.input(0)); }

// --- Expand, Tile, Pad ----------------------------------------------------

void expand(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  const auto shape = ctx.constant_ints(1);
  if (!shape || !in.known) {
    const ValueType& s = ctx.input(1);
    if (!in.known || !s.known || s.dims.size() != 1 || s.dims[0] < 0) {
      return ctx.set_output(0, unknown(in.dtype));
    }
    return ctx.set_output(
        0, ranked(in.dtype, std::max(in.dims.size(), static_cast<size_t>(s.dims[0]))));
  }
  for (int64_t d : *shape) ctx.require(d >= 0, "shape entries must be non-negative");
  const auto out = broadcast_shapes(in.dims, *shape);
  ctx.require(out.has_value(),
              "input " + shape_string(in.dims) + " does not broadcast to " + shape_string(*shape));
  ctx.set_output(0, ValueType{in.dtype, *out, true});
}

// Strides that read `in` broadcast to `out` (0 along broadcast dims).
Dims broadcast_strides(const Dims& in, const Dims& out) {
  const Dims s = strides_of(in);
  Dims strides(out.size(), 0);
  for (size_t i = 0; i < in.size(); ++i) {
    const size_t d = out.size() - in.size() + i;
    strides[d] = in[i] == 1 ? 0 : s[i];
  }
  return strides;
}

Folded expand_fold(InferContext& ctx) {
  const Tensor* in = ctx.constant(0);
  if (!foldable(in)) return std::nullopt;
  const ValueType& out = ctx.outputs()[0];
  return std::vector<Tensor>{
      make(out, gather_view(*in, out.dims, 0, broadcast_strides(in->shape, out.dims)))};
}

void tile(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  const auto repeats = ctx.constant_ints(1);
  if (!in.known) return ctx.set_output(0, unknown(in.dtype));
  if (!repeats) return ctx.set_output(0, ranked(in.dtype, in.dims.size()));
  ctx.require(repeats->size() == in.dims.size(), "repeats must have one entry per input dim");
  Dims out = in.dims;
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t r = (*repeats)[d];
    ctx.require(r >= 0, "repeats must be non-negative");
    if (out[d] >= 0) out[d] = product(ctx, Dims{out[d], r});
  }
  ctx.set_output(0, ValueType{in.dtype, out, true});
}

// Tile reads dims (r0, d0, r1, d1, ...) with strides (0, s0, 0, s1, ...).
Folded tile_fold(InferContext& ctx) {
  const Tensor* in = ctx.constant(0);
  const auto repeats = ctx.constant_ints(1);
  if (!foldable(in) || !repeats) return std::nullopt;
  const Dims s = strides_of(in->shape);
  Dims dims, strides;
  for (size_t d = 0; d < s.size(); ++d) {
    dims.insert(dims.end(), {(*repeats)[d], in->shape[d]});
    strides.insert(strides.end(), {0, s[d]});
  }
  return std::vector<Tensor>{make(ctx.outputs()[0], gather_view(*in, dims, 0, strides))};
}

void pad(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  if (!in.known) return ctx.set_output(0, unknown(in.dtype));
  const int64_t rank = rank_of(in);
  IntList pads;
  if (ctx.opset() < 2) {
    pads = IntList{true, true, ctx.attr_ints("paddings")};
  } else {
    pads = int_list(ctx, "pads", 1, 11);
  }
  // Before opset 18 there are no axes: int_list finds no such attribute.
  const IntList axes_arg = int_list(ctx, "axes", 3, 18);
  if (!pads.known || !axes_arg.known) return ctx.set_output(0, ranked(in.dtype, in.dims.size()));
  Dims axes = axes_arg.values;
  if (!axes_arg.given) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  axes = normalize_axes(ctx, axes, rank);
  const size_t n = axes.size();
  ctx.require(pads.values.size() == 2 * n, "pads has " + std::to_string(pads.values.size()) +
                                               " entries; expected " + std::to_string(2 * n));
  ValueType out = in;
  for (size_t i = 0; i < n; ++i) {
    int64_t& d = out.dims[static_cast<size_t>(axes[i])];
    if (d < 0) continue;
    d += pads.values[i] + pads.values[i + n];
    ctx.require(d >= 0, "pads make axis " + std::to_string(axes[i]) + " negative");
  }
  const std::string mode = ctx.attr_string("mode", "constant");
  ctx.require(mode == "constant" || mode == "reflect" || mode == "edge" || mode == "wrap",
              "mode '" + mode + "' is not one of constant, reflect, edge, wrap");
  ctx.set_output(0, out);
}

// --- Shape, Size, ConstantOfShape, Range ----------------------------------

// The [start, end) Shape returns, clamped to the rank (opset 15).
std::pair<int64_t, int64_t> shape_range(const InferContext& ctx, int64_t rank) {
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(ctx.attr_int("start", 0));
  const int64_t end = clamp(ctx.attr_int("end", rank));
  return {start, std::max(start, end)};
}

void shape(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  if (!in.known) return ctx.set_output(0, ValueType{DType::kInt64, {-1}, true});
  const auto [start, end] = shape_range(ctx, rank_of(in));
  ctx.set_output(0, ValueType{DType::kInt64, {end - start}, true});
}

Tensor int64_tensor(const ValueType& type, const Dims& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(int64_t));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return make(type, std::move(bytes));
}

Folded shape_fold(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  const auto [start, end] = shape_range(ctx, rank_of(in));
  return std::vector<Tensor>{
      int64_tensor(ctx.outputs()[0], Dims(in.dims.begin() + start, in.dims.begin() + end))};
}

void size(InferContext& ctx) { ctx.set_output(0, ValueType{DType::kInt64, {}, true}); }

Folded size_fold(InferContext& ctx) {
  return std::vector<Tensor>{
      int64_tensor(ctx.outputs()[0], {static_cast<int64_t>(ctx.input(0).element_count())})};
}

// ConstantOfShape's fill value: the `value` attribute, float 0 by default.
std::optional<Tensor> fill_value(const InferContext& ctx) {
  const onnx::TensorProto* v = ctx.attr_tensor("value");
  if (!v) {
    Tensor zero;
    zero.dtype = DType::kFloat32;
    zero.data.assign(4, 0);
    return zero;
  }
  if (dtype_size(static_cast<DType>(v->data_type())) == 0) return std::nullopt;
  Tensor t = from_tensor_proto(*v);
  if (t.element_count() != 1 || !foldable(&t)) return std::nullopt;
  return t;
}

void constant_of_shape(InferContext& ctx) {
  const onnx::TensorProto* v = ctx.attr_tensor("value");
  const auto dtype = v ? static_cast<DType>(v->data_type()) : DType::kFloat32;
  if (v) {
    uint64_t count = 1;
    for (int64_t d : v->dims()) count *= static_cast<uint64_t>(std::max<int64_t>(d, 0));
    ctx.require(count == 1, "value must hold exactly one element");
  }
  const auto shape = ctx.constant_ints(0);
  if (!shape) {
    const ValueType& s = ctx.input(0);
    const bool rank_known = s.known && s.dims.size() == 1 && s.dims[0] >= 0;
    return ctx.set_output(
        0, rank_known ? ranked(dtype, static_cast<size_t>(s.dims[0])) : unknown(dtype));
  }
  for (int64_t d : *shape) ctx.require(d >= 0, "shape entries must be non-negative");
  product(ctx, *shape);  // fails on overflow
  ctx.set_output(0, ValueType{dtype, *shape, true});
}

Folded constant_of_shape_fold(InferContext& ctx) {
  const auto value = fill_value(ctx);
  if (!value) return std::nullopt;
  const ValueType& out = ctx.outputs()[0];
  std::vector<uint8_t> bytes;
  bytes.reserve(out.element_count() * value->data.size());
  for (uint64_t i = 0; i < out.element_count(); ++i) {
    bytes.insert(bytes.end(), value->data.begin(), value->data.end());
  }
  return std::vector<Tensor>{make(out, std::move(bytes))};
}

// A constant scalar input as double; nullopt if not a constant number.
std::optional<double> constant_number(const InferContext& ctx, size_t i) {
  const Tensor* t = ctx.constant(i);
  if (!t || t->element_count() != 1 || t->data.size() != width(*t)) return std::nullopt;
  switch (t->dtype) {
    case DType::kFloat32: {
      float v;
      std::memcpy(&v, t->data.data(), 4);
      return v;
    }
    case DType::kFloat64: {
      double v;
      std::memcpy(&v, t->data.data(), 8);
      return v;
    }
    default: {
      const auto ints = ctx.constant_ints(i);
      if (!ints) return std::nullopt;
      return static_cast<double>(ints->front());
    }
  }
}

// max(ceil((limit - start) / delta), 0), exact for integers.
std::optional<int64_t> range_length(const InferContext& ctx) {
  const DType dtype = ctx.input(0).dtype;
  if (dtype == DType::kInt64 || dtype == DType::kInt32 || dtype == DType::kInt16) {
    const auto s = ctx.constant_ints(0), l = ctx.constant_ints(1), d = ctx.constant_ints(2);
    if (!s || !l || !d || s->size() != 1 || l->size() != 1 || d->size() != 1) return std::nullopt;
    const int64_t start = s->front(), limit = l->front(), delta = d->front();
    ctx.require(delta != 0, "delta must not be 0");
    if (delta > 0 ? limit <= start : limit >= start) return 0;
    // The distance fits uint64 even when limit - start overflows int64.
    const uint64_t span = delta > 0 ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                    : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
    const uint64_t step =
        delta > 0 ? static_cast<uint64_t>(delta) : 0 - static_cast<uint64_t>(delta);
    const uint64_t n = span / step + (span % step != 0);
    ctx.require(n <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                "Range is too long");
    return static_cast<int64_t>(n);
  }
  const auto start = constant_number(ctx, 0), limit = constant_number(ctx, 1),
             delta = constant_number(ctx, 2);
  if (!start || !limit || !delta) return std::nullopt;
  ctx.require(*delta != 0, "delta must not be 0");
  const double n = std::ceil((*limit - *start) / *delta);
  ctx.require(std::isfinite(n) && n < 9.0e18, "Range length is not finite");
  return std::max<int64_t>(0, static_cast<int64_t>(n));
}

void range(InferContext& ctx) {
  const DType dtype = ctx.input(0).dtype;
  for (size_t i = 1; i < 3; ++i) {
    ctx.require(ctx.input(i).dtype == dtype, "start, limit and delta must have the same dtype");
  }
  const auto n = range_length(ctx);
  ctx.set_output(0, ValueType{dtype, {n ? *n : -1}, true});
}

template <typename T>
Tensor range_values(const ValueType& out, T start, T delta) {
  std::vector<uint8_t> bytes(out.element_count() * sizeof(T));
  for (uint64_t i = 0; i < out.element_count(); ++i) {
    T v;
    if constexpr (std::is_integral_v<T>) {
      // Wrapping arithmetic: the values stay in range, a product may not.
      v = static_cast<T>(static_cast<uint64_t>(start) + i * static_cast<uint64_t>(delta));
    } else {
      v = static_cast<T>(double{start} + static_cast<double>(i) * double{delta});
    }
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
  return make(out, std::move(bytes));
}

Folded range_fold(InferContext& ctx) {
  const ValueType& out = ctx.outputs()[0];
  switch (out.dtype) {
    case DType::kInt64:
    case DType::kInt32: {
      const auto s = ctx.constant_ints(0), d = ctx.constant_ints(2);
      if (out.dtype == DType::kInt64) {
        return std::vector<Tensor>{range_values<int64_t>(out, s->front(), d->front())};
      }
      return std::vector<Tensor>{range_values<int32_t>(out, static_cast<int32_t>(s->front()),
                                                       static_cast<int32_t>(d->front()))};
    }
    case DType::kFloat32:
      return std::vector<Tensor>{range_values<float>(out,
                                                     static_cast<float>(*constant_number(ctx, 0)),
                                                     static_cast<float>(*constant_number(ctx, 2)))};
    case DType::kFloat64:
      return std::vector<Tensor>{
          range_values<double>(out, *constant_number(ctx, 0), *constant_number(ctx, 2))};
    default:
      return std::nullopt;
  }
}

// --- DepthToSpace, SpaceToDepth, OneHot, EyeLike ---------------------------

void depth_to_space(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  if (!in.known) return ctx.set_output(0, ranked(in.dtype, 4));
  ctx.require(in.dims.size() == 4, "input must be 4-D (N, C, H, W)");
  const int64_t b = ctx.attr_int("blocksize", 0);
  ctx.require(b > 0, "blocksize must be positive");
  const std::string mode = ctx.attr_string("mode", "DCR");
  ctx.require(mode == "DCR" || mode == "CRD", "mode must be DCR or CRD");
  const int64_t c = in.dims[1];
  ctx.require(c < 0 || c % (b * b) == 0,
              "channels " + std::to_string(c) + " are not a multiple of blocksize^2");
  auto scale = [&](int64_t d) { return d < 0 ? -1 : product(ctx, Dims{d, b}); };
  ctx.set_output(
      0, ValueType{in.dtype,
                   {in.dims[0], c < 0 ? -1 : c / (b * b), scale(in.dims[2]), scale(in.dims[3])},
                   true});
}

void space_to_depth(InferContext& ctx) {
  const ValueType& in = ctx.input(0);
  if (!in.known) return ctx.set_output(0, ranked(in.dtype, 4));
  ctx.require(in.dims.size() == 4, "input must be 4-D (N, C, H, W)");
  const int64_t b = ctx.attr_int("blocksize", 0);
  ctx.require(b > 0, "blocksize must be positive");
  for (size_t d = 2; d < 4; ++d) {
    ctx.require(in.dims[d] < 0 || in.dims[d] % b == 0,
                "spatial dims " + shape_string(in.dims) + " are not multiples of blocksize");
  }
  auto shrink = [&](int64_t d) { return d < 0 ? -1 : d / b; };
  const int64_t c = in.dims[1] < 0 ? -1 : product(ctx, Dims{in.dims[1], b, b});
  ctx.set_output(
      0, ValueType{in.dtype, {in.dims[0], c, shrink(in.dims[2]), shrink(in.dims[3])}, true});
}

void one_hot(InferContext& ctx) {
  const ValueType& indices = ctx.input(0);
  const DType dtype = ctx.input(2).dtype;
  if (!indices.known) return ctx.set_output(0, unknown(dtype));
  const int64_t rank = rank_of(indices) + 1;
  const auto axis = static_cast<size_t>(ctx.axis(ctx.attr_int("axis", -1), rank));
  const auto depth = constant_number(ctx, 1);
  Dims out = indices.dims;
  int64_t d = -1;
  if (depth) {
    ctx.require(std::isfinite(*depth) && *depth >= 1 && *depth < 9.0e18, "depth must be positive");
    d = static_cast<int64_t>(*depth);
  }
  out.insert(out.begin() + static_cast<int64_t>(axis), d);
  ctx.set_output(0, ValueType{dtype, out, true});
}

void eye_like(InferContext& ctx) {
  ValueType out = ctx.input(0);
  if (ctx.has_attr("dtype")) out.dtype = static_cast<DType>(ctx.attr_int("dtype", 0));
  ctx.require(!out.known || out.dims.size() == 2, "input must be 2-D");
  ctx.set_output(0, out);
}

// Leaves nodes with an empty output unfolded: the host cannot store an
// initializer without data yet (to_tensor_proto refuses a null pointer),
// and the backends run empty tensors fine.
template <FoldFn Fold>
Folded nonempty(InferContext& ctx) {
  for (const ValueType& t : ctx.outputs()) {
    if (t.element_count() == 0) return std::nullopt;
  }
  return Fold(ctx);
}

}  // namespace

std::vector<OpRule> shape_rules() {
  return {
      {"Reshape", &reshape, &nonempty<&same_bytes_fold>},
      {"Flatten", &flatten, &nonempty<&same_bytes_fold>},
      {"Squeeze", &squeeze, &nonempty<&same_bytes_fold>},
      {"Unsqueeze", &unsqueeze, &nonempty<&same_bytes_fold>},
      {"Transpose", &transpose, &nonempty<&transpose_fold>},
      {"Concat", &concat, &nonempty<&concat_fold>},
      {"Split", &split, &nonempty<&split_fold>},
      {"Slice", &slice, &nonempty<&slice_fold>},
      {"Gather", &gather, &nonempty<&gather_fold>},
      {"GatherElements", &gather_elements, nullptr},
      {"GatherND", &gather_nd, nullptr},
      {"Scatter", &same_as_data, nullptr},
      {"ScatterElements", &same_as_data, nullptr},
      {"ScatterND", &same_as_data, nullptr},
      {"Expand", &expand, &nonempty<&expand_fold>},
      {"Tile", &tile, &nonempty<&tile_fold>},
      {"Pad", &pad, nullptr},
      {"Shape", &shape, &nonempty<&shape_fold>},
      {"Size", &size, &nonempty<&size_fold>},
      {"ConstantOfShape", &constant_of_shape, &nonempty<&constant_of_shape_fold>},
      {"Range", &range, &nonempty<&range_fold>},
      {"DepthToSpace", &depth_to_space, nullptr},
      {"SpaceToDepth", &space_to_depth, nullptr},
      {"OneHot", &one_hot, nullptr},
      {"EyeLike", &eye_like, nullptr},
  };
}

}  // namespace eulernpu::host::ir
