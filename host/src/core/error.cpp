#include "core/error.hpp"

#include "eulernpu/sdk/error_format.hpp"

namespace eulernpu::host {

UserError::UserError(std::string title, std::string where, std::string fix, std::string see)
    : std::runtime_error(title),
      title_(std::move(title)),
      where_(std::move(where)),
      fix_(std::move(fix)),
      see_(see.empty() ? "docs/errors.md#" + error_anchor(title_) : std::move(see)) {}

std::string error_anchor(const std::string& title) { return sdk::error_anchor(title); }

std::string format_error(const UserError& error) {
  return sdk::format_error(error.title(), error.where(), error.fix(), error.see());
}

}  // namespace eulernpu::host
