#include "calibration.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "eulernpu/sdk/qmath.hpp"
#include "eulernpu/sdk/simd_clones.hpp"

namespace eulernpu::int8_quantizer {

Method parse_method(const std::string& name) {
  if (name == "minmax") return Method::kMinMax;
  if (name == "percentile") return Method::kPercentile;
  if (name == "entropy") return Method::kEntropy;
  if (name == "mse") return Method::kMse;
  if (name == "best") return Method::kBest;
  throw std::invalid_argument("unknown calibration method '" + name +
                              "' (minmax, percentile, entropy, mse, best)");
}

const char* method_name(Method m) {
  switch (m) {
    case Method::kMinMax:
      return "minmax";
    case Method::kPercentile:
      return "percentile";
    case Method::kEntropy:
      return "entropy";
    case Method::kMse:
      return "mse";
    case Method::kBest:
      return "best";
  }
  return "?";
}

bool needs_histogram(Method m) { return m != Method::kMinMax; }

int histogram_bits(Method m) {
  return m == Method::kPercentile ? FixedGridHistogram::kPercentileBits
                                  : FixedGridHistogram::kLinearBits;
}

uint32_t method_passes(Method m) { return m == Method::kBest ? 2 : 1; }

namespace {

constexpr size_t kLanes = 16;

// The smallest and largest non-NaN value of v (lo/hi unchanged if none) and
// how many there are. Lanes of 16 running extremes that the compiler keeps
// in vector registers (minps/maxps are exactly `x < m ? x : m`), reduced in
// lane order at the end; the extremes of a set do not depend on the order
// it is scanned in.
EULERNPU_SIMD_CLONES
uint64_t range_of(const float* v, size_t n, float& lo, float& hi) {
  float mn[kLanes], mx[kLanes];
  uint32_t nans[kLanes] = {};
  for (size_t l = 0; l < kLanes; ++l) {
    mn[l] = std::numeric_limits<float>::infinity();
    mx[l] = -std::numeric_limits<float>::infinity();
  }
  uint64_t nan_total = 0;
  size_t i = 0;
  // Blocks of at most 2^28 values keep each lane's NaN count below 2^24.
  while (i + kLanes <= n) {
    const size_t end = i + std::min<size_t>((n - i) / kLanes * kLanes, size_t{1} << 28);
    for (; i < end; i += kLanes) {
      for (size_t l = 0; l < kLanes; ++l) {
        const float x = v[i + l];
        mn[l] = x < mn[l] ? x : mn[l];
        mx[l] = x > mx[l] ? x : mx[l];
        nans[l] += x != x ? 1u : 0u;
      }
    }
    for (size_t l = 0; l < kLanes; ++l) {
      nan_total += nans[l];
      nans[l] = 0;
    }
  }
  for (; i < n; ++i) {
    const float x = v[i];
    mn[0] = x < mn[0] ? x : mn[0];
    mx[0] = x > mx[0] ? x : mx[0];
    nan_total += x != x ? 1u : 0u;
  }
  const uint64_t count = n - nan_total;
  if (count == 0) return 0;
  lo = mn[0];
  hi = mx[0];
  for (size_t l = 1; l < kLanes; ++l) {
    lo = mn[l] < lo ? mn[l] : lo;
    hi = mx[l] > hi ? mx[l] : hi;
  }
  return count;
}

}  // namespace

TensorObserver::TensorObserver(std::optional<int> histogram_bits) {
  if (histogram_bits) grid_.emplace(*histogram_bits);
}

void TensorObserver::observe(std::span<const float> values) {
  float lo = 0, hi = 0;
  const uint64_t count = range_of(values.data(), values.size(), lo, hi);
  if (grid_) {
    grid_->observe(values);
    histogram_.clear();
  }
  if (count == 0) return;
  if (!seen_) {
    min_ = lo;
    max_ = hi;
    seen_ = true;
  } else {
    min_ = std::min<double>(min_, lo);
    max_ = std::max<double>(max_, hi);
  }
  count_ += count;
}

TensorObserver TensorObserver::restore(const Range64& range,
                                       std::optional<FixedGridHistogram> grid) {
  TensorObserver obs;
  obs.seen_ = range.seen;
  obs.min_ = range.min;
  obs.max_ = range.max;
  obs.count_ = range.count;
  obs.grid_ = std::move(grid);
  return obs;
}

void TensorObserver::merge(const TensorObserver& other) {
  if (grid_.has_value() != other.grid_.has_value()) {
    throw std::invalid_argument("an observer with a histogram and one without do not merge");
  }
  if (grid_) {
    grid_->merge(*other.grid_);
    histogram_.clear();
  }
  if (!other.seen_) return;
  min_ = seen_ ? std::min(min_, other.min_) : other.min_;
  max_ = seen_ ? std::max(max_, other.max_) : other.max_;
  seen_ = true;
  count_ += other.count_;
}

const FixedGridHistogram& TensorObserver::fixed_grid() const {
  if (!grid_) throw std::logic_error("the observer keeps no histogram");
  return *grid_;
}

double TensorObserver::abs_max() const { return std::max(std::fabs(min_), std::fabs(max_)); }

const std::vector<double>& TensorObserver::histogram() const {
  if (grid_ && histogram_.empty()) histogram_ = grid_->linear(abs_max(), kHistogramBins);
  return histogram_;
}

namespace {

constexpr int kQuantizedBins = 128;  // int8 levels on one side of zero

// ORT's / MXNet's smoothing: zero entries get eps, taken evenly from the
// others, so that KL(p || q) stays finite. Normalizes first.
std::vector<double> normalized_smoothed(std::vector<double> d) {
  const double total = std::accumulate(d.begin(), d.end(), 0.0);
  if (total <= 0) return {};
  size_t zeros = 0;
  for (double& v : d) {
    v /= total;
    zeros += v == 0.0 ? 1 : 0;
  }
  if (zeros == d.size()) return {};
  constexpr double kEps = 1e-4;
  const double take = kEps * static_cast<double>(zeros) / static_cast<double>(d.size() - zeros);
  for (double& v : d) v = v == 0.0 ? kEps : v - take;
  return d;
}

double kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] > 0 && q[i] > 0) kl += p[i] * std::log(p[i] / q[i]);
  }
  return kl;
}

