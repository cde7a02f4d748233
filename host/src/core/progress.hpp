// Progress of long work (a compile's steps, calibration passes, a
// benchmark's runs), as one stream of events. Two consumers read it: the
// display on stderr (a redrawn bar with the time left on a terminal, plain
// lines elsewhere, nothing with --quiet) and, from Python, a callback.
//
// On a terminal each step is one line, redrawn while it runs; a step that
// took a second or more is left with its time when it ends, a quicker one
// is erased (a small model's compile leaves only its results):
//     Compile [3/6] calibrate pass 1/2 [########............] 26/64 samples  0:04 left
//     Compile [3/6] calibrate pass 1/2 [####################] 64/64 samples  3.12 s
// Anywhere else (a CI log, a file): a counted step logs a line when it
// begins and one when it ends, and between them a line at each tenth of
// the work only once five seconds have passed since the last line; a step
// that is not counted logs one line at its end if it took a second or more.
// Short work logs little, long work still shows it is alive.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace eulernpu::host {

struct ProgressEvent {
  enum class Kind { kBegin, kAdvance, kEnd };
  Kind kind = Kind::kBegin;
  std::string task;    // "compile", "quantize", "benchmark"
  std::string step;    // one of the task's steps: "load", "calibrate", "lower", ...
  std::string detail;  // within the step: "pass 1/2"; may be empty
  int index = 0;       // the step's place among the task's steps, from 1
  int steps = 0;
  int64_t done = 0;
  int64_t total = 0;     // 0: the step is not counted
  std::string unit;      // what done and total count: "samples", "runs", "ms"
  double elapsed_s = 0;  // since the step (or pass) began
  double eta_s = -1;     // time left in it, estimated from the rate so far; -1: unknown
};

using ProgressCallback = std::function<void(const ProgressEvent&)>;

// Draws events on a stream. Not thread-safe: one thread reports.
class ProgressDisplay {
 public:
  // `out` must outlive the display; `terminal` picks the redrawn line.
  ProgressDisplay(std::FILE* out, bool terminal);
  // Ends an open line, so that an error printed after an exception starts
  // on a line of its own.
  ~ProgressDisplay();
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  void show(const ProgressEvent& e);
  // Ends an open terminal line. Idempotent.
  void close_line();
  // Erases an open terminal line, leaving the cursor at its start.
  void clear_line();

  static constexpr int kBarWidth = 20;
  // Off a terminal, the least time between two lines of one step's progress.
  static constexpr double kLogInterval = 5.0;
  // A step this long (seconds) stays on the terminal, or is logged if not counted.
  static constexpr double kKeepAfter = 1.0;

 private:
  void draw(const ProgressEvent& e, bool final);
  void set_line_open(bool open);

  std::FILE* out_;
  bool terminal_;
  bool line_open_ = false;
  int logged_tenth_ = 0;    // off a terminal: the last tenth a line was logged at
  double logged_at_s_ = 0;  // and when, in the step's time
};

// Clears the progress line open on stderr's terminal, if any, so that what
// is printed next (a log message) starts at the left edge; the line is
// drawn again at the next event. The log sink calls it.
void clear_progress_line_on_stderr();

// A task's progress: its steps, their timing and estimate of the time
// left, sent to a display and a callback (either may be absent). Advances
// are passed on only when they move the count by a thousandth of the
// total: a benchmark of microsecond runs must not be slowed by reporting.
class Progress {
 public:
  Progress() = default;
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // The stderr display: the bar if stderr is a terminal, else lines.
  void show_on_stderr();
  void show_on(std::FILE* out, bool terminal);
  void set_callback(ProgressCallback callback) { callback_ = std::move(callback); }

  // A task with these steps, in order, begins; steps outside it are an
  // error in the caller.
  void start(std::string task, std::vector<std::string> steps);
  // `step` (or a pass of it, `detail`) begins; `total` counts its work in
  // `unit`s, 0 if it is not counted. Ends the step before it, if open.
  void begin(const std::string& step, int64_t total = 0, std::string unit = {},
             std::string detail = {});
  // `done` of the current step's total is through (a count, not an increment).
  void advance(int64_t done);
  // The current step is complete; nothing if none is open.
  void end();

  // Starts and ends a step around one piece of work. If the work throws,
  // the step stays open: the error ends the task.
  template <typename Fn>
  auto step(const std::string& name, Fn&& fn) {
    begin(name);
    if constexpr (std::is_void_v<decltype(fn())>) {
      fn();
      end();
    } else {
      auto result = fn();
      end();
      return result;
    }
  }

 private:
  using Clock = std::chrono::steady_clock;
  void emit(ProgressEvent::Kind kind);

  std::unique_ptr<ProgressDisplay> display_;
  ProgressCallback callback_;
  std::vector<std::string> steps_;
  ProgressEvent current_;
  bool open_ = false;
  int64_t sent_permille_ = -1;
  Clock::time_point began_;
};

}  // namespace eulernpu::host
