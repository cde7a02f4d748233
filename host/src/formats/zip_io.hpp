// libzip plumbing shared by the .npz and .mxq formats: owning handles,
// error text, and deterministic in-memory archive encoding.
#pragma once

#include <zip.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace eulernpu::host::zip_io {

struct ZipDiscard {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct SourceFree {
  void operator()(zip_source_t* s) const { zip_source_free(s); }
};
struct FileClose {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};
using ZipPtr = std::unique_ptr<zip_t, ZipDiscard>;
using SourcePtr = std::unique_ptr<zip_source_t, SourceFree>;
using FilePtr = std::unique_ptr<zip_file_t, FileClose>;

// Owns a zip_error_t, which must be finalized.
class ZipError {
 public:
  ZipError() { zip_error_init(&error_); }
  ~ZipError() { zip_error_fini(&error_); }
  ZipError(const ZipError&) = delete;
  ZipError& operator=(const ZipError&) = delete;

  zip_error_t* get() { return &error_; }
  int code() { return zip_error_code_zip(&error_); }
  std::string message() { return zip_error_strerror(&error_); }

 private:
  zip_error_t error_;
};

inline std::string libzip_says(const std::string& message) { return " (libzip: " + message + ")"; }

// Every member gets this date and time (1980-01-01 00:00, the earliest a
// zip can hold, as numpy writes): archives depend on their contents only.
inline constexpr zip_uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;
inline constexpr zip_uint16_t kDosTimeMidnight = 0;

// Builds an archive in memory: `add_members` adds the members (in their
// final order) to the open archive, then it is closed and its bytes
// returned. `what` names the archive in exceptions ("an npz").
std::vector<uint8_t> encode_archive(const std::string& what,
                                    const std::function<void(zip_t*)>& add_members);

// Adds `src` (freed on failure) as member `name` with the fixed date and
// the given compression (ZIP_CM_STORE or ZIP_CM_DEFLATE, level 0 =
// libzip's default); returns its index.
zip_uint64_t add_fixed_member(zip_t* za, const std::string& name, zip_source_t* src,
                              zip_int32_t method, zip_uint32_t level, const std::string& what);

}  // namespace eulernpu::host::zip_io
