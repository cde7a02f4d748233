// A calibration shard's statistics as bytes: read back and merged in any
// split of the samples, they are the one observer of all of them, bit for
// bit, for every method; and bytes that are not statistics are refused
// without reading past their end or allocating what they claim.
#include "observer_io.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace eulernpu::int8_quantizer {
namespace observer_io_test {
namespace {

// Samples of a ReLU-like value: zeros, a bulk over several binades, a tail.
std::vector<std::vector<float>> samples(int n) {
  std::mt19937 rng(7);
  std::normal_distribution<float> bulk(0.5f, 1.5f);
  std::vector<std::vector<float>> out(static_cast<size_t>(n));
  for (auto& s : out) {
    for (int i = 0; i < 3000; ++i) s.push_back(std::max(0.0f, bulk(rng)));
    s.push_back(-0.25f);
    s.push_back(40.0f * std::uniform_real_distribution<float>(0.5f, 1.0f)(rng));
  }
  return out;
}

uint64_t bits_of(double v) { return std::bit_cast<uint64_t>(v); }

void expect_same_ranges(const TensorObserver& a, const TensorObserver& b) {
  for (Method m : {Method::kMinMax, Method::kPercentile, Method::kEntropy, Method::kMse}) {
    if (needs_histogram(m) && !a.has_histogram()) continue;
    const Range x = choose_range(a, m), y = choose_range(b, m);
    EXPECT_EQ(bits_of(x.lo), bits_of(y.lo)) << method_name(m);
    EXPECT_EQ(bits_of(x.hi), bits_of(y.hi)) << method_name(m);
  }
  if (a.has_histogram()) {
    const auto ca = candidate_ranges(a), cb = candidate_ranges(b);
    ASSERT_EQ(ca.size(), cb.size());
    for (size_t i = 0; i < ca.size(); ++i) {
      EXPECT_EQ(bits_of(ca[i].range.lo), bits_of(cb[i].range.lo)) << ca[i].name;
      EXPECT_EQ(bits_of(ca[i].range.hi), bits_of(cb[i].range.hi)) << ca[i].name;
    }
  }
}

TEST(ObserverIoTest, ShardsReadBackMergeIntoTheObserverOfAllSamples) {
  const auto data = samples(12);
  for (std::optional<int> grid :
       {std::optional<int>(), std::optional<int>(8), std::optional<int>(11)}) {
    TensorObserver all(grid);
    for (const auto& s : data) all.observe(s);
    const std::string want = encode_observer(all);
    for (int shards : {1, 2, 3, 5}) {
      // Shard k takes samples k, k + shards, ...; each writes its bytes,
      // and the merge reads them in shard order.
      std::optional<TensorObserver> merged;
      for (int k = 0; k < shards; ++k) {
        TensorObserver part(grid);
        for (size_t i = static_cast<size_t>(k); i < data.size(); i += static_cast<size_t>(shards)) {
          part.observe(data[i]);
        }
        TensorObserver back = decode_observer(encode_observer(part));
        if (merged) {
          merged->merge(back);
        } else {
          merged.emplace(std::move(back));
        }
      }
      EXPECT_EQ(encode_observer(*merged), want) << shards << " shards";
      expect_same_ranges(*merged, all);
    }
  }
}

TEST(ObserverIoTest, AnEmptyObserverRoundTrips) {
  const TensorObserver empty(11);
  const TensorObserver back = decode_observer(encode_observer(empty));
  EXPECT_FALSE(back.range_state().seen);
  EXPECT_EQ(back.fixed_grid().total(), 0u);
  EXPECT_EQ(encode_observer(back), encode_observer(empty));
}

// `bytes` with the value at `offset` replaced.
template <typename T>
std::string with(std::string bytes, size_t offset, T v) {
  std::memcpy(bytes.data() + offset, &v, sizeof(T));
  return bytes;
}

TEST(ObserverIoTest, BytesThatAreNotStatisticsAreRefused) {
  TensorObserver obs(8);
  obs.observe(samples(1)[0]);
  const std::string good = encode_observer(obs);
  ASSERT_GT(good.size(), 48u);
  // Cut anywhere: refused, never read past the end.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_THROW(decode_observer(std::string_view(good).substr(0, n)), std::invalid_argument) << n;
  }
  EXPECT_THROW(decode_observer(good + "x"), std::invalid_argument);  // trailing bytes
  EXPECT_THROW(decode_observer(with(good, 0, uint32_t{0})), std::invalid_argument);   // magic
  EXPECT_THROW(decode_observer(with(good, 4, int8_t{24})), std::invalid_argument);    // grid
  EXPECT_THROW(decode_observer(with(good, 5, uint8_t{2})), std::invalid_argument);    // seen
  EXPECT_THROW(decode_observer(with(good, 6, 1e9)), std::invalid_argument);           // min > max
  EXPECT_THROW(decode_observer(with(good, 22, uint64_t{1})), std::invalid_argument);  // count
  // A bin count the bytes cannot hold is refused before anything is allocated.
  EXPECT_THROW(decode_observer(with(good, 30, uint32_t{0xffffffff})), std::invalid_argument);
  // The first bin's key past the grid, then the second before the first.
  EXPECT_THROW(decode_observer(with(good, 34, uint32_t{255u << 8})), std::invalid_argument);
  EXPECT_THROW(decode_observer(with(good, 46, uint32_t{0})), std::invalid_argument);
  // A zero count.
  EXPECT_THROW(decode_observer(with(good, 38, uint64_t{0})), std::invalid_argument);
  EXPECT_NO_THROW(decode_observer(good));
}

// Method best's second pass in shards: each shard's error sums, as bytes,
// merge into the single meter's errors and choice, bit for bit.
TEST(ObserverIoTest, ErrorSumsOfShardsMergeIntoTheSingleMeters) {
  const auto data = samples(9);
  TensorObserver all(FixedGridHistogram::kLinearBits);
  for (const auto& s : data) all.observe(s);
  ErrorMeter single(candidate_ranges(all));
  for (const auto& s : data) single.observe(s);
  for (int shards : {2, 3}) {
    std::optional<ErrorMeter> merged;
    for (int k = 0; k < shards; ++k) {
      ErrorMeter part(candidate_ranges(all));
      for (size_t i = static_cast<size_t>(k); i < data.size(); i += static_cast<size_t>(shards)) {
        part.observe(data[i]);
      }
      ErrorMeter back = ErrorMeter::decode(part.encode());
      if (merged) {
        merged->merge(back);
      } else {
        merged.emplace(std::move(back));
      }
    }
    EXPECT_EQ(merged->encode(), single.encode()) << shards << " shards";
    EXPECT_EQ(merged->best().name, single.best().name);
  }
  // Sums of other candidates (another pass 1) do not merge; bad bytes are refused.
  TensorObserver other(FixedGridHistogram::kLinearBits);
  other.observe(data[0]);
  ErrorMeter elsewhere(candidate_ranges(other));
  EXPECT_THROW(single.merge(elsewhere), std::invalid_argument);
  const std::string bytes = single.encode();
  for (size_t n : {size_t{0}, size_t{3}, size_t{4}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_THROW(ErrorMeter::decode(std::string_view(bytes).substr(0, n)), std::invalid_argument)
        << n;
  }
  EXPECT_THROW(ErrorMeter::decode(bytes + "x"), std::invalid_argument);
  EXPECT_THROW(ErrorMeter::decode(with(bytes, 0, uint32_t{0xffffffff})), std::invalid_argument);
}

}  // namespace
}  // namespace observer_io_test
}  // namespace eulernpu::int8_quantizer
