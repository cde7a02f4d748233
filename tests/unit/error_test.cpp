#include "core/error.hpp"

#include <gtest/gtest.h>

namespace eulernpu::host {
namespace {

TEST(ErrorTest, AnchorFollowsHeadingRules) {
  EXPECT_EQ(error_anchor("weights tensor shape mismatch"), "weights-tensor-shape-mismatch");
  EXPECT_EQ(error_anchor("backend lowering missing for op X"), "backend-lowering-missing-for-op-x");
  EXPECT_EQ(error_anchor("npz file is corrupt (bad zip)"), "npz-file-is-corrupt-bad-zip");
}

TEST(ErrorTest, FormatHasThreeLinesAndSee) {
  UserError e("golden tensor key not found", "'y' is in g.npz, not in r.npz", "rename the output");
  EXPECT_EQ(format_error(e),
            "error: golden tensor key not found\n"
            "  where: 'y' is in g.npz, not in r.npz\n"
            "  fix: rename the output\n"
            "  See: docs/errors.md#golden-tensor-key-not-found");
}

}  // namespace
}  // namespace eulernpu::host

namespace eulernpu::host {
namespace {

TEST(ErrorTest, MultiLineMessagesStayOnOneLine) {
  UserError e("operator shape mismatch", "first\nsecond\n", "a\r\nb");
  EXPECT_EQ(format_error(e),
            "error: operator shape mismatch\n"
            "  where: first; second\n"
            "  fix: a; b\n"
            "  See: docs/errors.md#operator-shape-mismatch");
}

}  // namespace
}  // namespace eulernpu::host

namespace eulernpu::host {
namespace {

TEST(ErrorTest, ControlBytesAreEscapedSoNoLineIsCutOff) {
  // A NUL read from a file name used to end the C string before fix: and See:.
  UserError e("file not found", std::string("'a\0b\x1b[2J' does not exist", 24), "check the path");
  EXPECT_EQ(format_error(e),
            "error: file not found\n"
            "  where: 'a\\x00b\\x1b[2J' does not exist\n"
            "  fix: check the path\n"
            "  See: docs/errors.md#file-not-found");
}

TEST(ErrorTest, AHugeFieldIsCutWithACount) {
  const std::string where = "'" + std::string(5000, 'n') + "'";
  const std::string text = format_error(UserError("file not found", where, "check the path"));
  EXPECT_NE(text.find(" ... (4002 more characters)\n  fix: check the path\n  See: "),
            std::string::npos)
      << text.substr(0, 80);
  EXPECT_LT(text.size(), 1200u);
  // A multi-byte character is never cut in two.
  const std::string wide = std::string(999, 'a') + "\xc3\xa9" + std::string(100, 'b');
  const std::string cut = format_error(UserError("file not found", wide, "x"));
  EXPECT_EQ(cut.find('\xc3'), std::string::npos);
}

}  // namespace
}  // namespace eulernpu::host
