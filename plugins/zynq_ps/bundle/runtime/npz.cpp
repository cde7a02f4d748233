#include "npz.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "eulernpu/sdk/abi.h"
#include "eulernpu/sdk/status.hpp"

namespace eulernpu::bundle {
namespace {

constexpr char kCorrupt[] = "npz file is corrupt";
constexpr char kMalformed[] = "npy array is malformed";
constexpr char kUnsupported[] = "unsupported npy dtype";
constexpr char kTooBig[] = "npz file exceeds a size limit";
constexpr char kCompressed[] = "npz member is compressed";
constexpr char kRecreate[] =
    "re-create the file with np.savez (stored members; the runner "
    "cannot inflate np.savez_compressed's)";
// A .npy header longer than this is not numpy's (it writes under 200 bytes
// for rank 32).
constexpr uint32_t kMaxHeader = 1 << 16;
constexpr size_t kMaxRank = 32;
constexpr uint32_t kMaxMembers = 1 << 16;

[[noreturn]] void fail(const char* title, const std::string& where, const std::string& fix) {
  throw sdk::Error(ENP_INVALID_ARGUMENT, title, where, fix);
}

struct DType {
  int32_t dtype;
  const char* descr;
  size_t size;
};
constexpr DType kDTypes[] = {
    {ENP_DTYPE_FLOAT32, "<f4", 4}, {ENP_DTYPE_FLOAT64, "<f8", 8}, {ENP_DTYPE_FLOAT16, "<f2", 2},
    {ENP_DTYPE_INT8, "|i1", 1},    {ENP_DTYPE_UINT8, "|u1", 1},   {ENP_DTYPE_INT16, "<i2", 2},
    {ENP_DTYPE_UINT16, "<u2", 2},  {ENP_DTYPE_INT32, "<i4", 4},   {ENP_DTYPE_UINT32, "<u4", 4},
    {ENP_DTYPE_INT64, "<i8", 8},   {ENP_DTYPE_UINT64, "<u8", 8},  {ENP_DTYPE_BOOL, "|b1", 1},
};

const DType* find_dtype(int32_t dtype) {
  for (const DType& d : kDTypes) {
    if (d.dtype == dtype) return &d;
  }
  return nullptr;
}

uint32_t crc32(const uint8_t* p, size_t n) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

// Little-endian reads inside [0, size): every offset is checked by the caller
// through `need`.
struct Reader {
  const uint8_t* p;
  size_t size;
  const std::string& what;
  void need(uint64_t offset, uint64_t n) const {
    if (offset > size || n > size - offset) {
      fail(kCorrupt, what + ": a zip record runs past the end of the file", kRecreate);
    }
  }
  uint64_t le(uint64_t offset, int bytes) const {
    need(offset, static_cast<uint64_t>(bytes));
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[offset + static_cast<uint64_t>(i)];
    return v;
  }
};

// The text of `key`'s value in numpy's header dict: "'<f4'", "False", "(3, 4)".
std::string dict_value(const std::string& header, const std::string& key,
                       const std::string& where) {
  const std::string quoted = "'" + key + "':";
  const size_t at = header.find(quoted);
  if (at == std::string::npos) {
    fail(kMalformed, where + ": the .npy header has no '" + key + "'",
         "re-create the array with np.save or np.savez");
  }
  size_t begin = at + quoted.size();
  while (begin < header.size() && header[begin] == ' ') ++begin;
  size_t end = begin;
  if (end < header.size() && header[end] == '(') {
    end = header.find(')', end);
    if (end == std::string::npos) fail(kMalformed, where + ": the shape is not closed", kRecreate);
    return header.substr(begin, end + 1 - begin);
  }
  if (end < header.size() && header[end] == '\'') {
    end = header.find('\'', end + 1);
    if (end == std::string::npos) fail(kMalformed, where + ": a string is not closed", kRecreate);
    return header.substr(begin, end + 1 - begin);
  }
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  return header.substr(begin, end - begin);
}

std::vector<int64_t> parse_shape(const std::string& text, const std::string& where) {
  std::vector<int64_t> shape;
  size_t i = 1;  // past '('
  while (i + 1 < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i + 1 >= text.size()) break;
    int64_t d = 0;
    size_t digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (d > (std::numeric_limits<int64_t>::max() - 9) / 10) {
        fail(kMalformed, where + ": a dimension is too large", kRecreate);
      }
      d = d * 10 + (text[i++] - '0');
      ++digits;
    }
    if (digits == 0) fail(kMalformed, where + ": the shape " + text + " is not a tuple", kRecreate);
    shape.push_back(d);
    if (shape.size() > kMaxRank) fail(kMalformed, where + ": more than 32 dimensions", kRecreate);
  }
  return shape;
}

