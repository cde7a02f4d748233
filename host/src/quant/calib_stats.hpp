// A calibration shard's statistics as a file (eulernpu calibrate --shard),
// and the check that a set of them is exactly one whole calibration.
//
// Layout: "ENPSTAT1", u32 header size, the header (JSON: what the
// statistics are of, which shard and pass), u64 size, the quantizer's
// statistics (its session_export bytes), then the sha256 (hex) of
// everything before it. The digest makes a file cut short or changed an
// error, never a shard with fewer samples.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace eulernpu::host {

// What statistics are of: shards merge only if all of these agree with
// the quantization that reads them.
struct StatsIdentity {
  std::string model_sha256;   // the float model the quantizer sees
  std::string calib_sha256;   // the calibration set (CalibSet::sha256)
  uint64_t samples = 0;       // samples in the set (after --calib-samples)
  std::string config_sha256;  // the quantization config, canonical text
  std::string quantizer;      // "name version"
  uint32_t passes = 1;        // the quantizer's passes for that config
  // The build that computed the values: the float reference backend
  // ("name version") and eulernpu's version. Another build may compute
  // other float32 values, and the artifact would not be one machine's.
  std::string reference, host;
};

struct StatsFile {
  StatsIdentity identity;
  uint32_t shard = 0, shards = 1;  // shard K of N: the samples i with i mod N = K
  uint32_t pass = 0;               // 0-based
  uint64_t shard_samples = 0;
  std::string stats;  // the quantizer's bytes
  std::string path;   // where it was read from (for errors)
};

// The file's bytes, and a file from them (`name` names it in errors; the
// same checks as read_stats_file).
std::string encode_stats(const StatsFile& file);
StatsFile decode_stats(const std::string& bytes, const std::string& name);

// Written to a temporary file beside `path`, then renamed.
void write_stats_file(const std::filesystem::path& path, const StatsFile& file);

// Throws UserError "calibration statistics are invalid" for a file that is
// not one, or is cut short or changed; its size is bounded
// (EULERNPU_MAX_CALIB_STATS_BYTES) before it is read.
StatsFile read_stats_file(const std::filesystem::path& path);

// The files of passes 0..upto-1, each in shard order: every pass's shards
// complete, none repeated, all of `expected`. Throws UserError naming the
// first file that does not fit, or the missing shards; a file of pass
// `upto` or later is refused too.
std::vector<std::vector<const StatsFile*>> order_stats(const std::vector<StatsFile>& files,
                                                       const StatsIdentity& expected,
                                                       uint32_t upto);

// "K/N" as given to --shard; UserError unless 0 <= K < N <= 100000.
std::pair<uint32_t, uint32_t> parse_shard(const std::string& text);

}  // namespace eulernpu::host