// TensorRT's entropy calibration: the bin count i whose clipped histogram
// loses the least information when merged into 128 levels.
int entropy_bins(const std::vector<double>& h) {
  const int n = static_cast<int>(h.size());
  double best = std::numeric_limits<double>::infinity();
  int best_i = n;
  double outliers = std::accumulate(h.begin() + kQuantizedBins, h.end(), 0.0);
  for (int i = kQuantizedBins; i <= n; ++i) {
    if (i > kQuantizedBins) outliers -= h[static_cast<size_t>(i - 1)];
    std::vector<double> p(h.begin(), h.begin() + i);
    p[static_cast<size_t>(i - 1)] += outliers;
    // Merge the first i bins (without the outliers) into 128 levels; the
    // last level takes the remainder when 128 does not divide i.
    const int merged = i / kQuantizedBins;
    std::vector<double> q(static_cast<size_t>(i), 0.0);
    for (int j = 0; j < kQuantizedBins; ++j) {
      const int start = j * merged;
      const int stop = j == kQuantizedBins - 1 ? i : start + merged;
      double level = 0;
      int nonzero = 0;
      for (int k = start; k < stop; ++k) {
        level += h[static_cast<size_t>(k)];
        nonzero += p[static_cast<size_t>(k)] != 0.0 ? 1 : 0;
      }
      if (nonzero == 0) continue;
      for (int k = start; k < stop; ++k) {
        if (p[static_cast<size_t>(k)] != 0.0) q[static_cast<size_t>(k)] = level / nonzero;
      }
    }
    const auto ps = normalized_smoothed(std::move(p));
    const auto qs = normalized_smoothed(std::move(q));
    if (ps.empty() || qs.empty()) continue;
    const double kl = kl_divergence(ps, qs);
    if (kl < best) {  // strict: the smallest i wins ties
      best = kl;
      best_i = i;
    }
  }
  return best_i;
}

Range clip(const TensorObserver& obs, double threshold) {
  return {std::max(obs.min(), -threshold), std::min(obs.max(), threshold)};
}

