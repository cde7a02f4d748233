// Progress of long work: the redrawn bar with the time left on a terminal,
// sparse plain lines in a log, and the events a callback receives.
#include "core/progress.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

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

using Kind = ProgressEvent::Kind;

ProgressEvent event(Kind kind, int64_t done, int64_t total, double elapsed, double eta,
                    const std::string& unit = "samples") {
  ProgressEvent e;
  e.kind = kind;
  e.task = "compile";
  e.step = "calibrate";
  e.detail = "pass 1/2";
  e.index = 3;
  e.steps = 6;
  e.done = done;
  e.total = total;
  e.unit = unit;
  e.elapsed_s = elapsed;
  e.eta_s = eta;
  return e;
}

TEST(ProgressDisplayTest, TerminalLineIsRedrawnWithTimeLeftThenKeptWithItsTime) {
  Capture cap;
  {
    ProgressDisplay d(cap.file(), /*terminal=*/true);
    d.show(event(Kind::kBegin, 0, 64, 0, -1));
    d.show(event(Kind::kAdvance, 16, 64, 1.0, 3.0));
    d.show(event(Kind::kEnd, 64, 64, 4.25, 0));
  }
  const std::string e = "\033[K";
  EXPECT_EQ(cap.text(),
            "\rCompile [3/6] calibrate pass 1/2 [....................] 0/64 samples" + e +
                "\rCompile [3/6] calibrate pass 1/2 [#####...............] 16/64 samples  0:03 "
                "left" +
                e +
                "\rCompile [3/6] calibrate pass 1/2 [####################] 64/64 samples  4.25 s" +
                e + "\n");
}

ProgressEvent uncounted(Kind kind, double elapsed) {
  ProgressEvent e;
  e.kind = kind;
  e.task = "compile";
  e.step = "lower";
  e.index = 5;
  e.steps = 6;
  e.elapsed_s = elapsed;
  return e;
}

TEST(ProgressDisplayTest, TerminalKeepsASlowStepWithItsTimeAndErasesAQuickOne) {
  Capture cap;
  {
    ProgressDisplay d(cap.file(), true);
    d.show(uncounted(Kind::kBegin, 0));
    d.show(uncounted(Kind::kEnd, 75));
    d.show(uncounted(Kind::kBegin, 0));
    d.show(uncounted(Kind::kEnd, 0.4));
    d.show(event(Kind::kBegin, 0, 8, 0, -1));
    d.show(event(Kind::kEnd, 8, 8, 0.999, 0));
  }
  EXPECT_EQ(cap.text(),
            "\rCompile [5/6] lower\033[K\rCompile [5/6] lower  1:15\033[K\n"
            "\rCompile [5/6] lower\033[K\r\033[K"
            "\rCompile [3/6] calibrate pass 1/2 [....................] 0/8 samples\033[K"
            "\r\033[K");
}

TEST(ProgressDisplayTest, LogHasBeginAndEndLinesAndOnlySlowProgressBetween) {
  Capture cap;
  {
    ProgressDisplay d(cap.file(), /*terminal=*/false);
    d.show(event(Kind::kBegin, 0, 100, 0, -1));
    d.show(event(Kind::kAdvance, 50, 100, 1.0, 1.0));   // fast: no line
    d.show(event(Kind::kAdvance, 60, 100, 6.0, 4.0));   // 5 s on: a line
    d.show(event(Kind::kAdvance, 65, 100, 12.0, 6.5));  // same tenth: none
    d.show(event(Kind::kAdvance, 70, 100, 12.5, 5.4));  // next tenth, 6.5 s on
    d.show(event(Kind::kAdvance, 80, 100, 13.0, 3.3));  // under 5 s since: none
    d.show(event(Kind::kEnd, 100, 100, 16.0, 0));
  }
  EXPECT_EQ(cap.text(),
            "Compile [3/6] calibrate pass 1/2: 100 samples\n"
            "Compile [3/6] calibrate pass 1/2: 60/100 samples, 6.00 s elapsed, 0:04 left\n"
            "Compile [3/6] calibrate pass 1/2: 70/100 samples, 12.5 s elapsed, 0:05 left\n"
            "Compile [3/6] calibrate pass 1/2 done: 100/100 samples in 16.0 s\n");
}

TEST(ProgressDisplayTest, LogHasAStepWithoutCountOnlyIfItTookASecond) {
  Capture cap;
  {
    ProgressDisplay d(cap.file(), false);
    d.show(uncounted(Kind::kBegin, 0));
    d.show(uncounted(Kind::kEnd, 0.5));
    d.show(uncounted(Kind::kBegin, 0));
    d.show(uncounted(Kind::kEnd, 2.5));
  }
  EXPECT_EQ(cap.text(), "Compile [5/6] lower: 2.50 s\n");
}

