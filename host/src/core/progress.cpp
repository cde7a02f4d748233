#include "core/progress.hpp"

#include <unistd.h>

#include <algorithm>

namespace eulernpu::host {

ProgressReporter::ProgressReporter(std::FILE* out, bool terminal, std::string label)
    : out_(out), terminal_(terminal), label_(std::move(label)) {}

ProgressReporter ProgressReporter::for_stderr(std::string label) {
  return ProgressReporter(stderr, ::isatty(::fileno(stderr)) == 1, std::move(label));
}

ProgressReporter::~ProgressReporter() { finish(); }

void ProgressReporter::begin_pass(int pass, int passes, int64_t samples, const std::string& what) {
  pass_ = pass;
  passes_ = passes;
  samples_ = std::max<int64_t>(samples, 0);
  done_ = 0;
  drawn_permille_ = -1;
  if (terminal_) {
    draw();
    return;
  }
  std::fprintf(out_, "%s pass %d/%d%s%s%s: %lld samples\n", label_.c_str(), pass, passes,
               what.empty() ? "" : " (", what.c_str(), what.empty() ? "" : ")",
               static_cast<long long>(samples_));
  std::fflush(out_);
}

void ProgressReporter::update(int64_t done) {
  done_ = std::clamp<int64_t>(done, 0, samples_);
  if (terminal_) draw();
}

void ProgressReporter::end_pass() {
  update(samples_);
  if (terminal_) return;
  std::fprintf(out_, "%s pass %d/%d done: %lld/%lld samples\n", label_.c_str(), pass_, passes_,
               static_cast<long long>(done_), static_cast<long long>(samples_));
  std::fflush(out_);
}

void ProgressReporter::finish() {
  if (!line_open_) return;
  std::fputc('\n', out_);
  std::fflush(out_);
  line_open_ = false;
}

void ProgressReporter::draw() {
  // At most ~1000 redraws a pass however many samples: a terminal that
  // redraws per sample of a large set spends more time drawing than the
  // pass does computing.
  const int permille = samples_ == 0 ? 1000 : static_cast<int>(done_ * 1000 / samples_);
  if (permille == drawn_permille_) return;
  drawn_permille_ = permille;
  const int filled = permille * kBarWidth / 1000;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kBarWidth - filled), '.');
  // "\033[K" clears what a longer previous line left to the right.
  std::fprintf(out_, "\r%s [%s] %lld/%lld pass %d/%d\033[K", label_.c_str(), bar.c_str(),
               static_cast<long long>(done_), static_cast<long long>(samples_), pass_, passes_);
  std::fflush(out_);
  line_open_ = true;
}

}  // namespace eulernpu::host
