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

// Messages from libraries (ONNX's checker) may span lines; the format is
// one line per field, so scripts can parse it.
std::string one_line(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      if (!out.empty() && out.back() != ' ') out += "; ";
    } else if (c != '\r') {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  return out;
}

}  // namespace

std::string format_error(const UserError& error) {
  return "error: " + one_line(error.title()) + "\n  where: " + one_line(error.where()) +
         "\n  fix: " + one_line(error.fix()) + "\n  See: " + error.see();
}

}  // namespace eulernpu::host