Array parse_npy(const uint8_t* p, uint64_t n, const std::string& name, const std::string& where,
                uint64_t& budget) {
  if (n < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0) {
    fail(kMalformed, where + ": not an .npy array (no \\x93NUMPY magic)", kRecreate);
  }
  const int major = p[6];
  const uint64_t len_bytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3 || n < 8 + len_bytes) {
    fail(kMalformed, where + ": .npy version " + std::to_string(major) + " is not 1, 2 or 3",
         kRecreate);
  }
  uint64_t header_len = 0;
  for (uint64_t i = len_bytes; i-- > 0;) header_len = (header_len << 8) | p[8 + i];
  if (header_len > kMaxHeader || header_len > n - 8 - len_bytes) {
    fail(kMalformed, where + ": the .npy header runs past the member", kRecreate);
  }
  const std::string header(reinterpret_cast<const char*>(p + 8 + len_bytes), header_len);
  const std::string descr = dict_value(header, "descr", where);
  const DType* dtype = nullptr;
  // descr is quoted: '<f4'. (Compared in place: GCC 12 takes "'" + s + "'"
  // for an overlapping memcpy at -O2, a false -Wrestrict.)
  for (const DType& d : kDTypes) {
    const size_t len = std::strlen(d.descr);
    if (descr.size() == len + 2 && descr.front() == '\'' && descr.back() == '\'' &&
        descr.compare(1, len, d.descr) == 0) {
      dtype = &d;
    }
  }
  if (!dtype) {
    fail(kUnsupported, where + ": dtype " + descr + " is not supported",
         "save float16/32/64, (u)int8/16/32/64 or bool arrays, little-endian");
  }
  if (dict_value(header, "fortran_order", where) != "False") {
    fail(kMalformed, where + ": the array is in Fortran order",
         "save np.ascontiguousarray(a) instead");
  }
  Array a;
  a.name = name;
  a.dtype = dtype->dtype;
  a.shape = parse_shape(dict_value(header, "shape", where), where);
  uint64_t bytes = dtype->size;
  for (const int64_t d : a.shape) {
    const auto u = static_cast<uint64_t>(d);
    if (u != 0 && bytes > std::numeric_limits<uint64_t>::max() / u) {
      fail(kMalformed, where + ": the shape's size overflows", kRecreate);
    }
    bytes *= u;
  }
  const uint64_t offset = 8 + len_bytes + header_len;
  if (bytes != n - offset) {
    fail(kMalformed,
         where + ": the header's shape needs " + std::to_string(bytes) + " bytes, the member has " +
             std::to_string(n - offset),
         kRecreate);
  }
  if (bytes > budget) {
    fail(kTooBig, where + ": more array data than the model's tensors need",
         "pass only the model's inputs, with their compiled shapes");
  }
  budget -= bytes;
  a.data.assign(p + offset, p + offset + bytes);
  return a;
}

