#include "formats/sha256.hpp"

#include "core/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace eulernpu::host {
namespace {

struct Vector {
  std::string input;
  const char* digest;
};

// FIPS 180-4 examples plus the padding edge cases around one block.
TEST(Sha256Test, MatchesPublishedVectors) {
  const Vector vectors[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {std::string(1000000, 'a'),
       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(sha256_hex(vectors[i].input.data(), vectors[i].input.size()), vectors[i].digest)
        << "vector " << i;
  }
}

TEST(Sha256Test, BlockBoundariesAgreeWithIncrementalLengths) {
  // 55, 56 and 64 bytes are where padding spills into a second block; all
  // must differ from each other and be stable.
  std::string seen;
  for (size_t n : {55u, 56u, 63u, 64u, 65u}) {
    const std::string s(n, 'q');
    const std::string d = sha256_hex(s.data(), s.size());
    EXPECT_EQ(d.size(), 64u);
    EXPECT_NE(d, seen);
    EXPECT_EQ(d, sha256_hex(s.data(), s.size()));
    seen = d;
  }
}

TEST(Sha256Test, MissingFileIsAUserError) {
  EXPECT_THROW(sha256_file("/nonexistent/file"), UserError);
}

}  // namespace
}  // namespace eulernpu::host
