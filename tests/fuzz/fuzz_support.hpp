// What every fuzz harness shares (docs/reliability.md): one plugin registry
// loaded before the first input, a scratch directory of this process's own,
// multi-file inputs, and the oracle. Bad input must end in a UserError
// other than an internal one; anything else (an internal error, another
// exception, a crash, a sanitizer report) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.hpp"

namespace eulernpu::fuzz {

// Separates the files of a multi-file input; also in every dictionary.
inline constexpr std::string_view kPartSeparator = "@@part@@";

// The process's host state, made on first use: plugins from the build
// tree's plugin directory, stdout and logs silenced.
struct FuzzEnv {
  host::Context ctx;
  std::filesystem::path scratch;  // empty directory of this process's own
};
FuzzEnv& env();

// `data` cut at every kPartSeparator.
std::vector<std::string_view> split_parts(const uint8_t* data, size_t size);

// A part of the form "<relative path>\n<content>": false unless the path is
// a plain relative one (letters, digits, '_', '-', '.', '/', no "..", at most
// 4 levels), so that no input makes a harness write outside its scratch.
bool named_part(std::string_view part, std::string& path, std::string_view& content);

// Empties `dir` (under the scratch directory) and returns it.
std::filesystem::path fresh_dir(const std::string& name);
void write_file(const std::filesystem::path& path, std::string_view content);

// Runs `fn` and applies the oracle: returns normally for a UserError with a
// title other than "internal error" / "internal plugin error"; aborts with
// the message for anything else, so libFuzzer records the input.
void expect_clean(const std::function<void()>& fn);

// Runs one eulernpu command in this process; args[0] is its name.
int run_command(host::CommandFn command, std::vector<std::string> args);

}  // namespace eulernpu::fuzz