// The bin edge minimizing the expected squared int8 error over the
// histogram (bin centres stand for their values).
int mse_bins(const TensorObserver& obs) {
  const auto& h = obs.histogram();
  const double width = obs.bin_width();
  double best = std::numeric_limits<double>::infinity();
  int best_i = static_cast<int>(h.size());
  for (int i = 1; i <= static_cast<int>(h.size()); ++i) {
    const double t = i * width;
    Range r = clip(obs, t);
    r.lo = std::min(r.lo, 0.0);
    r.hi = std::max(r.hi, 0.0);
    const double step = (r.hi - r.lo) / 255.0;
    double err = 0;
    for (size_t k = 0; k < h.size(); ++k) {
      if (h[k] == 0) continue;
      const double centre = (static_cast<double>(k) + 0.5) * width;
      err += centre > t ? h[k] * (centre - t) * (centre - t) : h[k] * step * step / 12.0;
    }
    if (err < best) {
      best = err;
      best_i = i;
    }
  }
  return best_i;
}

}  // namespace

Range choose_range(const TensorObserver& obs, Method method, const MethodOptions& options) {
  if (!std::isfinite(obs.min()) || !std::isfinite(obs.max())) {
    throw std::domain_error("the tensor took infinite values during calibration");
  }
  Range r{obs.min(), obs.max()};
  if (method != Method::kMinMax && obs.abs_max() > 0) {
    if (!obs.has_histogram()) {
      throw std::logic_error("no histogram was observed for a histogram method");
    }
    double threshold = obs.abs_max();
    switch (method) {
      case Method::kPercentile:
        if (!(options.percentile > 0 && options.percentile <= 100)) {
          throw std::invalid_argument("percentile must be in (0, 100]");
        }
        // On the fixed grid itself: its bins are finer than the linear
        // ones near the top, and spreading a sparse tail over linear bins
        // would move the threshold into it.
        threshold = obs.fixed_grid().quantile_edge(options.percentile / 100.0, obs.abs_max());
        break;
      case Method::kEntropy:
        threshold = entropy_bins(obs.histogram()) * obs.bin_width();
        break;
      case Method::kMse:
        threshold = mse_bins(obs) * obs.bin_width();
        break;
      case Method::kMinMax:
        break;
      case Method::kBest:
        throw std::logic_error("method best chooses among candidate_ranges()");
    }
    r = clip(obs, threshold);
  }
  r.lo = std::min(r.lo, 0.0);
  r.hi = std::max(r.hi, 0.0);
  return r;
}

QuantParams activation_params(Range r) {
  if (!(r.hi > r.lo)) return {};
  QuantParams p;
  p.scale = (r.hi - r.lo) / 255.0;
  // Scales are stored as float32 (QuantizeLinear's): one below float32's
  // smallest normal would be denormal or 0. Such a range holds nothing but
  // values that round to 0 at any usable scale, so it gets the zero-range
  // encoding.
  if (p.scale < static_cast<double>(std::numeric_limits<float>::min())) return {};
  const double zp = sdk::qmath::round_half_even(-128.0 - r.lo / p.scale);
  p.zero_point = static_cast<int32_t>(std::clamp(zp, -128.0, 127.0));
  return p;
}

std::vector<Candidate> candidate_ranges(const TensorObserver& obs) {
  std::vector<Candidate> out = {{"minmax", choose_range(obs, Method::kMinMax)}};
  for (const double p : {99.9, 99.99, 99.999}) {
    MethodOptions o;
    o.percentile = p;
    char name[32];
    std::snprintf(name, sizeof name, "percentile %g", p);
    out.push_back({name, choose_range(obs, Method::kPercentile, o)});
  }
  out.push_back({"entropy", choose_range(obs, Method::kEntropy)});
  out.push_back({"mse", choose_range(obs, Method::kMse)});
  return out;
}

ErrorMeter::ErrorMeter(std::vector<Candidate> candidates) : candidates_(std::move(candidates)) {
  for (const Candidate& c : candidates_) {
    QuantParams p = activation_params(c.range);
    p.scale = static_cast<double>(static_cast<float>(p.scale));  // as QuantizeLinear stores it
    params_.push_back(p);
  }
  sums_.assign(candidates_.size(), ExactSum{});
}