void put(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

std::vector<Array> parse_npz(const uint8_t* bytes, size_t size, const std::string& what,
                             uint64_t max_bytes) {
  const Reader r{bytes, size, what};
  // The end-of-central-directory record: the last 22 bytes unless a
  // comment follows (np.savez writes none; up to 64 KiB are searched).
  if (size < 22) fail(kCorrupt, what + ": too short for a zip file", kRecreate);
  size_t eocd = size - 22;
  while (r.le(eocd, 4) != 0x06054b50) {
    if (eocd == 0 || size - eocd > 22 + 0xffff) {
      fail(kCorrupt, what + ": no zip end-of-central-directory record", kRecreate);
    }
    --eocd;
  }
  const uint64_t count = r.le(eocd + 10, 2);
  const uint64_t cd_size = r.le(eocd + 12, 4);
  uint64_t cd = r.le(eocd + 16, 4);
  if (count == 0xffff || cd == 0xffffffffu) {
    fail(kTooBig, what + ": a zip64 archive (over 65535 members or 4 GiB)",
         "split the arrays over smaller files");
  }
  if (count > kMaxMembers) fail(kTooBig, what + ": too many members", "split the arrays");
  r.need(cd, cd_size);
  std::vector<Array> out;
  uint64_t budget = max_bytes;
  for (uint64_t i = 0; i < count; ++i) {
    if (r.le(cd, 4) != 0x02014b50) {
      fail(kCorrupt, what + ": central directory entry " + std::to_string(i) + " is damaged",
           kRecreate);
    }
    const uint64_t method = r.le(cd + 10, 2);
    const auto crc = static_cast<uint32_t>(r.le(cd + 16, 4));
    uint64_t csize = r.le(cd + 20, 4), usize = r.le(cd + 24, 4);
    const uint64_t name_len = r.le(cd + 28, 2), extra_len = r.le(cd + 30, 2),
                   comment_len = r.le(cd + 32, 2);
    uint64_t local = r.le(cd + 42, 4);
    r.need(cd + 46, name_len + extra_len + comment_len);
    const std::string member(reinterpret_cast<const char*>(bytes + cd + 46), name_len);
    // numpy writes every member with zip64 fields; only the ones the
    // 32-bit fields leave out (0xffffffff) are there, in this order.
    for (uint64_t e = cd + 46 + name_len; e + 4 <= cd + 46 + name_len + extra_len;) {
      const uint64_t id = r.le(e, 2), len = r.le(e + 2, 2);
      uint64_t f = e + 4;
      if (id == 1) {
        if (usize == 0xffffffffu) usize = r.le(f, 8), f += 8;
        if (csize == 0xffffffffu) csize = r.le(f, 8), f += 8;
        if (local == 0xffffffffu) local = r.le(f, 8);
      }
      e += 4 + len;
    }
    const std::string where = what + ": member '" + member + "'";
    if (method != 0) {
      fail(kCompressed, where + " is compressed (method " + std::to_string(method) + ")",
           kRecreate);
    }
    if (csize != usize) fail(kCorrupt, where + ": stored with two sizes", kRecreate);
    if (r.le(local, 4) != 0x04034b50) fail(kCorrupt, where + ": no local header", kRecreate);
    const uint64_t data = local + 30 + r.le(local + 26, 2) + r.le(local + 28, 2);
    r.need(data, usize);
    if (crc32(bytes + data, usize) != crc) fail(kCorrupt, where + ": CRC mismatch", kRecreate);
    if (member.size() < 5 || member.compare(member.size() - 4, 4, ".npy") != 0) {
      fail(kCorrupt, where + " is not an .npy file", kRecreate);
    }
    const std::string name = member.substr(0, member.size() - 4);
    for (const Array& a : out) {
      if (a.name == name) fail(kCorrupt, where + " appears twice", kRecreate);
    }
    out.push_back(parse_npy(bytes + data, usize, name, where, budget));
    cd += 46 + name_len + extra_len + comment_len;
  }
  return out;
}

std::vector<Array> read_npz(const std::string& path, uint64_t max_bytes) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) {
    throw sdk::Error(ENP_NOT_FOUND, "file not found", path + " cannot be opened",
                     "check the path given to --input");
  }
  std::fseek(f.get(), 0, SEEK_END);
  const long size = std::ftell(f.get());
  std::fseek(f.get(), 0, SEEK_SET);
  // Headers and zip records beyond the arrays: 1 MiB is far more than
  // numpy writes for any file the model can take.
  if (size < 0 || static_cast<uint64_t>(size) > max_bytes + (uint64_t{1} << 20)) {
    fail(kTooBig, path + ": " + std::to_string(size) + " bytes, more than the model's inputs need",
         "pass only the model's inputs, with their compiled shapes");
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (size > 0 && std::fread(bytes.data(), 1, bytes.size(), f.get()) != bytes.size()) {
    fail(kCorrupt, path + ": read error", "check the file");
  }
  return parse_npz(bytes.data(), bytes.size(), path, max_bytes);
}

