// Files for one test: a fresh directory named after the running test, and
// what a test reads back from it.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

namespace eulernpu::test {

// A fresh, empty directory for the running test's files, under
// $EULERNPU_TEST_TMP (or the system's temporary directory).
inline std::filesystem::path test_dir() {
  const char* env = std::getenv("EULERNPU_TEST_TMP");
  const std::filesystem::path root = env != nullptr && *env != '\0'
                                         ? std::filesystem::path(env)
                                         : std::filesystem::temp_directory_path() / "eulernpu_test";
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir =
      root / (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::set<std::string> list_dir(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace eulernpu::test
