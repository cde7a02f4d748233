// Statistics files of a sharded calibration: they read back as written;
// a file cut anywhere or with any byte changed is refused (its digest),
// never read past its end; and a set of them is accepted only as exactly
// one whole calibration: every shard of every pass once, all of the same
// model, set, config and quantizer.
#include "quant/calib_stats.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace eulernpu::host {
namespace calib_stats_test {
namespace {

StatsIdentity identity() {
  StatsIdentity id;
  id.model_sha256 = "m" + std::string(63, '0');
  id.calib_sha256 = "c" + std::string(63, '0');
  id.samples = 10;
  id.config_sha256 = "k" + std::string(63, '0');
  id.quantizer = "int8_quantizer 1.0.0";
  id.passes = 2;
  id.reference = "cpu_ref 1.0.0";
  id.host = "1.0.0";
  return id;
}

StatsFile file(uint32_t k, uint32_t n, uint32_t pass, std::string path = {}) {
  StatsFile f;
  f.identity = identity();
  f.shard = k;
  f.shards = n;
  f.pass = pass;
  f.shard_samples = 3;
  f.stats = "stats of " + std::to_string(k) + "/" + std::to_string(n);
  f.path = path.empty() ? "p" + std::to_string(pass) + "." + std::to_string(k) : path;
  return f;
}

std::string where_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.title() + ": " + e.where();
  }
  return "no error";
}

TEST(CalibStatsTest, ReadsBackWhatItWrote) {
  const StatsFile f = file(2, 3, 1);
  const StatsFile back = decode_stats(encode_stats(f), "x");
  EXPECT_EQ(back.identity.model_sha256, f.identity.model_sha256);
  EXPECT_EQ(back.identity.passes, 2u);
  EXPECT_EQ(back.identity.reference, "cpu_ref 1.0.0");
  EXPECT_EQ(back.identity.host, "1.0.0");
  EXPECT_EQ(back.shard, 2u);
  EXPECT_EQ(back.shards, 3u);
  EXPECT_EQ(back.pass, 1u);
  EXPECT_EQ(back.shard_samples, 3u);
  EXPECT_EQ(back.stats, f.stats);

  const auto dir = std::filesystem::temp_directory_path() / "eulernpu-calib-stats-test";
  std::filesystem::create_directories(dir);
  write_stats_file(dir / "a.calib", f);
  EXPECT_EQ(read_stats_file(dir / "a.calib").stats, f.stats);
  std::filesystem::remove_all(dir);
}

TEST(CalibStatsTest, EveryCutAndEveryChangedByteIsRefused) {
  const std::string bytes = encode_stats(file(0, 1, 0));
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_THROW(decode_stats(bytes.substr(0, n), "cut"), UserError) << n;
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string changed = bytes;
    changed[i] = static_cast<char>(changed[i] ^ 0x20);
    EXPECT_THROW(decode_stats(changed, "changed"), UserError) << i;
  }
}

TEST(CalibStatsTest, OnlyAWholeCalibrationIsAccepted) {
  const StatsIdentity id = identity();
  // Pass 1 in 3 shards, pass 2 in 2, given in any order.
  std::vector<StatsFile> all = {file(1, 2, 1), file(2, 3, 0), file(0, 3, 0), file(0, 2, 1),
                                file(1, 3, 0)};
  const auto ordered = order_stats(all, id, 2);
  ASSERT_EQ(ordered.size(), 2u);
  ASSERT_EQ(ordered[0].size(), 3u);
  ASSERT_EQ(ordered[1].size(), 2u);
  for (uint32_t k = 0; k < 3; ++k) EXPECT_EQ(ordered[0][k]->shard, k);
  // Pass 1 alone, for pass 2's shards.
  EXPECT_EQ(order_stats({file(0, 1, 0)}, id, 1).size(), 1u);

  EXPECT_EQ(where_of([&] {
              order_stats({file(0, 3, 0), file(2, 3, 0)}, id, 1);
            }),
            "calibration statistics are incomplete: pass 1 of 3 shards lacks shard 1");
  EXPECT_EQ(where_of([&] { order_stats({file(0, 1, 0)}, id, 2); }),
            "calibration statistics are incomplete: no file of pass 2 was given");
  EXPECT_EQ(where_of([&] {
              order_stats({file(0, 1, 0, "a"), file(0, 1, 0, "b")}, id, 1);
            }),
            "calibration statistics do not fit: 'b' and 'a' are both shard 0/1 of pass 1");
  EXPECT_EQ(where_of([&] {
              order_stats({file(0, 2, 0, "a"), file(1, 3, 0, "b")}, id, 1);
            }),
            "calibration statistics do not fit: 'b' is shard 1/3 of pass 1, but another file "
            "of that pass is of 2 shards");
  EXPECT_EQ(where_of([&] { order_stats({file(0, 1, 1, "a")}, id, 1); }),
            "calibration statistics do not fit: 'a' is shard 0/1 of pass 2, not of pass 1 to 1");
  StatsFile other = file(0, 1, 0, "o");
  other.identity.config_sha256[0] = 'x';
  EXPECT_EQ(where_of([&] { order_stats({other}, id, 1); }),
            "calibration statistics do not fit: 'o' is of another config");
  StatsFile built = file(0, 1, 0, "b");
  built.identity.reference = "cpu_ref 0.9.0";
  EXPECT_EQ(where_of([&] { order_stats({built}, id, 1); }),
            "calibration statistics do not fit: 'b' is of another build (cpu_ref 0.9.0, eulernpu "
            "1.0.0; this is cpu_ref 1.0.0, eulernpu 1.0.0)");
  // Many missing shards are summarized.
  EXPECT_EQ(where_of([&] { order_stats({file(3, 100, 0)}, id, 1); }),
            "calibration statistics are incomplete: pass 1 of 100 shards lacks shards 0, 1, 2, "
            "4, 5 and 94 more");
}

TEST(CalibStatsTest, ShardArgumentsAreChecked) {
  EXPECT_EQ(parse_shard("2/3"), std::make_pair(2u, 3u));
  for (const char* bad : {"3/3", "", "/", "1/", "/2", "-1/2", "1/0", "a/b", "1/2/3", "0/100001"}) {
    EXPECT_THROW(parse_shard(bad), UserError) << bad;
  }
}

}  // namespace
}  // namespace calib_stats_test
}  // namespace eulernpu::host
