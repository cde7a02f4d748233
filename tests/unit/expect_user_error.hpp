// Checks that a call fails with the user-facing error a test expects.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/error.hpp"

namespace eulernpu::test {

// Runs `f`, which must throw a UserError titled `title` with a where: and a
// fix: line, and returns it (an empty one if it threw nothing).
inline host::UserError expect_user_error(const std::function<void()>& f, const std::string& title) {
  try {
    f();
  } catch (const host::UserError& e) {
    EXPECT_EQ(e.title(), title) << "where: " << e.where();
    EXPECT_FALSE(e.where().empty());
    EXPECT_FALSE(e.fix().empty());
    return e;
  }
  ADD_FAILURE() << "expected UserError \"" << title << "\"";
  return host::UserError("", "", "");
}

}  // namespace eulernpu::test
