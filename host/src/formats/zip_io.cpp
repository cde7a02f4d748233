#include "formats/zip_io.hpp"

#include <new>
#include <stdexcept>

namespace eulernpu::host::zip_io {
namespace {

std::vector<uint8_t> read_source(zip_source_t* src, const std::string& what) {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_source_stat(src, &st) != 0 || (st.valid & ZIP_STAT_SIZE) == 0 ||
      zip_source_open(src) != 0) {
    throw std::runtime_error("cannot read " + what + " back" +
                             libzip_says(zip_error_strerror(zip_source_error(src))));
  }
  std::vector<uint8_t> bytes(st.size);
  uint64_t got = 0;
  while (got < bytes.size()) {
    const zip_int64_t n = zip_source_read(src, bytes.data() + got, bytes.size() - got);
    if (n <= 0) break;
    got += static_cast<uint64_t>(n);
  }
  zip_source_close(src);
  if (got != bytes.size()) throw std::runtime_error("short read of " + what);
  return bytes;
}

}  // namespace

std::vector<uint8_t> encode_archive(const std::string& what,
                                    const std::function<void(zip_t*)>& add_members) {
  ZipError error;
  SourcePtr out(zip_source_buffer_create(nullptr, 0, 0, error.get()));
  if (!out) throw std::bad_alloc();
  ZipPtr za(zip_open_from_source(out.get(), ZIP_CREATE | ZIP_TRUNCATE, error.get()));
  if (!za) {
    throw std::runtime_error("cannot start " + what + " in memory" + libzip_says(error.message()));
  }
  zip_source_keep(out.get());  // both `za` and `out` now release it
  add_members(za.get());
  if (zip_close(za.get()) != 0) {
    throw std::runtime_error("cannot encode " + what + libzip_says(zip_strerror(za.get())));
  }
  za.release();  // zip_close freed it
  return read_source(out.get(), what);
}

zip_uint64_t add_fixed_member(zip_t* za, const std::string& name, zip_source_t* src,
                              zip_int32_t method, zip_uint32_t level, const std::string& what) {
  const zip_int64_t index = zip_file_add(za, name.c_str(), src, ZIP_FL_ENC_UTF_8);
  if (index < 0) {
    zip_source_free(src);
    throw std::invalid_argument("cannot add '" + name + "' to " + what +
                                libzip_says(zip_strerror(za)));
  }
  const auto i = static_cast<zip_uint64_t>(index);
  if (zip_file_set_dostime(za, i, kDosTimeMidnight, kDosDate1980, 0) != 0 ||
      zip_set_file_compression(za, i, method, level) != 0) {
    throw std::runtime_error("cannot set up '" + name + "' in " + what +
                             libzip_says(zip_strerror(za)));
  }
  return i;
}

}  // namespace eulernpu::host::zip_io
