// A session's calibration statistics as bytes (ABI 1.9 session_export and
// session_import), for calibration sharded over processes or machines.
//
// Layout, little-endian:
//   u32 magic "EQS1"   u8 pass   u8 method   u64 samples   u32 n
//   n x (u32 name size, name, u64 size, an encoded observer (pass 0,
//        observer_io.hpp) or error meter (pass 1, ErrorMeter::encode))
// Values in name order. Everything in it is exact, so sessions that import
// every shard reach the bytes one session observing every sample does.
#include <string>
#include <string_view>

#include "byte_io.hpp"
#include "observer_io.hpp"
#include "session.hpp"

namespace eulernpu::int8_quantizer {

namespace {

constexpr uint32_t kMagic = 0x31535145;  // "EQS1"

[[noreturn]] void invalid(const std::string& where) {
  throw sdk::Error(ENP_INVALID_ARGUMENT, "calibration statistics are invalid", where,
                   "write them again with 'eulernpu calibrate' (docs/scale-out.md)");
}

// A value's statistics read back; bytes that are not are named by value.
template <typename Fn>
auto decoded(const std::string& name, Fn&& fn) {
  try {
    return fn();
  } catch (const std::invalid_argument& e) {
    invalid("value '" + name + "': " + e.what());
  }
}

// Merged into the session's; statistics that are not of the same kind
// (another grid, pass 2 on other pass 1 statistics) do not fit.
template <typename Fn>
void merged(const std::string& name, Fn&& fn) {
  try {
    fn();
  } catch (const std::invalid_argument& e) {
    throw sdk::Error(ENP_INVALID_ARGUMENT, "calibration statistics do not fit",
                     "value '" + name + "': " + e.what(),
                     "give statistics written with the same config; pass 2's gathered on the "
                     "merged pass 1 of these shards");
  }
}

}  // namespace

void Session::require_mergeable(uint32_t pass, const char* what) const {
  if (pass >= passes()) {
    throw sdk::Error(ENP_INVALID_ARGUMENT, "calibration statistics do not fit",
                     std::string(what) + " pass " + std::to_string(pass + 1) + ", but method " +
                         method_name(options_.method) + " has " + std::to_string(passes()),
                     "give statistics written with the same config");
  }
  // Their sums are float64 in the samples' order: shards would round
  // differently from one process, and the artifact would not be the same.
  if (options_.bias_correction || options_.rewrite.rounding == "adaptive") {
    throw sdk::Error(ENP_UNIMPLEMENTED, "sharded calibration is not supported",
                     std::string("config sets ") +
                         (options_.bias_correction ? "bias_correction" : "rounding: adaptive") +
                         ", whose statistics do not merge exactly",
                     "calibrate on one machine, or leave the option out");
  }
}

std::string Session::export_stats(uint32_t pass) {
  require_mergeable(pass, "asked for");
  std::string out;
  put(out, kMagic);
  put(out, static_cast<uint8_t>(pass));
  put(out, static_cast<uint8_t>(options_.method));
  put(out, samples_[pass]);
  auto entry = [&](const std::string& name, const std::string& bytes) {
    put(out, static_cast<uint32_t>(name.size()));
    out += name;
    put(out, static_cast<uint64_t>(bytes.size()));
    out += bytes;
  };
  if (pass == 0) {
    put(out, static_cast<uint32_t>(observers_.size()));
    for (const auto& [name, obs] : observers_) entry(name, encode_observer(obs));
  } else {
    put(out, static_cast<uint32_t>(errors_.size()));
    for (const auto& [name, meter] : errors_) entry(name, meter.encode());
  }
  return out;
}

void Session::import_stats(uint32_t pass, std::string_view bytes) {
  require_mergeable(pass, "given");
  ByteReader in(bytes);
  try {
    if (in.get<uint32_t>() != kMagic) invalid("not calibration statistics of int8_quantizer");
    const uint8_t stored_pass = in.get<uint8_t>();
    const uint8_t method = in.get<uint8_t>();
    if (stored_pass != pass) {
      invalid("statistics of pass " + std::to_string(stored_pass + 1) + " given as pass " +
              std::to_string(pass + 1));
    }
    if (method != static_cast<uint8_t>(options_.method)) {
      throw sdk::Error(ENP_INVALID_ARGUMENT, "calibration statistics do not fit",
                       "they were gathered for another calibration method than " +
                           std::string(method_name(options_.method)),
                       "give statistics written with the same config");
    }
    if (pass > 0 && samples_[0] == 0) {
      throw sdk::Error(ENP_FAILED_PRECONDITION, "calibration statistics do not fit",
                       "pass " + std::to_string(pass + 1) + " given before pass 1",
                       "give every shard's pass 1 first");
    }
    const uint64_t samples = in.get<uint64_t>();
    const uint32_t n = in.get<uint32_t>();
    // Each entry takes at least 12 bytes: n is checked before the loop.
    if (n > in.left() / 12) invalid("cut short");
    for (uint32_t i = 0; i < n; ++i) {
      const std::string name(in.take(in.get<uint32_t>()));
      const std::string_view body = in.take(in.get<uint64_t>());
      if (pass == 0) {
        auto found = observers_.find(name);
        if (found == observers_.end()) {
          const std::optional<int> bits = needs_histogram(options_.method)
                                              ? std::optional<int>(histogram_bits(options_.method))
                                              : std::nullopt;
          found = observers_.emplace(name, TensorObserver(bits)).first;
        }
        const TensorObserver shard = decoded(name, [&] { return decode_observer(body); });
        merged(name, [&] { found->second.merge(shard); });
      } else {
        const auto obs = observers_.find(name);
        if (obs == observers_.end()) invalid("value '" + name + "' has no pass 1 statistics");
        auto it = errors_.find(name);
        if (it == errors_.end())
          it = errors_.emplace(name, ErrorMeter(candidate_ranges(obs->second))).first;
        const ErrorMeter shard = decoded(name, [&] { return ErrorMeter::decode(body); });
        merged(name, [&] { it->second.merge(shard); });
      }
    }
    if (in.left() != 0) invalid("bytes after the last value");
    samples_[pass] += samples;
  } catch (const std::invalid_argument& e) {
    invalid(e.what());
  }
}

}  // namespace eulernpu::int8_quantizer
