#include "plugins/load_probe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>

#include "plugins/plugin_call.hpp"

namespace fs = std::filesystem;

namespace eulernpu::host {
namespace {

// The child: loads libraries[start...] one after the other, telling the
// parent before it starts on each (2i) and after it is done (2i + 1), and
// the count when all are (2n). It dies with the library that kills it.
[[noreturn]] void child(const std::vector<fs::path>& libraries, size_t start, int out,
                        const std::function<void(const fs::path&)>& load) {
  reset_fault_handler();
  // A crash here is expected, not worth a core dump.
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  // The host loads the good ones again and logs for them then.
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
  }
  auto say = [&](size_t message) {
    const auto m = static_cast<uint32_t>(message);
    if (::write(out, &m, sizeof m) != sizeof m) ::_exit(3);
  };
  for (size_t i = start; i < libraries.size(); ++i) {
    say(2 * i);
    try {
      load(libraries[i]);
    } catch (...) {
      // A load that throws is reported by the host's own load.
    }
    say(2 * i + 1);
  }
  say(2 * libraries.size());
  // _exit: no atexit handlers or static destructors of a forked copy.
  ::_exit(0);
}

std::string exit_reason(int status) {
  if (WIFSIGNALED(status)) {
    const char* name = ::strsignal(WTERMSIG(status));
    return "it crashed while loading (signal " + std::to_string(WTERMSIG(status)) +
           (name ? ", " + std::string(name) : std::string()) + ")";
  }
  return "it stopped the process while loading (exit status " +
         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
}

// Reaps `pid`, killing it if it has not ended by `deadline`; its status, or
// nullopt if it cannot be had (SIGCHLD ignored by whoever started us).
std::optional<int> reap(pid_t pid, std::chrono::steady_clock::time_point deadline) {
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return std::nullopt;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return std::nullopt;
      }
      return status;
    }
    ::usleep(1000);
  }
}

}  // namespace

std::map<fs::path, std::string> probe_libraries(const std::vector<fs::path>& libraries,
                                                const std::function<void(const fs::path&)>& load,
                                                int seconds_each) {
  std::map<fs::path, std::string> failed;
  size_t start = 0;
  while (start < libraries.size()) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return failed;
    std::fflush(nullptr);  // the child must not flush the parent's buffers again
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      spdlog::debug("cannot start a child to probe plugins: {}", std::strerror(errno));
      return failed;
    }
    if (pid == 0) {
      ::close(fds[0]);
      child(libraries, start, fds[1], load);
    }
    ::close(fds[1]);
    // The messages must come in order; anything else (a library writing to
    // the pipe) counts against the library being loaded.
    size_t expected = 2 * start;
    bool done = false, hung = false;
    for (;;) {
      pollfd p{fds[0], POLLIN, 0};
      const int ready = ::poll(&p, 1, seconds_each * 1000);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) hung = true;
      if (ready <= 0) break;
      uint32_t message = 0;
      if (::read(fds[0], &message, sizeof message) != sizeof message) break;  // the child is gone
      if (message != expected) break;
      if (message == 2 * libraries.size()) {
        done = true;
        break;
      }
      ++expected;
    }
    ::close(fds[0]);
    const auto status =
        reap(pid, std::chrono::steady_clock::now() + std::chrono::seconds(done ? 5 : 1));
    if (done) break;
    // Died between two libraries (killed from outside): nobody to blame,
    // and the host's own load tries the rest.
    if (expected % 2 == 0) break;
    // expected is odd: library `current` had started and not finished.
    const size_t current = expected / 2;
    failed[libraries[current]] =
        hung     ? "it did not finish loading within " + std::to_string(seconds_each) + " s"
        : status ? exit_reason(*status)
                 : "it stopped the process while loading";
    start = current + 1;
  }
  return failed;
}

}  // namespace eulernpu::host
