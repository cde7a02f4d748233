#include "core/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <stdexcept>

namespace eulernpu::host {

namespace {

// The display whose line is open on stderr, for the log sink. Commands run
// one at a time on one thread; the log sink may be called from another.
std::atomic<ProgressDisplay*> open_on_stderr{nullptr};

// "Compile [3/6] calibrate pass 1/2"
std::string prefix(const ProgressEvent& e) {
  std::string out = e.task;
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  if (e.steps > 0) out += " [" + std::to_string(e.index) + "/" + std::to_string(e.steps) + "]";
  if (!e.step.empty()) out += " " + e.step;
  if (!e.detail.empty()) out += " " + e.detail;
  return out;
}

// A time taken: "0.31 s", "12.4 s", "3:05", "1:02:09".
std::string duration(double s) {
  char buf[32];
  if (s < 10) {
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  } else if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  } else {
    const auto t = static_cast<long long>(std::llround(s));
    if (t < 3600) {
      std::snprintf(buf, sizeof buf, "%lld:%02lld", t / 60, t % 60);
    } else {
      std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
    }
  }
  return buf;
}

// A time left, as a clock: "0:04", "12:40", "1:02:09".
std::string clock(double s) {
  const auto t = static_cast<long long>(std::llround(std::max(s, 0.0)));
  char buf[32];
  if (t < 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", t / 60, t % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
  }
  return buf;
}

// "26/64 samples"; a step counted in milliseconds (a benchmark's --time)
// shows seconds.
std::string count(const ProgressEvent& e) {
  if (e.unit == "ms") {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f/%.1f s", static_cast<double>(e.done) / 1e3,
                  static_cast<double>(e.total) / 1e3);
    return buf;
  }
  return std::to_string(e.done) + "/" + std::to_string(e.total) +
         (e.unit.empty() ? "" : " " + e.unit);
}

std::string total(const ProgressEvent& e) {
  if (e.unit == "ms") return duration(static_cast<double>(e.total) / 1e3);
  return std::to_string(e.total) + (e.unit.empty() ? "" : " " + e.unit);
}

}  // namespace

ProgressDisplay::ProgressDisplay(std::FILE* out, bool terminal) : out_(out), terminal_(terminal) {}

ProgressDisplay::~ProgressDisplay() { close_line(); }

void ProgressDisplay::set_line_open(bool open) {
  line_open_ = open;
  if (out_ != stderr) return;
  ProgressDisplay* self = this;
  if (open) {
    open_on_stderr.store(this);
  } else {
    open_on_stderr.compare_exchange_strong(self, nullptr);
  }
}

void ProgressDisplay::close_line() {
  if (!line_open_) return;
  std::fputc('\n', out_);
  std::fflush(out_);
  set_line_open(false);
}

