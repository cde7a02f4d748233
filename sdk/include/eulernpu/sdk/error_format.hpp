// The three-line error format of docs/errors.md, written once: the host
// prints every user-facing error through it, and so does the runner of an
// exported bundle (eulernpu_run), which builds with the standard library
// only.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace eulernpu::sdk {

// The docs/errors.md anchor of a title, as GitHub spells heading anchors:
// lower case, spaces as '-', other punctuation dropped.
inline std::string error_anchor(std::string_view title) {
  std::string anchor;
  for (const unsigned char c : title) {
    if (std::isalnum(c) || c == '-' || c == '_') {
      anchor += static_cast<char>(std::tolower(c));
    } else if (c == ' ') {
      anchor += '-';
    }
  }
  return anchor;
}

// One field of an error on one line. Messages from libraries may span
// lines, and a name read from a hostile file may hold any byte: newlines
// become "; ", other control bytes \xNN (a NUL would end the C string and
// drop the fix and See: lines), and a field past 1000 characters is cut
// (not inside a UTF-8 sequence) with a count of what was left out.
inline std::string error_field(std::string_view s) {
  constexpr size_t kMaxFieldChars = 1000;
  std::string out;
  for (const char ch : s) {
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
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xc0) == 0x80) out.pop_back();
    if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xc0) out.pop_back();
    out += " ... (" + std::to_string(cut) + " more characters)";
  }
  return out;
}

// The whole error: "error: T\n  where: W\n  fix: F\n  See: S" (no final
// newline).
inline std::string format_error(std::string_view title, std::string_view where,
                                std::string_view fix, std::string_view see) {
  return "error: " + error_field(title) + "\n  where: " + error_field(where) +
         "\n  fix: " + error_field(fix) + "\n  See: " + std::string(see);
}

}  // namespace eulernpu::sdk