void ErrorMeter::observe(std::span<const float> values) {
  for (size_t c = 0; c < params_.size(); ++c) {
    const double scale = params_[c].scale, zp = params_[c].zero_point;
    double e = 0;
    for (const float v : values) {
      if (std::isnan(v)) continue;
      const double q = std::clamp(sdk::qmath::round_half_even(v / scale) + zp, -128.0, 127.0);
      const double d = static_cast<double>(v) - (q - zp) * scale;
      e += d * d;
    }
    sums_[c].add(e);
  }
}

void ErrorMeter::merge(const ErrorMeter& other) {
  if (other.candidates_.size() != candidates_.size()) {
    throw std::invalid_argument("error sums of " + std::to_string(other.candidates_.size()) +
                                " candidates, not " + std::to_string(candidates_.size()));
  }
  for (size_t c = 0; c < candidates_.size(); ++c) {
    const Range a = candidates_[c].range, b = other.candidates_[c].range;
    if (std::bit_cast<uint64_t>(a.lo) != std::bit_cast<uint64_t>(b.lo) ||
        std::bit_cast<uint64_t>(a.hi) != std::bit_cast<uint64_t>(b.hi) ||
        candidates_[c].name != other.candidates_[c].name) {
      throw std::invalid_argument("error sums of other candidate ranges (candidate '" +
                                  candidates_[c].name + "')");
    }
  }
  for (size_t c = 0; c < sums_.size(); ++c) sums_[c].merge(other.sums_[c]);
}

// Layout: u32 n, then per candidate u8 name length, the name, f64 lo, f64
// hi, the ExactSum's bytes.
std::string ErrorMeter::encode() const {
  std::string out;
  auto put = [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
  const auto n = static_cast<uint32_t>(candidates_.size());
  put(&n, 4);
  for (size_t c = 0; c < candidates_.size(); ++c) {
    const auto len = static_cast<uint8_t>(candidates_[c].name.size());
    put(&len, 1);
    put(candidates_[c].name.data(), len);
    put(&candidates_[c].range.lo, 8);
    put(&candidates_[c].range.hi, 8);
    out += sums_[c].encode();
  }
  return out;
}

ErrorMeter ErrorMeter::decode(std::string_view bytes) {
  size_t at = 0;
  auto take = [&](void* p, size_t n) {
    if (bytes.size() - at < n) throw std::invalid_argument("error sums cut short");
    std::memcpy(p, bytes.data() + at, n);
    at += n;
  };
  uint32_t n = 0;
  take(&n, 4);
  // Each candidate takes at least this many bytes: n is checked before use.
  constexpr size_t kLeast = 1 + 8 + 8 + ExactSum::kEncodedSize;
  if (n > (bytes.size() - at) / kLeast) throw std::invalid_argument("error sums cut short");
  std::vector<Candidate> candidates(n);
  std::vector<ExactSum> sums(n);
  for (uint32_t c = 0; c < n; ++c) {
    uint8_t len = 0;
    take(&len, 1);
    candidates[c].name.resize(len);
    take(candidates[c].name.data(), len);
    take(&candidates[c].range.lo, 8);
    take(&candidates[c].range.hi, 8);
    if (bytes.size() - at < ExactSum::kEncodedSize)
      throw std::invalid_argument("error sums cut short");
    sums[c] = ExactSum::decode(bytes.substr(at, ExactSum::kEncodedSize));
    at += ExactSum::kEncodedSize;
  }
  if (at != bytes.size()) throw std::invalid_argument("bytes after the error sums");
  ErrorMeter meter(std::move(candidates));
  meter.sums_ = std::move(sums);
  return meter;
}

std::vector<double> ErrorMeter::errors() const {
  std::vector<double> out;
  for (const ExactSum& s : sums_) out.push_back(s.value());
  return out;
}

const Candidate& ErrorMeter::best() const {
  const std::vector<double> e = errors();
  size_t best = 0;
  for (size_t c = 1; c < e.size(); ++c) {
    if (e[c] < e[best]) best = c;
  }
  return candidates_[best];
}

}  // namespace eulernpu::int8_quantizer
