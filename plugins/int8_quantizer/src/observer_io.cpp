#include "observer_io.hpp"

#include "byte_io.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace eulernpu::int8_quantizer {

namespace {

constexpr uint32_t kMagic = 0x31424f45;  // "EOB1"
constexpr size_t kHeader = 4 + 1 + 1 + 8 + 8 + 8 + 4;
constexpr size_t kBin = 4 + 8;

}  // namespace

std::string encode_observer(const TensorObserver& obs) {
  const TensorObserver::Range64 r = obs.range_state();
  std::vector<std::pair<uint32_t, uint64_t>> bins;
  if (obs.has_histogram()) {
    obs.fixed_grid().for_each([&](uint32_t key, uint64_t count) { bins.emplace_back(key, count); });
  }
  std::string out;
  out.reserve(kHeader + bins.size() * kBin);
  put(out, kMagic);
  put(out, static_cast<int8_t>(obs.has_histogram() ? obs.fixed_grid().kept_bits() : -1));
  put(out, static_cast<uint8_t>(r.seen));
  put(out, r.min);
  put(out, r.max);
  put(out, r.count);
  put(out, static_cast<uint32_t>(bins.size()));
  for (const auto& [key, count] : bins) {
    put(out, key);
    put(out, count);
  }
  return out;
}

TensorObserver decode_observer(std::string_view bytes) {
  ByteReader in(bytes);
  if (in.get<uint32_t>() != kMagic) throw std::invalid_argument("not observer statistics");
  const int bits = in.get<int8_t>();
  const uint8_t seen = in.get<uint8_t>();
  TensorObserver::Range64 r;
  r.min = in.get<double>();
  r.max = in.get<double>();
  r.count = in.get<uint64_t>();
  const uint32_t n = in.get<uint32_t>();
  if (bits < -1 || bits > 23)
    throw std::invalid_argument("a grid of " + std::to_string(bits) + " bits");
  if (seen > 1) throw std::invalid_argument("'seen' is neither 0 nor 1");
  r.seen = seen == 1;
  // NaN is never a bound; an infinite bound is kept (the range reports it).
  if (r.seen && (std::isnan(r.min) || std::isnan(r.max) || r.min > r.max || r.count == 0)) {
    throw std::invalid_argument("an observed range that is not one");
  }
  if (!r.seen && (r.count != 0 || r.min != 0 || r.max != 0)) {
    throw std::invalid_argument("a range with values but nothing observed");
  }
  if (in.left() != static_cast<size_t>(n) * kBin) {
    throw std::invalid_argument(std::to_string(n) + " bins in " + std::to_string(in.left()) +
                                " bytes");
  }
  if (bits < 0) {
    if (n != 0) throw std::invalid_argument("bins without a grid");
    return TensorObserver::restore(r, std::nullopt);
  }
  FixedGridHistogram grid(bits);
  uint64_t total = 0;
  for (uint32_t i = 0, last = 0; i < n; ++i) {
    const uint32_t key = in.get<uint32_t>();
    const uint64_t count = in.get<uint64_t>();
    if ((i > 0 && key <= last) || count == 0) {
      throw std::invalid_argument("bins not ascending, or empty");
    }
    last = key;
    if (count > r.count - total) throw std::invalid_argument("more counted than observed");
    total += count;
    grid.add(key, count);  // throws for a key past the grid
  }
  return TensorObserver::restore(r, std::move(grid));
}

}  // namespace eulernpu::int8_quantizer