TEST(ProgressDisplayTest, MillisecondsShowAsSeconds) {
  Capture cap;
  {
    ProgressDisplay d(cap.file(), false);
    d.show(event(Kind::kBegin, 0, 5000, 0, -1, "ms"));
    d.show(event(Kind::kEnd, 5000, 5000, 5.0123, 0, "ms"));
  }
  EXPECT_EQ(cap.text(),
            "Compile [3/6] calibrate pass 1/2: 5.00 s\n"
            "Compile [3/6] calibrate pass 1/2 done: 5.0/5.0 s in 5.01 s\n");
}

TEST(ProgressDisplayTest, DestructorEndsAnOpenLineOnly) {
  Capture term, log;
  {
    ProgressDisplay t(term.file(), true);
    t.show(event(Kind::kBegin, 0, 8, 0, -1));
    ProgressDisplay l(log.file(), false);
    l.show(event(Kind::kBegin, 0, 8, 0, -1));
  }
  EXPECT_EQ(term.text().back(), '\n');
  EXPECT_EQ(log.text(), "Compile [3/6] calibrate pass 1/2: 8 samples\n");
}

// The events a callback receives.
struct Recorded {
  std::vector<ProgressEvent> events;
  ProgressCallback callback() {
    return [this](const ProgressEvent& e) { events.push_back(e); };
  }
};

TEST(ProgressTest, StepsAreNumberedByTheTasksListAndEachBeginEndsTheLast) {
  Recorded r;
  Progress p;
  p.set_callback(r.callback());
  p.start("compile", {"load", "calibrate", "lower"});
  p.begin("load");
  p.begin("calibrate", 4, "samples", "pass 1/2");
  p.advance(2);
  p.begin("calibrate", 4, "samples", "pass 2/2");
  p.end();
  p.step("lower", [] {});
  p.end();  // nothing open: nothing sent
  ASSERT_EQ(r.events.size(), 9u);
  const std::vector<std::pair<Kind, std::string>> want = {
      {Kind::kBegin, "load"},        {Kind::kEnd, "load"},      {Kind::kBegin, "calibrate"},
      {Kind::kAdvance, "calibrate"}, {Kind::kEnd, "calibrate"}, {Kind::kBegin, "calibrate"},
      {Kind::kEnd, "calibrate"},     {Kind::kBegin, "lower"},   {Kind::kEnd, "lower"}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r.events[i].kind, want[i].first) << i;
    EXPECT_EQ(r.events[i].step, want[i].second) << i;
    EXPECT_EQ(r.events[i].task, "compile");
    EXPECT_EQ(r.events[i].steps, 3);
  }
  EXPECT_EQ(r.events[0].index, 1);
  EXPECT_EQ(r.events[2].index, 2);
  EXPECT_EQ(r.events[2].detail, "pass 1/2");
  EXPECT_EQ(r.events[5].detail, "pass 2/2");
  EXPECT_EQ(r.events[7].index, 3);
  EXPECT_EQ(r.events[3].done, 2);
  EXPECT_EQ(r.events[3].total, 4);
  EXPECT_GE(r.events[3].eta_s, 0.0);  // a rate is known once work is done
  EXPECT_EQ(r.events[2].eta_s, -1.0);
  EXPECT_EQ(r.events[4].done, 4);  // an end is the whole count
  EXPECT_EQ(r.events[4].eta_s, 0.0);
}

TEST(ProgressTest, AStepOutsideTheTaskIsTheCallersError) {
  Progress p;
  p.start("benchmark", {"load"});
  EXPECT_THROW(p.begin("lower"), std::logic_error);
}

TEST(ProgressTest, AdvancesArePassedOnAtMostOnceAThousandth) {
  Recorded r;
  Progress p;
  p.set_callback(r.callback());
  p.begin("measure", 100000, "runs");
  for (int64_t i = 1; i <= 100000; ++i) p.advance(i);
  p.end();
  // begin, one advance per thousandth, end
  EXPECT_EQ(r.events.size(), 1002u);
  EXPECT_EQ(r.events[1].done, 100);
  EXPECT_EQ(r.events[1000].done, 100000);
}

TEST(ProgressTest, CountsOutOfRangeAreClamped) {
  Recorded r;
  Progress p;
  p.set_callback(r.callback());
  p.begin("calibrate", 8, "samples");
  p.advance(20);
  p.advance(-3);
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[1].done, 8);
  EXPECT_EQ(r.events[2].done, 0);
}

TEST(ProgressTest, ACallbackThatThrowsStopsTheWork) {
  Progress p;
  p.set_callback([](const ProgressEvent& e) {
    if (e.kind == Kind::kAdvance) throw std::runtime_error("stop");
  });
  p.begin("calibrate", 8, "samples");
  EXPECT_THROW(p.advance(4), std::runtime_error);
}

}  // namespace
}  // namespace eulernpu::host
