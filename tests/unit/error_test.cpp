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
