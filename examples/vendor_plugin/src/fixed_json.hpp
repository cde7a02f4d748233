// Just enough JSON for acme_npu's artifact files: a writer for values, and a
// strict reader for JSON laid out one record per line in a layout fixed by
// the caller. Not a general JSON parser, on purpose: each read names what it
// expects next, checks its bounds, and fails with "file line N" rather than
// guessing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace acme_npu {

// ---- writing -----------------------------------------------------------------

std::string json_quote(std::string_view s);
// Shortest text that reads back as the same double.
std::string json_number(double v);
std::string json_int_list(const std::vector<int64_t>& v);

// ---- reading -----------------------------------------------------------------

// The lines of one file. Failures throw "artifact is corrupt" naming the
// file and the current line.
class Lines {
 public:
  Lines(std::string_view text, const char* file) : text_(text), file_(file) {}

  std::string_view next();
  void expect(std::string_view line);
  // Fails unless every line has been read.
  void finish() const;
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string_view text_;
  const char* file_;
  size_t pos_ = 0;
  size_t line_no_ = 0;
};

// A cursor over one line; failures go through the line's Lines::fail().
class Cursor {
 public:
  Cursor(std::string_view line, const Lines& lines) : rest_(line), lines_(lines) {}

  void lit(std::string_view s);   // the literal text `s`, or fail
  bool take(std::string_view s);  // the literal text `s`, if it is next
  void end() const;               // nothing left on the line, or fail
  std::string str();              // a string, valid UTF-8
  int64_t integer();
  double number();  // finite only
  std::vector<int64_t> int_list();
  std::vector<std::string> str_list();

 private:
  std::string_view rest_;
  const Lines& lines_;
};

// Reads `  "key": [`, then records one per line (4-space indent, comma
// separated) up to the line `close`; `record` parses a record after its
// indent.
template <typename F>
void read_records(Lines& lines, std::string_view key, std::string_view close, F record) {
  lines.expect("  \"" + std::string(key) + "\": [");
  std::string_view line = lines.next();
  if (line == close) return;
  while (true) {
    Cursor c(line, lines);
    c.lit("    ");
    record(c);
    const bool more = c.take(",");
    c.end();
    line = lines.next();
    if (!more) break;
  }
  if (line != close) lines.fail("expected '" + std::string(close) + "'");
}

}  // namespace acme_npu
