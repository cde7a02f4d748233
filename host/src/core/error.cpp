#include "core/error.hpp"

#include <cctype>

namespace eulernpu::host {

UserError::UserError(std::string title, std::string where, std::string fix, std::string see)
    : std::runtime_error(title),
      title_(std::move(title)),
      where_(std::move(where)),
      fix_(std::move(fix)),
      see_(see.empty() ? "docs/errors.md#" + error_anchor(title_) : std::move(see)) {}

std::string error_anchor(const std::string& title) {
  std::string anchor;
  for (unsigned char c : title) {
    if (std::isalnum(c) || c == '-' || c == '_') {
      anchor += static_cast<char>(std::tolower(c));
    } else if (c == ' ') {
      anchor += '-';
    }
  }
  return anchor;
}

namespace {

// Longest field printed: a name read from a hostile file may be huge.
constexpr size_t kMaxFieldChars = 1000;

// Messages from libraries (ONNX's checker) may span lines; the format is
// one line per field, so scripts can parse it. Other control bytes (a NUL
// in a file name read from a list would end the C string early and drop
// the fix and See: lines) print as \xNN.
std::string one_line(const std::string& s) {
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      if (!out.empty() && out.back() != ' ') out += "; ";
    } else if (c == '\r') {
      continue;
    } else if (c < 0x20 || c == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  if (out.size() > kMaxFieldChars) {
    const size_t cut = out.size() - kMaxFieldChars;
    out.resize(kMaxFieldChars);
    // Not inside a UTF-8 sequence.
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xc0) == 0x80) out.pop_back();
    if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xc0) out.pop_back();
    out += " ... (" + std::to_string(cut) + " more characters)";
  }
  return out;
}

}  // namespace

std::string format_error(const UserError& error) {
  return "error: " + one_line(error.title()) + "\n  where: " + one_line(error.where()) +
         "\n  fix: " + one_line(error.fix()) + "\n  See: " + error.see();
}

}  // namespace eulernpu::host