void write_npz(const std::string& path, const std::vector<Array>& arrays) {
  std::string zip, central;
  for (const Array& a : arrays) {
    const DType* d = find_dtype(a.dtype);
    if (!d) {
      throw sdk::Error(ENP_UNIMPLEMENTED, "unsupported tensor dtype",
                       "output '" + a.name + "' has dtype " + std::to_string(a.dtype),
                       "keep the model's outputs in a numpy dtype");
    }
    std::string shape = "(";
    for (size_t i = 0; i < a.shape.size(); ++i) {
      shape += std::to_string(a.shape[i]) + (a.shape.size() == 1 ? "," : "");
      if (i + 1 < a.shape.size()) shape += ", ";
    }
    shape += ")";
    std::string header = "{'descr': '" + std::string(d->descr) +
                         "', 'fortran_order': False, 'shape': " + shape + ", }";
    // numpy pads the header with spaces and a newline to a 64-byte boundary.
    const size_t total = 10 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    std::string npy("\x93NUMPY\x01\x00", 8);
    put(npy, header.size(), 2);
    npy += header;
    npy.append(reinterpret_cast<const char*>(a.data.data()), a.data.size());
    const std::string name = a.name + ".npy";
    const uint32_t crc = crc32(reinterpret_cast<const uint8_t*>(npy.data()), npy.size());
    if (npy.size() >= 0xffffffffu || zip.size() >= 0xffffffffu) {
      throw sdk::Error(ENP_RESOURCE_EXHAUSTED, "cannot write output file",
                       path + ": output '" + a.name + "' is over 4 GiB",
                       "the runner writes zip files without zip64");
    }
    const uint64_t offset = zip.size();
    // Fixed date and time (1980-01-01 00:00): the same bytes on every run.
    // The version fields and attributes are those eulernpu's own files
    // carry (libzip's), so the runner's .npz is byte for byte the file
    // `eulernpu run` writes for the same outputs.
    auto fields = [&](std::string& s) {
      put(s, 10, 2);  // version needed: 1.0, stored
      put(s, 0, 2);   // flags
      put(s, 0, 2);   // stored
      put(s, 0, 2);   // time
      put(s, 0x21, 2);
      put(s, crc, 4);
      put(s, npy.size(), 4);
      put(s, npy.size(), 4);
      put(s, name.size(), 2);
      put(s, 0, 2);  // extra
    };
    put(zip, 0x04034b50, 4);
    fields(zip);
    zip += name;
    zip += npy;
    put(central, 0x02014b50, 4);
    put(central, 0x033f, 2);  // version made by: Unix, 6.3
    fields(central);
    put(central, 0, 2);            // comment
    put(central, 0, 2);            // disk
    put(central, 0, 2);            // internal attributes
    put(central, 0x81b60000u, 4);  // external attributes: a regular file, rw-rw-rw-
    put(central, offset, 4);
    central += name;
  }
  const uint64_t cd_offset = zip.size();
  // No zip64: the directory's offset, size and count must fit its fields.
  if (arrays.size() > 0xffff || cd_offset + central.size() >= 0xffffffffu) {
    throw sdk::Error(ENP_RESOURCE_EXHAUSTED, "cannot write output file",
                     path + ": over 65535 outputs or 4 GiB in all",
                     "the runner writes zip files without zip64");
  }
  zip += central;
  put(zip, 0x06054b50, 4);
  put(zip, 0, 2);
  put(zip, 0, 2);
  put(zip, arrays.size(), 2);
  put(zip, arrays.size(), 2);
  put(zip, central.size(), 4);
  put(zip, cd_offset, 4);
  put(zip, 0, 2);

  const std::string tmp = path + ".tmp";
  auto cannot = [&](const std::string& why) {
    std::remove(tmp.c_str());
    return sdk::Error(ENP_INVALID_ARGUMENT, "cannot write output file", path + ": " + why,
                      "check free disk space and permissions");
  };
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw cannot("cannot create " + tmp);
  const bool written = std::fwrite(zip.data(), 1, zip.size(), f) == zip.size();
  if (std::fclose(f) != 0 || !written) throw cannot("write failed");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw cannot("rename failed");
}

}  // namespace eulernpu::bundle
