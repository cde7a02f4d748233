#include "fixed_json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "artifact_format.hpp"

namespace acme_npu {
namespace {

// Strict UTF-8 (no overlong forms, surrogates or code points past U+10FFFF):
// names read back end up in error messages, which must stay printable.
bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t len = c < 0x80           ? 1
                       : (c >> 5) == 0x6  ? 2
                       : (c >> 4) == 0xe  ? 3
                       : (c >> 3) == 0x1e ? 4
                                          : 0;
    if (len == 0 || len > s.size() - i) return false;
    uint32_t cp = len == 1 ? c : c & (0x7fu >> len);
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3fu);
    }
    static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return false;
    i += len;
  }
  return true;
}

}  // namespace

std::string json_quote(std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;  // UTF-8 passes through; JSON allows it unescaped
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string json_int_list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string_view Lines::next() {
  if (pos_ >= text_.size()) fail("ends early (truncated?)");
  const size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) fail("ends without a newline (truncated?)");
  const std::string_view line = text_.substr(pos_, end - pos_);
  pos_ = end + 1;
  ++line_no_;
  return line;
}

void Lines::expect(std::string_view line) {
  if (next() != line) fail("expected '" + std::string(line) + "'");
}

void Lines::finish() const {
  if (pos_ != text_.size()) fail("has text after the closing brace");
}

void Lines::fail(const std::string& what) const {
  corrupt(std::string(file_) + (line_no_ ? " line " + std::to_string(line_no_) : "") + ": " + what);
}

void Cursor::lit(std::string_view s) {
  if (!take(s)) lines_.fail("expected '" + std::string(s) + "'");
}

bool Cursor::take(std::string_view s) {
  if (rest_.substr(0, s.size()) != s) return false;
  rest_.remove_prefix(s.size());
  return true;
}

void Cursor::end() const {
  if (!rest_.empty()) lines_.fail("unexpected text at the end of the line");
}

std::string Cursor::str() {
  lit("\"");
  std::string out;
  while (true) {
    if (rest_.empty()) lines_.fail("unterminated string");
    const char c = rest_.front();
    rest_.remove_prefix(1);
    if (c == '"') break;
    if (static_cast<unsigned char>(c) < 0x20) lines_.fail("control character in a string");
    if (c != '\\') {
      out += c;
      continue;
    }
    if (rest_.empty()) lines_.fail("unterminated escape");
    const char e = rest_.front();
    rest_.remove_prefix(1);
    if (e == '"' || e == '\\' || e == '/') {
      out += e;
      continue;
    }
    // json_quote() writes no other escape than \u00XX for control
    // characters; anything else was not written by us.
    unsigned code = 0;
    const size_t digits = std::min<size_t>(4, rest_.size());
    const auto r = std::from_chars(rest_.data(), rest_.data() + digits, code, 16);
    if (e != 'u' || r.ptr - rest_.data() != 4 || code >= 0x20) lines_.fail("unsupported escape");
    rest_.remove_prefix(4);
    out += static_cast<char>(code);
  }
  if (!valid_utf8(out)) lines_.fail("a string is not valid UTF-8");
  return out;
}

int64_t Cursor::integer() {
  int64_t v = 0;
  const auto r = std::from_chars(rest_.data(), rest_.data() + rest_.size(), v);
  if (r.ec != std::errc() || r.ptr == rest_.data()) lines_.fail("expected an integer");
  rest_.remove_prefix(static_cast<size_t>(r.ptr - rest_.data()));
  return v;
}

double Cursor::number() {
  double v = 0;
  const auto r = std::from_chars(rest_.data(), rest_.data() + rest_.size(), v);
  if (r.ec != std::errc() || r.ptr == rest_.data() || !std::isfinite(v)) {
    lines_.fail("expected a finite number");
  }
  rest_.remove_prefix(static_cast<size_t>(r.ptr - rest_.data()));
  return v;
}

std::vector<int64_t> Cursor::int_list() {
  std::vector<int64_t> v;
  lit("[");
  if (take("]")) return v;
  do {
    v.push_back(integer());
  } while (take(", "));
  lit("]");
  return v;
}

std::vector<std::string> Cursor::str_list() {
  std::vector<std::string> v;
  lit("[");
  if (take("]")) return v;
  do {
    v.push_back(str());
  } while (take(", "));
  lit("]");
  return v;
}

}  // namespace acme_npu
