#include "formats/artifact.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "formats/manifest.hpp"
#include "formats/packed_artifact.hpp"
#include "formats/sha256.hpp"
#include "plugins/host_api.hpp"

namespace fs = std::filesystem;

namespace eulernpu::host {
namespace {

fs::path scratch(const std::string& name) {
  const char* env = std::getenv("EULERNPU_TEST_TMP");
  fs::path p = fs::path(env ? env : fs::temp_directory_path().string()) / ("artifact_test_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

// `f` with the manifest make_manifest would add: every other file's size
// and sha256.
FileSet with_manifest(FileSet f) {
  std::string manifest = "{\"files\": {";
  for (const auto& [path, bytes] : f) {
    if (manifest.back() != '{') manifest += ", ";
    manifest += "\"" + path + "\": {\"bytes\": " + std::to_string(bytes.size()) +
                ", \"sha256\": \"" + sha256_hex(bytes.data(), bytes.size()) + "\"}";
  }
  manifest += "}}\n";
  f["manifest.json"] = std::vector<uint8_t>(manifest.begin(), manifest.end());
  return f;
}

FileSet files(const std::string& graph) {
  return with_manifest({{"graph.json", std::vector<uint8_t>(graph.begin(), graph.end())},
                        {"weights/w.npz", {1, 2, 3}}});
}

TEST(ArtifactTest, WritesAllFilesAndReplacesAnOldArtifact) {
  const fs::path dir = scratch("replace");
  write_artifact_dir(dir / "a", files("one"));
  write_artifact_dir(dir / "a", files("two"));
  const Artifact a = Artifact::open(dir / "a");
  const auto graph = a.read("graph.json");
  EXPECT_EQ(std::string(graph.begin(), graph.end()), "two");
  EXPECT_EQ(a.read("weights/w.npz"), (std::vector<uint8_t>{1, 2, 3}));
  // Nothing but the artifact is left in the directory.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(ArtifactTest, RefusesToReplaceSomethingElse) {
  const fs::path dir = scratch("other");
  fs::create_directories(dir / "mine");
  std::ofstream(dir / "mine" / "keep.txt") << "data";
  EXPECT_THROW(write_artifact_dir(dir / "mine", files("x")), UserError);
  EXPECT_TRUE(fs::exists(dir / "mine" / "keep.txt"));
}

TEST(ArtifactTest, BadPathLeavesNothingBehind) {
  const fs::path dir = scratch("badpath");
  FileSet bad = files("x");
  bad["../escape"] = {1};
  EXPECT_THROW(write_artifact_dir(dir / "a", bad), UserError);
  EXPECT_FALSE(fs::exists(dir / "escape"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 0);
}

TEST(ArtifactTest, ReadingRefusesEscapesAndMissingFiles) {
  const fs::path dir = scratch("read");
  write_artifact_dir(dir / "a", files("g"));
  const Artifact a = Artifact::open(dir / "a");
  EXPECT_THROW(a.read("../a/graph.json"), UserError);
  EXPECT_THROW(a.read("/etc/passwd"), UserError);
  EXPECT_THROW(a.read("plan.json"), UserError);
  EXPECT_THROW(Artifact::open(dir / "missing"), UserError);
}

TEST(ArtifactTest, ADirectoryFileMustBeTheOneItsManifestRecords) {
  // A sha256 proves the files unchanged, as for a packed artifact.
  const fs::path dir = scratch("hashed");
  write_artifact_dir(dir / "a", files("graph"));
  std::ofstream(dir / "a" / "graph.json") << "grapH";  // same size, other bytes
  std::ofstream(dir / "a" / "extra.json") << "{}";
  const Artifact a = Artifact::open(dir / "a");
  for (const char* name : {"graph.json", "extra.json"}) {
    try {
      a.read(name);
      ADD_FAILURE() << name << " was read";
    } catch (const UserError& e) {
      EXPECT_EQ(e.title(), "artifact is corrupt") << e.where();
      EXPECT_NE(e.where().find(name), std::string::npos) << e.where();
    }
  }
  EXPECT_EQ(a.read("weights/w.npz"), (std::vector<uint8_t>{1, 2, 3}));
  // A manifest without its file list is refused at once.
  std::ofstream(dir / "a" / "manifest.json") << "{}";
  EXPECT_THROW(Artifact::open(dir / "a"), UserError);
}

TEST(ArtifactTest, RelativePathRules) {
  EXPECT_NO_THROW(check_relative_path("weights/a.npz", "f"));
  for (const char* bad : {"", "/abs", "a/../b", "./a", "a//b", "a/", "..", "a\\b"}) {
    EXPECT_THROW(check_relative_path(bad, "f"), UserError) << bad;
  }
}

// A packable artifact: its manifest lists every other file with its size
// and sha256, as make_manifest writes it.
FileSet packable(const std::string& graph) {
  return with_manifest({{"graph.json", std::vector<uint8_t>(graph.begin(), graph.end())},
                        {"weights/w.npz", {1, 2, 3}},
                        {"plan.json", {'{', '}'}}});
}

void write_bytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> read_bytes(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The title of the UserError `fn` throws, or "" if it throws none.
template <typename Fn>
std::string error_title(Fn fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.title();
  }
  return "";
}

TEST(PackedArtifactTest, EncodingIsDeterministicAndSorted) {
  const std::vector<uint8_t> a = encode_packed_artifact(packable("g"));
  EXPECT_EQ(a, encode_packed_artifact(packable("g")));
  EXPECT_NE(a, encode_packed_artifact(packable("h")));
  ASSERT_GT(a.size(), 30u);
  // The first local header: "PK\3\4", DOS time 0 and date 1980-01-01 at
  // offset 10, and the first path in byte order.
  EXPECT_EQ(std::string(a.begin(), a.begin() + 4), std::string("PK\x03\x04"));
  EXPECT_EQ(a[10] | a[11] << 8, 0);
  EXPECT_EQ(a[12] | a[13] << 8, (1 << 5) | 1);
  const size_t name_len = a[26] | a[27] << 8;
  EXPECT_EQ(a[28] | a[29] << 8, 0) << "no extra field";
  EXPECT_EQ(std::string(a.begin() + 30, a.begin() + 30 + static_cast<ptrdiff_t>(name_len)),
            "graph.json");
}

TEST(PackedArtifactTest, RoundTripsThroughOpen) {
  const fs::path dir = scratch("packed_roundtrip");
  write_artifact(dir / "a.mxq", packable("one"));
  write_artifact(dir / "a.mxq", packable("two"));  // replaces the old one
  EXPECT_TRUE(fs::is_regular_file(dir / "a.mxq"));
  const Artifact a = Artifact::open(dir / "a.mxq");
  const auto graph = a.read("graph.json");
  EXPECT_EQ(std::string(graph.begin(), graph.end()), "two");
  EXPECT_EQ(a.read("weights/w.npz"), (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(a.describe("graph.json"), (dir / "a.mxq" / "graph.json").string());
  EXPECT_EQ(a.read("manifest.json"), packable("two").at("manifest.json"));
  EXPECT_THROW(a.read("missing.json"), UserError);
  // Nothing but the packed artifact is left in the directory.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(PackedArtifactTest, RefusesToReplaceSomethingElse) {
  const fs::path dir = scratch("packed_other");
  std::ofstream(dir / "notes.mxq") << "my notes";
  fs::create_directories(dir / "d.mxq");
  EXPECT_EQ(error_title([&] { write_packed_artifact(dir / "notes.mxq", packable("x")); }),
            "output path is in the way");
  EXPECT_EQ(error_title([&] { write_packed_artifact(dir / "d.mxq", packable("x")); }),
            "output path is in the way");
  EXPECT_EQ(read_bytes(dir / "notes.mxq"),
            (std::vector<uint8_t>{'m', 'y', ' ', 'n', 'o', 't', 'e', 's'}));
  FileSet bad = packable("x");
  bad["../escape"] = {1};
  EXPECT_THROW(write_packed_artifact(dir / "bad.mxq", bad), UserError);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);
}

TEST(PackedArtifactTest, ChecksMembersAgainstTheManifest) {
  const fs::path dir = scratch("packed_manifest");
  FileSet tampered = packable("g");
  tampered["graph.json"] = {'h'};
  write_bytes(dir / "t.mxq", encode_packed_artifact(tampered));
  EXPECT_EQ(error_title([&] { Artifact::open(dir / "t.mxq"); }),
            "packed artifact does not match its manifest");

  FileSet extra = packable("g");
  extra["unlisted.bin"] = {0};
  write_bytes(dir / "e.mxq", encode_packed_artifact(extra));
  EXPECT_EQ(error_title([&] { Artifact::open(dir / "e.mxq"); }),
            "packed artifact does not match its manifest");

  FileSet missing = packable("g");
  missing.erase("plan.json");
  write_bytes(dir / "m.mxq", encode_packed_artifact(missing));
  EXPECT_EQ(error_title([&] { Artifact::open(dir / "m.mxq"); }),
            "packed artifact does not match its manifest");

  FileSet no_manifest = packable("g");
  no_manifest.erase("manifest.json");
  write_bytes(dir / "n.mxq", encode_packed_artifact(no_manifest));
  EXPECT_EQ(error_title([&] { Artifact::open(dir / "n.mxq"); }), "not an artifact");

  FileSet bad_manifest = packable("g");
  bad_manifest["manifest.json"] = {'['};
  write_bytes(dir / "b.mxq", encode_packed_artifact(bad_manifest));
  EXPECT_EQ(error_title([&] { Artifact::open(dir / "b.mxq"); }), "artifact manifest is corrupt");
}

TEST(PackedArtifactTest, LimitsAreCheckedBeforeReading) {
  const fs::path dir = scratch("packed_limits");
  write_packed_artifact(dir / "a.mxq", packable("graph"));
  EXPECT_NO_THROW(read_packed_artifact(dir / "a.mxq"));
  const std::string too_big = "packed artifact exceeds a size limit";
  EXPECT_EQ(error_title([&] { read_packed_artifact(dir / "a.mxq", {.max_members = 3}); }), too_big);
  EXPECT_EQ(error_title([&] { read_packed_artifact(dir / "a.mxq", {.max_member_bytes = 4}); }),
            too_big);
  EXPECT_EQ(error_title([&] { read_packed_artifact(dir / "a.mxq", {.max_total_bytes = 8}); }),
            too_big);
}

TEST(PackedArtifactTest, DamagedFilesAreCorruptNotCrashes) {
  const fs::path dir = scratch("packed_damaged");
  const std::vector<uint8_t> good = encode_packed_artifact(packable("graph"));
  const std::string corrupt = "packed artifact is corrupt";
  write_bytes(dir / "empty.mxq", {});
  EXPECT_EQ(error_title([&] { Artifact::open(dir / "empty.mxq"); }), corrupt);
  write_bytes(dir / "text.mxq", {'h', 'e', 'l', 'l', 'o'});
  EXPECT_EQ(error_title([&] { Artifact::open(dir / "text.mxq"); }), corrupt);
  // Every truncation is refused with an error, never read as something else.
  for (size_t len = 1; len < good.size(); len += 7) {
    write_bytes(dir / "cut.mxq",
                std::vector<uint8_t>(good.begin(), good.begin() + static_cast<ptrdiff_t>(len)));
    EXPECT_NE(error_title([&] { Artifact::open(dir / "cut.mxq"); }), "") << len;
  }
  // Every flipped byte is caught by libzip's checks, the CRC or the manifest.
  for (size_t i = 0; i < good.size(); i += 5) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x5a;
    write_bytes(dir / "flip.mxq", bad);
    try {
      const Artifact a = Artifact::open(dir / "flip.mxq");
      // A flip in a field nothing reads back (e.g. the "version made by")
      // may leave the contents intact; then they must be exactly right.
      for (const auto& [path, bytes] : packable("graph")) EXPECT_EQ(a.read(path), bytes) << i;
    } catch (const UserError&) {
    }
  }
}

TEST(ManifestTest, CommandLineKeepsOnlyFileNames) {
  EXPECT_EQ(portable_command_line({"eulernpu", "compile", "--spec", "/home/u/m/spec.yaml",
                                   "--weights=/x/w.npz", "--backend", "cpu_ref", "dir/sub/"}),
            (std::vector<std::string>{"eulernpu", "compile", "--spec", "spec.yaml",
                                      "--weights=w.npz", "--backend", "cpu_ref", "sub"}));
}

}  // namespace
}  // namespace eulernpu::host
