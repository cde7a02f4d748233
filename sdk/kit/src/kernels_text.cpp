// Text kernels: TfIdfVectorizer over integer tokens. The n-gram pool is a
// trie keyed by token (as ONNX's reference and ONNX Runtime build it):
// walking it from each start position with a fixed skip distance counts
// every pooled n-gram of sizes min_gram_length..max_gram_length.
// String pools need string tensors, which eulernpu does not carry.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "eulernpu/kit/errors.hpp"
#include "eulernpu/sdk/status.hpp"
#include "kernel_util.hpp"

namespace eulernpu::kit {
namespace {

constexpr uint32_t kTokenDtypes = ENP_DTYPE_BIT(ENP_DTYPE_INT32) | ENP_DTYPE_BIT(ENP_DTYPE_INT64);

struct Trie {
  struct Node {
    int64_t id = 0;  // 1-based n-gram id; 0: a prefix only
    std::map<int64_t, size_t> next;
  };
  std::vector<Node> nodes{Node{}};  // nodes[0] is the root

  size_t child(size_t at, int64_t token) {
    auto it = nodes[at].next.find(token);
    if (it != nodes[at].next.end()) return it->second;
    nodes.push_back(Node{});
    nodes[at].next.emplace(token, nodes.size() - 1);
    return nodes.size() - 1;
  }
  // The child of `at` for `token`, or 0 (the root is never a child).
  size_t find(size_t at, int64_t token) const {
    auto it = nodes[at].next.find(token);
    return it == nodes[at].next.end() ? 0 : it->second;
  }
};

// The pool's n-grams in id order: ngram_counts[i] is where the n-grams of
// size i + 1 start in pool_int64s. Ids count the sizes outside
// [min, max] too, so ngram_indexes stays aligned with the pool.
Trie build_trie(const std::vector<int64_t>& pool, const std::vector<int64_t>& counts,
                int64_t min_gram, int64_t max_gram) {
  Trie trie;
  int64_t id = 1;
  for (size_t i = 0; i < counts.size(); ++i) {
    const auto size = static_cast<int64_t>(i + 1);
    const int64_t begin = counts[i];
    const int64_t end = i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(pool.size());
    const int64_t grams = (end - begin) / size;
    if (size < min_gram || size > max_gram) {
      id += grams;
      continue;
    }
    for (int64_t g = 0; g < grams; ++g) {
      size_t at = 0;
      for (int64_t k = 0; k < size; ++k) {
        at = trie.child(at, pool[static_cast<size_t>(begin + g * size + k)]);
      }
      trie.nodes[at].id = id++;
    }
  }
  return trie;
}

template <typename T>
void count_row(const Trie& trie, const T* tokens, int64_t len, int64_t min_gram, int64_t max_gram,
               int64_t max_skip, const std::vector<int64_t>& indexes, int64_t* freq) {
  int64_t start_size = min_gram;
  for (int64_t skip = 1; skip <= max_skip + 1; ++skip) {
    for (int64_t start = 0; start < len; ++start) {
      // Too close to the end for any n-gram of the smallest wanted size.
      if (start + skip * (start_size - 1) >= len) break;
      size_t at = 0;
      int64_t item = start;
      for (int64_t size = 1; size <= max_gram && item < len && !trie.nodes[at].next.empty();
           ++size, item += skip) {
        at = trie.find(at, static_cast<int64_t>(tokens[item]));
        if (at == 0) break;
        const int64_t id = trie.nodes[at].id;
        if (size >= start_size && id != 0 && static_cast<size_t>(id - 1) < indexes.size()) {
          ++freq[indexes[static_cast<size_t>(id - 1)]];
        }
      }
    }
    // Unigrams do not depend on the skip distance: count them once.
    if (start_size == 1) {
      ++start_size;
      if (start_size > max_gram) break;
    }
  }
}

void tfidf_kernel(const KernelContext& ctx) {
  const Buffer& x = ctx.inputs[0];
  Buffer& y = ctx.outputs[0];
  const auto pool = ctx.attr_ints("pool_int64s");
  const auto counts = ctx.attr_ints("ngram_counts");
  const auto indexes = ctx.attr_ints("ngram_indexes");
  const auto weights = ctx.attr_floats("weights");
  const int64_t min_gram = ctx.attr_int("min_gram_length", 1);
  const int64_t max_gram = ctx.attr_int("max_gram_length", 1);
  const int64_t max_skip = ctx.attr_int("max_skip_count", 0);
  const std::string mode = ctx.attr_string("mode", "TF");
  const int64_t rows = x.shape.size() == 2 ? x.shape[0] : 1;
  const int64_t len = x.shape.empty() ? 1 : x.shape.back();
  const int64_t width = y.shape.empty() ? 0 : y.shape.back();
  if (x.shape.size() > 2 || y.count() != rows * width || indexes.empty() ||
      *std::max_element(indexes.begin(), indexes.end()) + 1 != width) {
    corrupt("cpu_ref", "TfIdfVectorizer shapes do not agree with ngram_indexes");
  }
  const Trie trie = build_trie(pool, counts, min_gram, max_gram);
  std::vector<int64_t> freq(static_cast<size_t>(rows * width), 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t* f = freq.data() + r * width;
    if (x.dtype == ENP_DTYPE_INT32) {
      count_row(trie, x.as<int32_t>() + r * len, len, min_gram, max_gram, max_skip, indexes, f);
    } else {
      count_row(trie, x.as<int64_t>() + r * len, len, min_gram, max_gram, max_skip, indexes, f);
    }
  }
  float* out = y.as<float>();
  for (int64_t i = 0; i < rows * width; ++i) {
    const auto n = static_cast<double>(freq[static_cast<size_t>(i)]);
    const double w = weights.empty() ? 1.0 : weights[static_cast<size_t>(i % width)];
    double v = n;
    if (mode == "IDF") {
      v = n > 0 ? w : 0.0;
    } else if (mode == "TFIDF") {
      v = w * n;
    }
    out[i] = static_cast<float>(v);
  }
}

std::optional<std::string> tfidf_check(const sdk::NodeView& node, const sdk::GraphView&) {
  if (node.find_attribute("pool_strings")) {
    return "pool_strings needs string tensors, which eulernpu does not support (int64 pools "
           "only)";
  }
  const auto pool = node.attr_ints("pool_int64s");
  const auto counts = node.attr_ints("ngram_counts");
  const auto indexes = node.attr_ints("ngram_indexes");
  const int64_t min_gram = node.attr_int("min_gram_length", 0);
  const int64_t max_gram = node.attr_int("max_gram_length", 0);
  const std::string mode = node.attr_string("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") return "mode '" + mode + "' is unknown";
  if (min_gram < 1 || min_gram > max_gram) return "need 1 <= min_gram_length <= max_gram_length";
  if (node.attr_int("max_skip_count", 0) < 0) return "max_skip_count must not be negative";
  if (indexes.empty()) return "ngram_indexes must not be empty";
  int64_t grams = 0;
  const auto pool_size = static_cast<int64_t>(pool.size());
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t end = i + 1 < counts.size() ? counts[i + 1] : pool_size;
    if (counts[i] < 0 || counts[i] > end || end > pool_size) {
      return "ngram_counts must be non-decreasing offsets into pool_int64s";
    }
    const auto size = static_cast<int64_t>(i + 1);
    if ((end - counts[i]) % size != 0) {
      return "pool_int64s holds a partial " + std::to_string(size) + "-gram";
    }
    grams += (end - counts[i]) / size;
  }
  if (grams != static_cast<int64_t>(indexes.size())) {
    return "ngram_indexes has " + std::to_string(indexes.size()) + " entries for " +
           std::to_string(grams) + " pooled n-grams";
  }
  int64_t width = 0;
  for (int64_t i : indexes) {
    if (i < 0) return "ngram_indexes must not be negative";
    width = std::max(width, i + 1);
  }
  const enp_attribute_t* w = node.find_attribute("weights");
  if (w && w->count != 0 && static_cast<int64_t>(w->count) < width) {
    return "weights must have an entry per output column";
  }
  return std::nullopt;
}

}  // namespace

std::vector<OpEntry> text_ops() {
  return {
      {"TfIdfVectorizer", 9, 0, kTokenDtypes,
       "int32/int64 tokens with pool_int64s (no pool_strings); TF, IDF, TFIDF; skip-grams",
       &tfidf_check, &tfidf_kernel},
  };
}

}  // namespace eulernpu::kit
