#include "error.hpp"

#include <cctype>

namespace eulernpu::host {

UserError::UserError(std::string title, std::string where, std::string fix,
                     std::string see)
    : std::runtime_error(title),
      title_(std::move(title)),
      where_(std::move(where)),
      fix_(std::move(fix)),
      see_(see.empty() ? "docs/errors.md#" + error_anchor(title_)
                       : std::move(see)) {}

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

std::string format_error(const UserError& error) {
  return "error: " + error.title() + "\n  where: " + error.where() +
         "\n  fix: " + error.fix() + "\n  See: " + error.see();
}

}  // namespace eulernpu::host
