// Shape rules of the text ops (see sdk/kit/src/kernels_text.cpp).
#include <algorithm>

#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

// TfIdfVectorizer: (C) -> (E) and (B, C) -> (B, E), float32, with E one
// more than the largest of ngram_indexes.
void tfidf_vectorizer(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const auto indexes = ctx.attr_ints("ngram_indexes");
  ctx.require(!indexes.empty(), "ngram_indexes must not be empty");
  for (int64_t i : indexes) ctx.require(i >= 0, "ngram_indexes must not be negative");
  const std::string mode = ctx.attr_string("mode", "");
  ctx.require(mode == "TF" || mode == "IDF" || mode == "TFIDF",
              "mode '" + mode + "' is not one of TF, IDF, TFIDF");
  const int64_t min_gram = ctx.attr_int("min_gram_length", 0);
  const int64_t max_gram = ctx.attr_int("max_gram_length", 0);
  ctx.require(min_gram >= 1 && min_gram <= max_gram,
              "need 1 <= min_gram_length <= max_gram_length");
  ctx.require(ctx.attr_int("max_skip_count", 0) >= 0, "max_skip_count must not be negative");
  const int64_t size = *std::max_element(indexes.begin(), indexes.end()) + 1;
  if (!x.known) return ctx.set_output(0, ValueType{DType::kFloat32, {}, false});
  ctx.require(x.dims.size() == 1 || x.dims.size() == 2,
              "X must be (C) or (B, C), not " + shape_string(x.dims));
  if (x.dims.size() == 1) return ctx.set_output(0, ValueType{DType::kFloat32, {size}, true});
  ctx.set_output(0, ValueType{DType::kFloat32, {x.dims[0], size}, true});
}

}  // namespace

std::vector<OpRule> text_rules() { return {{"TfIdfVectorizer", &tfidf_vectorizer, nullptr}}; }

}  // namespace eulernpu::host::ir
