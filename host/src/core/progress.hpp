// Progress of the calibration passes. On a terminal: one bar line redrawn
// in place,
//     Calibrate [##########..........] 32/64 pass 1/2
// ended by a newline when the work is done. Anywhere else (a CI log, a
// file): one line when a pass starts and one when it ends, never one per
// sample, so logs stay short.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace eulernpu::host {

class ProgressReporter {
 public:
  // Writes to `out`, which must outlive the reporter. `terminal` picks the
  // redrawn bar; for_stderr() decides it with isatty. Not thread-safe: one
  // thread reports.
  ProgressReporter(std::FILE* out, bool terminal, std::string label = "Calibrate");
  static ProgressReporter for_stderr(std::string label = "Calibrate");

  // Ends an open bar line, so that an error printed after an exception
  // starts on a line of its own.
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // Pass `pass` (1-based) of `passes` over `samples` samples begins; `what`
  // names it in log lines ("range", "histogram"; may be empty).
  void begin_pass(int pass, int passes, int64_t samples, const std::string& what = {});
  // `done` samples of the current pass are through (counts, not increments).
  void update(int64_t done);
  // The current pass is complete.
  void end_pass();
  // All passes are complete: ends the bar line. Idempotent.
  void finish();

  static constexpr int kBarWidth = 20;

 private:
  void draw();

  std::FILE* out_;
  bool terminal_;
  std::string label_;
  int pass_ = 0;
  int passes_ = 0;
  int64_t samples_ = 0;
  int64_t done_ = 0;
  int drawn_permille_ = -1;  // the bar is redrawn when this changes
  bool line_open_ = false;   // terminal: the bar line awaits its newline
};

}  // namespace eulernpu::host
