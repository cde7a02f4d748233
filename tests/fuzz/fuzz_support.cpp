#include "fuzz_support.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>

#include "core/error.hpp"

namespace fs = std::filesystem;

namespace eulernpu::fuzz {

FuzzEnv& env() {
  static FuzzEnv* e = [] {
    auto* made = new FuzzEnv;
    made->ctx.plugin_dirs.emplace_back(EULERNPU_FUZZ_PLUGIN_DIR);
    made->ctx.command_line.push_back("eulernpu");
    spdlog::set_level(spdlog::level::off);
    // Commands print results; a fuzz run wants only libFuzzer's own lines.
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::close(null);
    }
    const char* tmp = std::getenv("TMPDIR");
    made->scratch = fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") /
                    ("eulernpu_fuzz." + std::to_string(::getpid()));
    fs::remove_all(made->scratch);
    fs::create_directories(made->scratch);
    (void)made->ctx.registry();  // load the plugins before the first input
    return made;
  }();
  return *e;
}

std::vector<std::string_view> split_parts(const uint8_t* data, size_t size) {
  std::vector<std::string_view> parts;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (;;) {
    const size_t at = rest.find(kPartSeparator);
    parts.push_back(rest.substr(0, at));
    if (at == std::string_view::npos) return parts;
    rest.remove_prefix(at + kPartSeparator.size());
  }
}

bool named_part(std::string_view part, std::string& path, std::string_view& content) {
  const size_t nl = part.find('\n');
  if (nl == std::string_view::npos || nl == 0 || nl > 100) return false;
  path = std::string(part.substr(0, nl));
  content = part.substr(nl + 1);
  if (path.front() == '/' || path.back() == '/') return false;
  int depth = 0;
  for (char c : path) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.' || c == '/';
    if (!ok) return false;
    depth += c == '/';
  }
  if (depth > 3) return false;
  for (const auto& piece : fs::path(path)) {
    if (piece == ".." || piece == "." || piece.empty()) return false;
  }
  return true;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = env().scratch / name;
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  return dir;
}

void write_file(const fs::path& path, std::string_view content) {
  // Parts may clash (a file where another part needs a directory): the
  // later one is dropped, as an input that could not be written.
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec || fs::is_directory(path, ec)) return;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

void expect_clean(const std::function<void()>& fn) {
  auto finding = [](const std::string& what) {
    std::fprintf(stderr, "eulernpu fuzz finding: %s\n", what.c_str());
    std::abort();
  };
  try {
    fn();
  } catch (const host::UserError& e) {
    if (e.title() == "internal error" || e.title() == "internal plugin error") {
      finding(host::format_error(e));
    }
  } catch (const std::bad_alloc&) {
    finding("std::bad_alloc: an allocation no limit bounded");
  } catch (const std::exception& e) {
    finding(std::string("uncaught exception: ") + e.what());
  } catch (...) {
    finding("uncaught non-standard exception");
  }
}

int run_command(host::CommandFn command, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return command(env().ctx, static_cast<int>(args.size()), argv.data());
}

}  // namespace eulernpu::fuzz
