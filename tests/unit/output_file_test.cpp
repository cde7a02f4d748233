// Every output goes through write_file_atomic (formats/output_file.hpp):
// all or nothing, even when a write fails half way, and never over
// anything but an earlier output of the same kind.
#include "formats/output_file.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "expect_user_error.hpp"
#include "formats/npz.hpp"
#include "scratch_dir.hpp"

namespace eulernpu::host {
namespace {

namespace fs = std::filesystem;

constexpr char kCannotWrite[] = "cannot write output file";
constexpr char kInTheWay[] = "output path is in the way";

using test::list_dir;
using test::test_dir;

using test::read_text;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

using test::expect_user_error;

TEST(OutputFileTest, ReplacesAnEarlierOutputOfTheSameKind) {
  const fs::path dir = test_dir();
  const fs::path path = dir / "report.json";
  write_file_atomic(path, "{\"a\": 1}", 8, OutputKind::kJson);
  write_file_atomic(path, "{}", 2, OutputKind::kJson);
  EXPECT_EQ(read_text(path), "{}");
  // An empty file (made with touch) may be written too.
  write_text(dir / "empty.npz", "");
  write_file_atomic(dir / "empty.npz", "PK", 2, OutputKind::kZip);
  EXPECT_EQ(read_text(dir / "empty.npz"), "PK");
  EXPECT_EQ(list_dir(dir), (std::set<std::string>{"empty.npz", "report.json"}));
}

TEST(OutputFileTest, RefusesAFileOfAnotherKind) {
  const fs::path dir = test_dir();
  write_text(dir / "notes.txt", "my notes\n");
  for (OutputKind kind : {OutputKind::kZip, OutputKind::kJson, OutputKind::kOnnx}) {
    const UserError e =
        expect_user_error([&] { write_file_atomic(dir / "notes.txt", "PK", 2, kind); }, kInTheWay);
    EXPECT_NE(e.where().find("notes.txt"), std::string::npos);
  }
  EXPECT_EQ(read_text(dir / "notes.txt"), "my notes\n");
  EXPECT_EQ(list_dir(dir), std::set<std::string>{"notes.txt"});
}

TEST(OutputFileTest, NeverRenamesOverASymlinkFifoOrDevice) {
  const fs::path dir = test_dir();
  write_text(dir / "target.json", "{}");
  fs::create_symlink(dir / "target.json", dir / "link.json");
  ASSERT_EQ(::mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  fs::create_directory(dir / "dir.json");
  for (const char* name : {"link.json", "fifo.json", "dir.json"}) {
    const UserError e = expect_user_error(
        [&] { write_file_atomic(dir / name, "{}", 2, OutputKind::kJson); }, kInTheWay);
    EXPECT_NE(e.where().find(name), std::string::npos);
  }
  // /dev/null stays the device it is (as root a rename would replace it).
  expect_user_error([&] { write_file_atomic("/dev/null", "{}", 2, OutputKind::kJson); }, kInTheWay);
  EXPECT_FALSE(fs::is_regular_file(fs::symlink_status("/dev/null")));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir / "link.json")));
  EXPECT_EQ(list_dir(dir),
            (std::set<std::string>{"dir.json", "fifo.json", "link.json", "target.json"}));
}

TEST(OutputFileTest, AWriteThatFailsHalfWayLeavesTheOldFileAndNoTemporary) {
  // A file-size limit makes write() fail with EFBIG after the first
  // kilobyte: a disk filling up mid-write.
  const fs::path dir = test_dir();
  const fs::path path = dir / "out.json";
  write_text(path, "{\"old\": true}");
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto* old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old_limit;
  small.rlim_cur = 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string big = "[" + std::string(1 << 20, ' ') + "]";
  const UserError e = expect_user_error(
      [&] { write_file_atomic(path, big.data(), big.size(), OutputKind::kJson); }, kCannotWrite);
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_NE(e.where().find("out.json"), std::string::npos);
  EXPECT_EQ(read_text(path), "{\"old\": true}");
  EXPECT_EQ(list_dir(dir), std::set<std::string>{"out.json"});
}

TEST(OutputFileTest, FailsCleanlyWhenTheDirectoryIsMissing) {
  const fs::path dir = test_dir();
  const fs::path path = dir / "missing" / "out.npz";
  const UserError e =
      expect_user_error([&] { write_file_atomic(path, "PK", 2, OutputKind::kZip); }, kCannotWrite);
  EXPECT_NE(e.where().find("out.npz"), std::string::npos);
  EXPECT_TRUE(list_dir(dir).empty());
}

TEST(OutputFileTest, RejectsADirectoryPath) {
  const fs::path dir = test_dir();
  expect_user_error([&] { write_file_atomic(dir / "", "x", 1, OutputKind::kJson); }, kCannotWrite);
  EXPECT_TRUE(list_dir(dir).empty());
}

}  // namespace
}  // namespace eulernpu::host
