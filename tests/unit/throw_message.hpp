// The message of the exception a call throws, for tests that check what an
// error says.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <string>

namespace eulernpu::test {

// The what() of the E that `f` throws; fails the test (and returns "") if it
// throws nothing or something else.
template <typename E, typename F>
std::string message_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "threw nothing";
  return "";
}

}  // namespace eulernpu::test
