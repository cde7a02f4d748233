#include "artifact.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "error.hpp"
#include "host_api.hpp"
#include "manifest.hpp"

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

FileSet files(const std::string& graph) {
  return {{"manifest.json", {'{', '}'}},
          {"graph.json", std::vector<uint8_t>(graph.begin(), graph.end())},
          {"weights/w.npz", {1, 2, 3}}};
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

TEST(ArtifactTest, RelativePathRules) {
  EXPECT_NO_THROW(check_relative_path("weights/a.npz", "f"));
  for (const char* bad : {"", "/abs", "a/../b", "./a", "a//b", "a/", "..", "a\\b"}) {
    EXPECT_THROW(check_relative_path(bad, "f"), UserError) << bad;
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
