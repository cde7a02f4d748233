// User-facing errors: the three-line format of docs/errors.md.
#pragma once

#include <stdexcept>
#include <string>

namespace eulernpu::host {

// Thrown for anything the user can fix: bad input files, options, models.
// `title` is a stable phrase with an anchor in docs/errors.md; `where` says
// what is wrong where, `fix` what to do about it.
class UserError : public std::runtime_error {
 public:
  UserError(std::string title, std::string where, std::string fix, std::string see = {});

  const std::string& title() const { return title_; }
  const std::string& where() const { return where_; }
  const std::string& fix() const { return fix_; }
  // The "See:" link: docs/errors.md#<anchor of title> unless given.
  const std::string& see() const { return see_; }

 private:
  std::string title_;
  std::string where_;
  std::string fix_;
  std::string see_;
};

// GitHub-style anchor of a heading: lower case, spaces to '-', other
// punctuation dropped ("backend lowering missing for op X" ->
// "backend-lowering-missing-for-op-x").
std::string error_anchor(const std::string& title);

// The four lines printed for an error (no trailing newline).
std::string format_error(const UserError& error);

}  // namespace eulernpu::host
