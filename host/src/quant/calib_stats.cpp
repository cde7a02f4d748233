#include "quant/calib_stats.hpp"

#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <system_error>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "formats/output_file.hpp"
#include "formats/sha256.hpp"

namespace eulernpu::host {

namespace {

constexpr char kMagic[] = "ENPSTAT1";
constexpr size_t kMagicSize = 8;
constexpr size_t kDigestSize = 64;  // sha256, hex
constexpr uint32_t kMaxShards = 100000;
constexpr char kInvalid[] = "calibration statistics are invalid";
constexpr char kNotFit[] = "calibration statistics do not fit";
constexpr char kRewrite[] = "write it again with 'eulernpu calibrate' (docs/scale-out.md)";

template <typename T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

[[noreturn]] void invalid(const std::string& path, const std::string& why) {
  throw UserError(kInvalid, "'" + path + "': " + why, kRewrite);
}

std::string shard_name(const StatsFile& f) {
  return "shard " + std::to_string(f.shard) + "/" + std::to_string(f.shards) + " of pass " +
         std::to_string(f.pass + 1);
}

// "0, 2 and 5", or the first few and how many more.
std::string list_numbers(const std::vector<uint32_t>& n) {
  std::string out;
  const size_t shown = std::min<size_t>(n.size(), 5);
  for (size_t i = 0; i < shown; ++i) {
    out += (i == 0 ? "" : i + 1 == n.size() ? " and " : ", ") + std::to_string(n[i]);
  }
  if (n.size() > shown) out += " and " + std::to_string(n.size() - shown) + " more";
  return out;
}

}  // namespace

std::pair<uint32_t, uint32_t> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  auto number = [](const std::string& s, uint64_t& v) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
      return false;
    v = std::stoull(s);
    return true;
  };
  uint64_t k = 0, n = 0;
  if (slash == std::string::npos || !number(text.substr(0, slash), k) ||
      !number(text.substr(slash + 1), n) || n == 0 || n > kMaxShards || k >= n) {
    throw UserError("invalid command line", "--shard '" + text + "' is not K/N with 0 <= K < N",
                    "e.g. --shard 0/4 for the first of four shards (at most " +
                        std::to_string(kMaxShards) + ")");
  }
  return {static_cast<uint32_t>(k), static_cast<uint32_t>(n)};
}

std::string encode_stats(const StatsFile& f) {
  const nlohmann::ordered_json header = {{"model_sha256", f.identity.model_sha256},
                                         {"calib_sha256", f.identity.calib_sha256},
                                         {"samples", f.identity.samples},
                                         {"config_sha256", f.identity.config_sha256},
                                         {"quantizer", f.identity.quantizer},
                                         {"passes", f.identity.passes},
                                         {"reference", f.identity.reference},
                                         {"eulernpu", f.identity.host},
                                         {"pass", f.pass},
                                         {"shard", f.shard},
                                         {"shards", f.shards},
                                         {"shard_samples", f.shard_samples}};
  const std::string text = header.dump();
  std::string out(kMagic, kMagicSize);
  put(out, static_cast<uint32_t>(text.size()));
  out += text;
  put(out, static_cast<uint64_t>(f.stats.size()));
  out += f.stats;
  out += sha256_hex(out.data(), out.size());
  return out;
}

void write_stats_file(const std::filesystem::path& path, const StatsFile& f) {
  const std::string out = encode_stats(f);
  // Not one of the kinds an existing file may be replaced as: only a
  // placeholder (empty) or an earlier statistics file gives way.
  write_file_atomic(path, out.data(), out.size(), OutputKind::kCalibStats);
}

StatsFile read_stats_file(const std::filesystem::path& path) {
  const std::string p = path.string();
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    throw UserError("calibration statistics not found", "'" + p + "': " + ec.message(),
                    "check the path; 'eulernpu calibrate --shard K/N --out FILE' writes them");
  }
  const uint64_t bound = limit(kCalibStatsBytesLimit);
  if (size > bound) {
    invalid(p, std::to_string(size) + " bytes, over the bound of " + std::to_string(bound) +
                   " (EULERNPU_MAX_CALIB_STATS_BYTES)");
  }
  std::string bytes(size, '\0');
  std::ifstream in(path, std::ios::binary);
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) invalid(p, "cannot be read");
  return decode_stats(bytes, p);
}

