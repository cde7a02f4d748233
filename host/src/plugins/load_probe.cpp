#include "plugins/load_probe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "plugins/plugin_call.hpp"

namespace fs = std::filesystem;

namespace eulernpu::host {
namespace {

// The child: loads libraries[start...] one after the other, telling the
// parent the index of each before it starts on it, then the count when
// done. It dies with the library that kills it.
[[noreturn]] void child(const std::vector<fs::path>& libraries, size_t start, int out,
                        const std::function<void(const fs::path&)>& load) {
  reset_fault_handler();
  // The host loads the good ones again and logs for them then.
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
  }
  for (size_t i = start; i <= libraries.size(); ++i) {
    const auto index = static_cast<uint32_t>(i);
    if (::write(out, &index, sizeof index) != sizeof index) ::_exit(3);
    if (i == libraries.size()) break;
    try {
      load(libraries[i]);
    } catch (...) {
      // A load that throws is reported by the host's own load.
    }
  }
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
    size_t current = start;
    bool done = false, hung = false;
    for (;;) {
      pollfd p{fds[0], POLLIN, 0};
      const int ready = ::poll(&p, 1, seconds_each * 1000);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        hung = true;
        ::kill(pid, SIGKILL);
        break;
      }
      uint32_t index = 0;
      const ssize_t got = ::read(fds[0], &index, sizeof index);
      if (got != sizeof index) break;  // the child is gone
      if (index == libraries.size()) {
        done = true;
        break;
      }
      current = index;
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (done) break;
    if (current >= libraries.size()) break;
    failed[libraries[current]] =
        hung ? "it did not finish loading within " + std::to_string(seconds_each) + " s"
             : exit_reason(status);
    start = current + 1;
  }
  return failed;
}

}  // namespace eulernpu::host
