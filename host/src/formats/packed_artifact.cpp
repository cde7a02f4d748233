#include "formats/packed_artifact.hpp"

#include <sys/stat.h>
#include <zip.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "core/error.hpp"
#include "formats/npz.hpp"
#include "formats/output_file.hpp"
#include "formats/sha256.hpp"
#include "formats/zip_io.hpp"

namespace fs = std::filesystem;

namespace eulernpu::host {
namespace {

using zip_io::FilePtr;
using zip_io::libzip_says;
using zip_io::SourcePtr;
using zip_io::ZipError;
using zip_io::ZipPtr;

constexpr char kPackedCorrupt[] = "packed artifact is corrupt";
constexpr char kUnsafe[] = "packed artifact has an unsafe entry";
constexpr char kPackedTooBig[] = "packed artifact exceeds a size limit";
constexpr char kMismatch[] = "packed artifact does not match its manifest";

constexpr char kRepackFix[] = "recompile it with 'eulernpu compile ... --out NAME.mxq'";
constexpr char kPackedLimitFix[] =
    "recompile it with 'eulernpu compile ... --out NAME.mxq'; a packed artifact "
    "from elsewhere may be hostile (a trusted one may raise the limit: "
    "EULERNPU_MAX_PACKED_MEMBERS, _TOTAL_BYTES, EULERNPU_MAX_ARTIFACT_FILE_BYTES)";

// DOS date of 1980-01-01 (the zip epoch), time 00:00:00, as numpy and our
// .npz writer use: the bytes then do not depend on when they were made.
// A regular file, rw-r--r--: what `unzip` creates, whoever packed it.
constexpr zip_uint32_t kUnixRegularFile0644 = (S_IFREG | 0644u) << 16;
// MS-DOS attribute bit of a directory.
constexpr zip_uint32_t kDosDirectoryBit = 0x10;
constexpr char kZipMagic[] = "PK\x03\x04";

// Built by appending: GCC 12 warns falsely (-Wrestrict) on "'" + string.
std::string quoted(const std::string& s) {
  std::string q(1, '\'');
  q += s;
  q += '\'';
  return q;
}

std::string entry_where(const fs::path& path, const std::string& name) {
  return quoted(path.string()) + ", entry " + quoted(name);
}

// JSON compresses well and is small; weights (.npz) are stored, so a
// backend's own compression choice is kept and the bytes can be read in
// place.
bool deflated(const std::string& relative) { return relative.ends_with(".json"); }

// --- writing ---

void add_member(zip_t* za, const std::string& relative, const std::vector<uint8_t>& bytes) {
  check_relative_path(relative, "artifact file");
  zip_source_t* src = zip_source_buffer(za, bytes.data(), bytes.size(), 0);
  if (src == nullptr) throw std::bad_alloc();
  const bool deflate = deflated(relative);
  const zip_uint64_t i =
      zip_io::add_fixed_member(za, relative, src, deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE,
                               deflate ? 9 : 0, "a packed artifact");
  if (zip_file_set_external_attributes(za, i, 0, ZIP_OPSYS_UNIX, kUnixRegularFile0644) != 0) {
    throw std::runtime_error("cannot set up " + quoted(relative) + " in a packed artifact" +
                             libzip_says(zip_strerror(za)));
  }
}

// --- reading ---

struct Entry {
  zip_uint64_t index = 0;
  std::string name;
  uint64_t size = 0;
};

// Names stay inside the artifact: relative, '/'-separated, no empty, '.'
// or '..' part. Returns why a name is refused, or nothing.
std::string unsafe_name(const std::string& name) {
  if (name.empty()) return "has an empty name";
  if (name.back() == '/') return "is a directory";
  if (name.front() == '/') return "is an absolute path";
  if (name.find('\\') != std::string::npos) return "has a '\\' in its name";
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    const std::string part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return "has an empty, '.' or '..' part";
    start = end + 1;
  }
  return {};
}

// Why the entry is not a plain file (directory, symlink, device), or
// nothing. The mode is only known for entries made on Unix, and many
// packers (Python's zipfile among them) record only the permission bits:
// no file type means a plain file.
std::string not_a_file(zip_t* za, zip_uint64_t index) {
  zip_uint8_t opsys = 0;
  zip_uint32_t attributes = 0;
  if (zip_file_get_external_attributes(za, index, 0, &opsys, &attributes) != 0) {
    return "has unreadable attributes";
  }
  if (opsys == ZIP_OPSYS_UNIX) {
    const zip_uint32_t mode = attributes >> 16;
    if (S_ISLNK(mode)) return "is a symbolic link";
    if (S_ISDIR(mode)) return "is a directory";
    if ((mode & S_IFMT) != 0 && !S_ISREG(mode)) return "is not a regular file";
  }
  if ((attributes & kDosDirectoryBit) != 0) return "is a directory";
  return {};
}

// Finds the name libzip saw twice (it refuses the archive without saying
// which) by reopening it without the consistency checks.
std::string find_duplicate_name(const fs::path& path) {
  int err = 0;
  ZipPtr za(zip_open(path.c_str(), ZIP_RDONLY, &err));
  if (!za) return {};
  std::set<std::string> seen;
  const zip_int64_t n = zip_get_num_entries(za.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(za.get(), static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
    if (name != nullptr && !seen.insert(name).second) return name;
  }
  return {};
}

ZipPtr open_zip(const fs::path& path) {
  const std::string where = quoted(path.string());
  ZipError error;
  SourcePtr src(zip_source_file_create(path.c_str(), 0, 0, error.get()));
  if (!src) {
    throw UserError("file not found", where + ": cannot open it" + libzip_says(error.message()),
                    "check the path and the file's permissions");
  }
  // CHECKCONS compares local and central headers and insists the archive
  // ends where its directory says, which catches truncation early.
  ZipPtr za(zip_open_from_source(src.get(), ZIP_RDONLY | ZIP_CHECKCONS, error.get()));
  if (za) {
    src.release();  // the archive owns it now
    return za;
  }
  if (error.code() == ZIP_ER_EXISTS) {
    const std::string name = find_duplicate_name(path);
    throw UserError(kUnsafe,
                    (name.empty() ? where + ": two entries have the same name"
                                  : entry_where(path, name) + " appears twice"),
                    kRepackFix);
  }
  throw UserError(kPackedCorrupt, where + ": not a valid zip file" + libzip_says(error.message()),
                  kRepackFix);
}

// Checks every entry's name, kind and declared size before anything is
// read, so the limits bound all later allocation.
std::vector<Entry> list_entries(zip_t* za, const fs::path& path, const PackedLimits& limits) {
  const std::string where = quoted(path.string());
  const zip_int64_t n = zip_get_num_entries(za, 0);
  if (n < 0) throw UserError(kPackedCorrupt, where + ": cannot count its entries", kRepackFix);
  const auto count = static_cast<uint64_t>(n);
  if (count > limits.max_members) {
    throw UserError(kPackedTooBig,
                    where + ": has " + std::to_string(count) + " entries; the limit is " +
                        std::to_string(limits.max_members),
                    kPackedLimitFix);
  }
  std::vector<Entry> entries;
  std::set<std::string> names;
  uint64_t total = 0;
  for (zip_uint64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    constexpr zip_uint64_t kNeeded = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE |
                                     ZIP_STAT_COMP_METHOD | ZIP_STAT_ENCRYPTION_METHOD;
    if (zip_stat_index(za, i, ZIP_FL_ENC_RAW, &st) != 0 || (st.valid & kNeeded) != kNeeded) {
      throw UserError(
          kPackedCorrupt,
          where + ": entry " + std::to_string(i) + " is unreadable" + libzip_says(zip_strerror(za)),
          kRepackFix);
    }
    Entry e{i, st.name != nullptr ? st.name : "", st.size};
    const std::string at = entry_where(path, e.name);
    std::string why = unsafe_name(e.name);
    if (why.empty()) why = not_a_file(za, i);
    if (why.empty() && !names.insert(e.name).second) why = "appears twice";
    if (!why.empty()) throw UserError(kUnsafe, at + " " + why, kRepackFix);
    if (st.encryption_method != ZIP_EM_NONE) {
      throw UserError(kPackedCorrupt, at + " is encrypted", kRepackFix);
    }
    if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE) {
      throw UserError(kPackedCorrupt,
                      at + " uses compression method " + std::to_string(st.comp_method) +
                          "; only stored and deflated entries are read",
                      kRepackFix);
    }
    if (st.comp_method == ZIP_CM_STORE && st.comp_size != st.size) {
      throw UserError(kPackedCorrupt,
                      at + " is stored, but its sizes differ (" + std::to_string(st.comp_size) +
                          " and " + std::to_string(st.size) + " bytes)",
                      kRepackFix);
    }
    if (e.size > limits.max_member_bytes) {
      throw UserError(kPackedTooBig,
                      at + " is " + std::to_string(e.size) + " bytes; the limit is " +
                          std::to_string(limits.max_member_bytes),
                      kPackedLimitFix);
    }
    total += e.size;  // cannot wrap: count and each size are bounded
    if (total > limits.max_total_bytes) {
      throw UserError(kPackedTooBig,
                      where + ": its entries hold more than " +
                          std::to_string(limits.max_total_bytes) + " bytes",
                      kPackedLimitFix);
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

// Reads an entry of a size already checked against the limits. The buffer
// grows as data arrives, so an entry that lies about its size costs no more
// memory than the data that is really there.
std::vector<uint8_t> read_entry(zip_t* za, const Entry& e, const std::string& at) {
  FilePtr file(zip_fopen_index(za, e.index, 0));
  if (!file) {
    throw UserError(kPackedCorrupt, at + ": cannot open it" + libzip_says(zip_strerror(za)),
                    kRepackFix);
  }
  constexpr uint64_t kFirstChunk = 1 << 20;
  std::vector<uint8_t> bytes;
  uint64_t got = 0;
  while (got < e.size) {
    if (got == bytes.size()) bytes.resize(std::min(e.size, std::max(kFirstChunk, 2 * got)));
    const zip_int64_t n = zip_fread(file.get(), bytes.data() + got, bytes.size() - got);
    if (n < 0) {
      throw UserError(kPackedCorrupt,
                      at + ": cannot read it" + libzip_says(zip_file_strerror(file.get())),
                      kRepackFix);
    }
    if (n == 0) {
      throw UserError(kPackedCorrupt,
                      at + ": ends after " + std::to_string(got) + " of its " +
                          std::to_string(e.size) + " bytes",
                      kRepackFix);
    }
    got += static_cast<uint64_t>(n);
  }
  // libzip checks the CRC only once it reaches the end of the data.
  uint8_t extra = 0;
  const zip_int64_t n = zip_fread(file.get(), &extra, 1);
  if (n != 0) {
    throw UserError(kPackedCorrupt,
                    at + (n < 0 ? ": cannot read it" + libzip_says(zip_file_strerror(file.get()))
                                : ": holds more than the " + std::to_string(e.size) +
                                      " bytes its directory entry says"),
                    kRepackFix);
  }
  return bytes;
}

// Every member but manifest.json is listed in the manifest with its size
// and sha256, and every listed file is a member.
void check_against_manifest(const fs::path& path, const FileSet& files) {
  const std::vector<uint8_t>& text = files.at("manifest.json");
  const auto manifest = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  const std::string manifest_at = entry_where(path, "manifest.json");
  auto manifest_corrupt = [&](const std::string& why) {
    return UserError("artifact manifest is corrupt", manifest_at + ": " + why,
                     "recompile the artifact");
  };
  if (manifest.is_discarded() || !manifest.is_object()) {
    throw manifest_corrupt("not a JSON object");
  }
  const auto listed = manifest.find("files");
  if (listed == manifest.end() || !listed->is_object()) {
    throw manifest_corrupt("no 'files' object");
  }
  for (const auto& [name, record] : listed->items()) {
    if (!record.is_object() || !record.contains("sha256") || !record["sha256"].is_string() ||
        !record.contains("bytes") || !record["bytes"].is_number_unsigned()) {
      throw manifest_corrupt("file " + quoted(name) + " has no 'bytes' and 'sha256'");
    }
    const auto it = files.find(name);
    if (name == "manifest.json" || it == files.end()) {
      throw UserError(kMismatch, manifest_at + " lists " + quoted(name) + ", which is not an entry",
                      kRepackFix);
    }
    const std::vector<uint8_t>& bytes = it->second;
    if (record["bytes"].get<uint64_t>() != bytes.size() ||
        record["sha256"].get<std::string>() != sha256_hex(bytes.data(), bytes.size())) {
      throw UserError(kMismatch,
                      entry_where(path, name) +
                          " differs from the size and sha256 manifest.json records for it",
                      kRepackFix);
    }
  }
  for (const auto& [name, bytes] : files) {
    if (name != "manifest.json" && !listed->contains(name)) {
      throw UserError(kMismatch, entry_where(path, name) + " is not listed in manifest.json",
                      kRepackFix);
    }
  }
}

}  // namespace

bool is_packed_artifact_path(const fs::path& path) {
  return path.extension() == kPackedArtifactExtension;
}

bool starts_like_zip(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  char head[4] = {};
  return f.read(head, 4) && std::equal(head, head + 4, kZipMagic);
}

std::vector<uint8_t> encode_packed_artifact(const FileSet& files) {
  if (files.empty()) throw std::invalid_argument("a packed artifact needs at least one file");
  return zip_io::encode_archive("a packed artifact", [&](zip_t* za) {
    // std::map iterates in byte order of the paths: the member order.
    for (const auto& [relative, bytes] : files) add_member(za, relative, bytes);
  });
}

void write_packed_artifact(const fs::path& out, const FileSet& files) {
  std::error_code ec;
  const fs::file_status status = fs::status(out, ec);
  if (fs::exists(status) && !(fs::is_regular_file(status) && starts_like_zip(out))) {
    throw UserError("output path is in the way",
                    quoted(out.string()) + " exists and is not a packed artifact",
                    "choose another --out or remove it");
  }
  const std::vector<uint8_t> bytes = encode_packed_artifact(files);
  write_file_atomic(out, bytes.data(), bytes.size(), OutputKind::kZip);
}

FileSet read_packed_artifact(const fs::path& path, const PackedLimits& limits) {
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) {
    throw UserError("file not found", quoted(path.string()) + ": cannot read it: " + ec.message(),
                    "check the path and the file's permissions");
  }
  if (size == 0) {
    throw UserError(kPackedCorrupt, quoted(path.string()) + ": is empty, not a zip file",
                    kRepackFix);
  }
  ZipPtr za = open_zip(path);
  const std::vector<Entry> entries = list_entries(za.get(), path, limits);
  if (std::none_of(entries.begin(), entries.end(),
                   [](const Entry& e) { return e.name == "manifest.json"; })) {
    throw UserError("not an artifact", quoted(path.string()) + " has no manifest.json entry",
                    "pass a file 'eulernpu compile --out NAME.mxq' wrote");
  }
  FileSet files;
  for (const Entry& e : entries) {
    files.emplace(e.name, read_entry(za.get(), e, entry_where(path, e.name)));
  }
  check_against_manifest(path, files);
  return files;
}

}  // namespace eulernpu::host