StatsFile decode_stats(const std::string& bytes, const std::string& p) {
  const size_t size = bytes.size();
  if (size < kMagicSize + 4 + 8 + kDigestSize || bytes.compare(0, kMagicSize, kMagic) != 0)
    invalid(p, "not a calibration statistics file");
  const size_t body = size - kDigestSize;
  if (sha256_hex(bytes.data(), body) != bytes.substr(body))
    invalid(p, "its digest does not match: the file was cut short or changed");
  size_t at = kMagicSize;
  uint32_t header_size = 0;
  std::memcpy(&header_size, bytes.data() + at, 4);
  at += 4;
  if (header_size > body - at - 8) invalid(p, "its header runs past the end");
  StatsFile f;
  f.path = p;
  try {
    const auto h = nlohmann::json::parse(bytes.substr(at, header_size));
    StatsIdentity& id = f.identity;
    id.model_sha256 = h.at("model_sha256").get<std::string>();
    id.calib_sha256 = h.at("calib_sha256").get<std::string>();
    id.samples = h.at("samples").get<uint64_t>();
    id.config_sha256 = h.at("config_sha256").get<std::string>();
    id.quantizer = h.at("quantizer").get<std::string>();
    id.passes = h.at("passes").get<uint32_t>();
    id.reference = h.at("reference").get<std::string>();
    id.host = h.at("eulernpu").get<std::string>();
    f.pass = h.at("pass").get<uint32_t>();
    f.shard = h.at("shard").get<uint32_t>();
    f.shards = h.at("shards").get<uint32_t>();
    f.shard_samples = h.at("shard_samples").get<uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    invalid(p, std::string("its header: ") + e.what());
  }
  if (f.shards == 0 || f.shards > kMaxShards || f.shard >= f.shards || f.identity.passes == 0 ||
      f.identity.passes > 16 || f.pass >= f.identity.passes) {
    invalid(p, "its header names shard " + std::to_string(f.shard) + "/" +
                   std::to_string(f.shards) + ", pass " + std::to_string(f.pass + 1) + " of " +
                   std::to_string(f.identity.passes));
  }
  at += header_size;
  uint64_t stats_size = 0;
  std::memcpy(&stats_size, bytes.data() + at, 8);
  at += 8;
  if (stats_size != body - at) invalid(p, "its statistics' size does not match the file's");
  f.stats = bytes.substr(at, stats_size);
  return f;
}

std::vector<std::vector<const StatsFile*>> order_stats(const std::vector<StatsFile>& files,
                                                       const StatsIdentity& expected,
                                                       uint32_t upto) {
  auto mismatch = [&](const StatsFile& f, const std::string& what) {
    throw UserError(kNotFit, "'" + f.path + "' is " + what,
                    "give the statistics 'eulernpu calibrate' wrote for this model, calibration "
                    "set and config");
  };
  std::vector<std::map<uint32_t, const StatsFile*>> by_pass(upto);
  std::vector<uint32_t> shards(upto, 0);
  for (const StatsFile& f : files) {
    const StatsIdentity& id = f.identity;
    if (id.model_sha256 != expected.model_sha256) mismatch(f, "of another model");
    if (id.samples != expected.samples)
      mismatch(f, "of " + std::to_string(id.samples) + " samples, not " +
                      std::to_string(expected.samples) + " (the set or --calib-samples)");
    // The set's digest covers the files read: after the count, which says more.
    if (id.calib_sha256 != expected.calib_sha256) mismatch(f, "of another calibration set");
    if (id.config_sha256 != expected.config_sha256) mismatch(f, "of another config");
    if (id.quantizer != expected.quantizer) mismatch(f, "of quantizer " + id.quantizer);
    if (id.passes != expected.passes) mismatch(f, "of a calibration in another number of passes");
    if (id.reference != expected.reference || id.host != expected.host) {
      mismatch(f, "of another build (" + id.reference + ", eulernpu " + id.host + "; this is " +
                      expected.reference + ", eulernpu " + expected.host + ")");
    }
    if (f.pass >= upto) {
      throw UserError(
          kNotFit,
          "'" + f.path + "' is " + shard_name(f) + ", not of pass 1 to " + std::to_string(upto),
          upto < expected.passes ? "give only the earlier passes' statistics to this pass"
                                 : "give statistics of this config's passes");
    }
    if (shards[f.pass] == 0) shards[f.pass] = f.shards;
    if (f.shards != shards[f.pass]) {
      throw UserError(kNotFit,
                      "'" + f.path + "' is " + shard_name(f) +
                          ", but another file of that pass is "
                          "of " +
                          std::to_string(shards[f.pass]) + " shards",
                      "give the files of one sharding per pass");
    }
    const auto [it, fresh] = by_pass[f.pass].emplace(f.shard, &f);
    if (!fresh) {
      throw UserError(kNotFit,
                      "'" + f.path + "' and '" + it->second->path + "' are both " + shard_name(f),
                      "give each shard once");
    }
  }
  std::vector<std::vector<const StatsFile*>> out(upto);
  for (uint32_t pass = 0; pass < upto; ++pass) {
    std::vector<uint32_t> missing;
    const uint32_t n = std::max<uint32_t>(shards[pass], 1);
    for (uint32_t k = 0; k < n; ++k) {
      const auto it = by_pass[pass].find(k);
      if (it == by_pass[pass].end()) {
        missing.push_back(k);
      } else {
        out[pass].push_back(it->second);
      }
    }
    if (!missing.empty()) {
      throw UserError(
          "calibration statistics are incomplete",
          shards[pass] == 0 ? "no file of pass " + std::to_string(pass + 1) + " was given"
                            : "pass " + std::to_string(pass + 1) + " of " + std::to_string(n) +
                                  " shards lacks shard" + (missing.size() > 1 ? "s " : " ") +
                                  list_numbers(missing),
          "run 'eulernpu calibrate --shard K/" + std::to_string(n) + "' for " +
              (missing.size() > 1 ? "those shards" : "that shard") +
              (pass > 0 ? " with --pass " + std::to_string(pass + 1) : "") + " and give its file");
    }
  }
  return out;
}

}  // namespace eulernpu::host
