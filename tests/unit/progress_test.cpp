// Calibration progress: the redrawn bar on a terminal, two lines per pass
// in a log.
#include "core/progress.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace eulernpu::host {
namespace {

// Everything written to a temporary FILE*.
class Capture {
 public:
  Capture() : file_(std::tmpfile()) {}
  ~Capture() { std::fclose(file_); }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    std::string out;
    std::rewind(file_);
    for (int c; (c = std::fgetc(file_)) != EOF;) out += static_cast<char>(c);
    return out;
  }

 private:
  std::FILE* file_;
};

TEST(ProgressTest, LogLinesPerPassNotPerSample) {
  Capture cap;
  {
    ProgressReporter p(cap.file(), /*terminal=*/false);
    p.begin_pass(1, 2, 64, "range");
    for (int i = 1; i <= 64; ++i) p.update(i);
    p.end_pass();
    p.begin_pass(2, 2, 64, "");
    p.update(10);
    p.end_pass();
    p.finish();
  }
  EXPECT_EQ(cap.text(),
            "Calibrate pass 1/2 (range): 64 samples\n"
            "Calibrate pass 1/2 done: 64/64 samples\n"
            "Calibrate pass 2/2: 64 samples\n"
            "Calibrate pass 2/2 done: 64/64 samples\n");
}

TEST(ProgressTest, TerminalBarIsRedrawnInPlace) {
  Capture cap;
  {
    ProgressReporter p(cap.file(), /*terminal=*/true);
    p.begin_pass(1, 2, 4, "range");
    p.update(1);
    p.update(1);  // no change: no redraw
    p.update(2);
    p.end_pass();
    p.begin_pass(2, 2, 4);
    p.end_pass();
    p.finish();
    p.finish();  // idempotent
  }
  const std::string e = "\033[K";
  EXPECT_EQ(cap.text(), "\rCalibrate [....................] 0/4 pass 1/2" + e +
                            "\rCalibrate [#####...............] 1/4 pass 1/2" + e +
                            "\rCalibrate [##########..........] 2/4 pass 1/2" + e +
                            "\rCalibrate [####################] 4/4 pass 1/2" + e +
                            "\rCalibrate [....................] 0/4 pass 2/2" + e +
                            "\rCalibrate [####################] 4/4 pass 2/2" + e + "\n");
}

TEST(ProgressTest, TerminalRedrawsAreBoundedForLargeSets) {
  Capture cap;
  {
    ProgressReporter p(cap.file(), /*terminal=*/true, "Cal");
    p.begin_pass(1, 1, 1000000);
    for (int i = 1; i <= 1000000; ++i) p.update(i);
  }
  const std::string text = cap.text();
  size_t draws = 0;
  for (char c : text) draws += c == '\r';
  EXPECT_EQ(draws, 1001u);       // 0.0 % .. 100.0 %
  EXPECT_EQ(text.back(), '\n');  // the destructor ended the line
}

TEST(ProgressTest, DestructorEndsAnOpenBarOnly) {
  Capture term, log;
  {
    ProgressReporter t(term.file(), true);
    t.begin_pass(1, 1, 8);
    t.update(3);  // then an exception unwinds past the reporter
    ProgressReporter l(log.file(), false);
    l.begin_pass(1, 1, 8);
  }
  EXPECT_EQ(term.text().back(), '\n');
  EXPECT_EQ(log.text(), "Calibrate pass 1/1: 8 samples\n");
}

TEST(ProgressTest, EmptyPassAndOutOfRangeCounts) {
  Capture cap;
  {
    ProgressReporter p(cap.file(), true, "C");
    p.begin_pass(1, 1, 0);
    p.update(5);
    p.end_pass();
    p.begin_pass(1, 1, 2);
    p.update(7);  // clamped to the pass size
  }
  EXPECT_EQ(cap.text(),
            "\rC [####################] 0/0 pass 1/1\033[K"
            "\rC [....................] 0/2 pass 1/1\033[K"
            "\rC [####################] 2/2 pass 1/1\033[K\n");
}

}  // namespace
}  // namespace eulernpu::host