void ProgressDisplay::clear_line() {
  if (!line_open_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  set_line_open(false);
}

void clear_progress_line_on_stderr() {
  if (ProgressDisplay* d = open_on_stderr.load()) d->clear_line();
}

void ProgressDisplay::show(const ProgressEvent& e) {
  using Kind = ProgressEvent::Kind;
  if (terminal_) {
    draw(e, e.kind == Kind::kEnd);
    return;
  }
  std::string line;
  switch (e.kind) {
    case Kind::kBegin:
      logged_tenth_ = 0;
      logged_at_s_ = 0;
      if (e.total <= 0) return;  // said at its end, if it takes long
      line = prefix(e) + ": " + total(e);
      break;
    case Kind::kAdvance: {
      if (e.total <= 0) return;
      const int tenth = static_cast<int>(e.done * 10 / e.total);
      if (tenth <= logged_tenth_ || e.elapsed_s - logged_at_s_ < kLogInterval) return;
      logged_tenth_ = tenth;
      logged_at_s_ = e.elapsed_s;
      line = prefix(e) + ": " + count(e) + ", " + duration(e.elapsed_s) + " elapsed" +
             (e.eta_s >= 0 ? ", " + clock(e.eta_s) + " left" : "");
      break;
    }
    case Kind::kEnd:
      if (e.total > 0) {
        line = prefix(e) + " done: " + count(e) + " in " + duration(e.elapsed_s);
      } else if (e.elapsed_s >= kKeepAfter) {
        line = prefix(e) + ": " + duration(e.elapsed_s);
      } else {
        return;
      }
      break;
  }
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void ProgressDisplay::draw(const ProgressEvent& e, bool final) {
  // "\033[K" clears what a longer earlier line left to the right.
  if (final && e.elapsed_s < kKeepAfter) {
    std::fputs("\r\033[K", out_);  // a quick step leaves nothing
    std::fflush(out_);
    set_line_open(false);
    return;
  }
  std::string line = "\r" + prefix(e);
  if (e.total > 0) {
    const int64_t permille = std::clamp<int64_t>(e.done * 1000 / e.total, 0, 1000);
    const auto filled = static_cast<size_t>(permille * kBarWidth / 1000);
    line +=
        " [" + std::string(filled, '#') + std::string(kBarWidth - filled, '.') + "] " + count(e);
  }
  if (final) {
    line += "  " + duration(e.elapsed_s);
  } else if (e.eta_s >= 0) {
    line += "  " + clock(e.eta_s) + " left";
  }
  line += "\033[K";
  if (final) line += "\n";
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
  set_line_open(!final);
}

void Progress::show_on_stderr() { show_on(stderr, ::isatty(::fileno(stderr)) == 1); }

void Progress::show_on(std::FILE* out, bool terminal) {
  display_ = std::make_unique<ProgressDisplay>(out, terminal);
}

void Progress::start(std::string task, std::vector<std::string> steps) {
  if (open_) end();
  current_ = ProgressEvent{};
  current_.task = std::move(task);
  steps_ = std::move(steps);
}

void Progress::begin(const std::string& step, int64_t total, std::string unit, std::string detail) {
  if (open_) end();
  int index = 0;
  if (!steps_.empty()) {
    const auto it = std::find(steps_.begin(), steps_.end(), step);
    if (it == steps_.end()) throw std::logic_error("step '" + step + "' is not one of the task's");
    index = static_cast<int>(it - steps_.begin()) + 1;
  }
  current_.step = step;
  current_.detail = std::move(detail);
  current_.index = index;
  current_.steps = static_cast<int>(steps_.size());
  current_.done = 0;
  current_.total = std::max<int64_t>(total, 0);
  current_.unit = std::move(unit);
  current_.elapsed_s = 0;
  current_.eta_s = -1;
  open_ = true;
  sent_permille_ = 0;
  began_ = Clock::now();
  emit(ProgressEvent::Kind::kBegin);
}

void Progress::advance(int64_t done) {
  if (!open_ || current_.total <= 0 || (!display_ && !callback_)) return;
  current_.done = std::clamp<int64_t>(done, 0, current_.total);
  const int64_t permille = current_.done * 1000 / current_.total;
  if (permille == sent_permille_) return;
  sent_permille_ = permille;
  emit(ProgressEvent::Kind::kAdvance);
}

void Progress::end() {
  if (!open_) return;
  open_ = false;
  current_.done = current_.total;
  emit(ProgressEvent::Kind::kEnd);
}

void Progress::emit(ProgressEvent::Kind kind) {
  if (!display_ && !callback_) return;
  current_.kind = kind;
  current_.elapsed_s = std::chrono::duration<double>(Clock::now() - began_).count();
  current_.eta_s = -1;
  if (kind == ProgressEvent::Kind::kEnd) {
    current_.eta_s = 0;
  } else if (current_.total > 0 && current_.done > 0) {
    current_.eta_s = current_.elapsed_s * static_cast<double>(current_.total - current_.done) /
                     static_cast<double>(current_.done);
  }
  if (display_) display_->show(current_);
  if (callback_) callback_(current_);
}

}  // namespace eulernpu::host
