#include "formats/npz.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>

#include "core/error.hpp"
#include "eulernpu/sdk/lowbit.hpp"
#include "formats/output_file.hpp"
#include "formats/zip_io.hpp"

namespace eulernpu::host {
namespace {

namespace fs = std::filesystem;
using zip_io::FilePtr;
using zip_io::libzip_says;
using zip_io::SourcePtr;
using zip_io::ZipError;
using zip_io::ZipPtr;

constexpr char kNotFound[] = "file not found";
constexpr char kCorrupt[] = "npz file is corrupt";
constexpr char kMalformed[] = "npy array is malformed";
constexpr char kUnsupported[] = "unsupported npy dtype";
constexpr char kTooBig[] = "npz file exceeds a size limit";

constexpr char kRecreateFix[] = "re-create the file with np.savez or np.savez_compressed";
constexpr char kDuplicateFix[] = "re-create the file with np.savez, which writes each key once";
constexpr char kNpyFix[] =
    "re-create the array with np.save or np.savez; an .npy header is a dict "
    "with exactly 'descr', 'fortran_order' and 'shape'";
constexpr char kDTypeFix[] =
    "convert the array before saving it, e.g. a.astype(np.float32); "
    "supported: float16, float32, float64, int8, int16, int32, int64, uint8, "
    "uint16, uint32, uint64, bool, little-endian, and bfloat16 bits as "
    "[('bfloat16', '<u2')]";
constexpr char kLimitFix[] =
    "split the arrays over smaller files, or, if the file is trusted, raise the limit "
    "(EULERNPU_MAX_NPZ_MEMBER_BYTES, _TOTAL_BYTES, _MEMBERS; docs/errors.md#limits)";

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicLen = 6;
constexpr size_t kNpyAlign = 64;
// numpy leaves room for the first axis to grow to this many digits, so that
// appending to a file never has to rewrite the header.
constexpr size_t kGrowthAxisMaxDigits = 21;

[[noreturn]] void fail(const char* title, std::string where, std::string fix) {
  throw UserError(title, std::move(where), std::move(fix));
}

// Built by appending: GCC 12 warns falsely (-Wrestrict) on "'" + string.
std::string in_quotes(std::string_view s) {
  std::string quoted(1, '\'');
  quoted.append(s);
  quoted += '\'';
  return quoted;
}

// --- dtypes ---

struct DTypeInfo {
  DType dtype;
  char kind;  // numpy's dtype.kind
  size_t size;
  const char* descr;  // what numpy writes
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kFloat16, 'f', 2, "<f2"}, {DType::kFloat32, 'f', 4, "<f4"},
    {DType::kFloat64, 'f', 8, "<f8"}, {DType::kInt8, 'i', 1, "|i1"},
    {DType::kInt16, 'i', 2, "<i2"},   {DType::kInt32, 'i', 4, "<i4"},
    {DType::kInt64, 'i', 8, "<i8"},   {DType::kUInt8, 'u', 1, "|u1"},
    {DType::kUInt16, 'u', 2, "<u2"},  {DType::kUInt32, 'u', 4, "<u4"},
    {DType::kUInt64, 'u', 8, "<u8"},  {DType::kBool, 'b', 1, "|b1"},
};

// numpy has no bfloat16. We store one as a structured dtype with a single
// uint16 field named 'bfloat16' holding the bit pattern: numpy loads it (a
// '<V2' void array would lose what the bytes mean), the name says how to
// read it, and ml_dtypes users get values back with
// a['bfloat16'].view(ml_dtypes.bfloat16). Written exactly as numpy spells it.
constexpr char kBFloat16Descr[] = "[('bfloat16', '<u2')]";

// True if `literal` (a structured descr's text) is kBFloat16Descr, up to
// whitespace and quote style.
bool is_bfloat16_descr(std::string_view literal) {
  std::string norm;
  for (char c : literal) {
    if (c == ' ' || c == '\t' || c == '\n') continue;
    norm += c == '"' ? '\'' : c;
  }
  return norm == "[('bfloat16','<u2')]";
}

const DTypeInfo* find_dtype(DType dtype) {
  // --- low-precision types: numpy has none of them; .npy holds their
  // one-byte codes as int8 (int4, int2) or uint8 (docs/artifacts.md).
  if (sdk::lowbit::is_lowbit(static_cast<int32_t>(dtype))) {
    dtype = static_cast<DType>(sdk::lowbit::storage_dtype(static_cast<int32_t>(dtype)));
  }
  // --- end of low-precision types
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == dtype) return &info;
  }
  return nullptr;
}

const DTypeInfo* find_dtype(char kind, std::string_view size) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.kind == kind && size == std::to_string(info.size)) return &info;
  }
  return nullptr;
}

// Maps a numpy type string ('<f4', '|b1', ...) to our dtype. Byte order is
// irrelevant for single bytes, which numpy spells several ways.
DType dtype_from_descr(const std::string& descr, const std::string& where) {
  std::string_view s = descr;
  char order = '=';
  if (!s.empty() && std::string_view("<>|=").find(s[0]) != s.npos) {
    order = s[0];
    s.remove_prefix(1);
  }
  const DTypeInfo* info = s.empty() ? nullptr : find_dtype(s[0], s.substr(1));
  if (info == nullptr) {
    fail(kUnsupported, where + ": dtype " + in_quotes(descr) + " is not supported", kDTypeFix);
  }
  if (info->size == 1) return info->dtype;
  const bool native_little = std::endian::native == std::endian::little;
  if (order == '<' || (order == '=' && native_little)) return info->dtype;
  if (order == '>' || order == '=') {
    fail(kUnsupported, where + ": dtype " + in_quotes(descr) + " is big-endian",
         "save it little-endian: a.astype(a.dtype.newbyteorder('<'))");
  }
  fail(kUnsupported, where + ": dtype " + in_quotes(descr) + " has no byte order", kDTypeFix);
}

// shape x itemsize, or nothing if it does not fit in 64 bits. A zero
// dimension makes any other dimension harmless, as numpy sees it.
std::optional<uint64_t> checked_nbytes(const std::vector<int64_t>& shape, size_t itemsize) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  uint64_t n = itemsize;
  for (int64_t d : shape) {
    const auto dim = static_cast<uint64_t>(d);
    if (d < 0 || (dim != 0 && n > std::numeric_limits<uint64_t>::max() / dim)) {
      return std::nullopt;
    }
    n *= dim;
  }
  return n;
}

// --- .npy header ---

// The header is a Python dict literal; numpy evaluates it with
// ast.literal_eval. We accept the subset numpy writes (plus Python 2's "3L"
// integers) and never evaluate anything.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& where, const NpzLimits& limits)
      : text_(text), where_(where), limits_(limits) {}

  void parse() {
    skip_ws();
    expect('{');
    skip_ws();
    while (!consume('}')) {
      parse_item();
      skip_ws();
      if (consume(',')) {
        skip_ws();
      } else if (peek() != '}') {
        error("expected ',' or '}' after the value of " + in_quotes(key_));
      }
    }
    skip_ws();
    if (pos_ != text_.size()) error("text after the closing '}'");
  }

  std::optional<std::string> descr;
  std::optional<std::string> structured_descr;  // a list of fields
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;

 private:
  [[noreturn]] void error(const std::string& what) const {
    fail(kMalformed, where_ + ": header " + what, kNpyFix);
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  bool consume(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  void expect(char c) {
    if (!consume(c)) error(std::string("lacks '") + c + "'");
  }

  void skip_ws() {
    while (pos_ < text_.size() && std::string_view(" \t\n\r\f\v").find(text_[pos_]) != text_.npos) {
      ++pos_;
    }
  }

  void parse_item() {
    key_ = parse_string();
    skip_ws();
    expect(':');
    skip_ws();
    if (key_ == "descr") {
      if (descr || structured_descr) error("repeats 'descr'");
      if (peek() == '[') {
        structured_descr = skip_literal();
      } else {
        descr = parse_string();
      }
    } else if (key_ == "fortran_order") {
      if (fortran_order) error("repeats 'fortran_order'");
      fortran_order = parse_bool();
    } else if (key_ == "shape") {
      if (shape) error("repeats 'shape'");
      shape = parse_shape();
    } else {
      error("has unexpected key " + in_quotes(key_));
    }
  }

  std::string parse_string() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') error("expected a quoted string");
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == text_.npos) error("has an unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    // numpy never writes escapes in a type string or key.
    if (s.find('\\') != s.npos) error("has an escape sequence in a string");
    pos_ = end + 1;
    return s;
  }

  bool parse_bool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    error("'fortran_order' is not True or False");
  }

  // A tuple: "()", "(3,)", "(2, 3)", "(2, 3,)".
  std::vector<int64_t> parse_shape() {
    std::vector<int64_t> dims;
    expect('(');
    skip_ws();
    bool trailing_comma = false;
    while (!consume(')')) {
      if (dims.size() >= limits_.max_rank) {
        fail(kTooBig,
             where_ + ": shape has more than " + std::to_string(limits_.max_rank) + " dimensions",
             kLimitFix);
      }
      dims.push_back(parse_dim());
      skip_ws();
      trailing_comma = consume(',');
      skip_ws();
      if (!trailing_comma && peek() != ')') error("'shape' is not a tuple");
    }
    // "(3)" is the integer 3 to Python, not a tuple.
    if (dims.size() == 1 && !trailing_comma) error("'shape' is not a tuple");
    return dims;
  }

  int64_t parse_dim() {
    if (peek() == '-') error("'shape' has a negative dimension");
    if (peek() < '0' || peek() > '9') error("'shape' has a non-integer entry");
    constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    uint64_t value = 0;
    while (peek() >= '0' && peek() <= '9') {
      const auto digit = static_cast<uint64_t>(text_[pos_++] - '0');
      if (value > (kMax - digit) / 10) {
        error("'shape' has a dimension beyond 2**63-1");
      }
      value = value * 10 + digit;
    }
    if (peek() == 'L' || peek() == 'l') ++pos_;  // Python 2's long
    return static_cast<int64_t>(value);
  }

  // Skips a bracketed literal (a structured dtype's field list) and returns
  // its text, for the error message.
  std::string skip_literal() {
    const size_t start = pos_;
    int depth = 0;
    do {
      const char c = peek();
      if (c == '\0') error("has an unterminated list");
      if (c == '\'' || c == '"') {
        parse_string();
        continue;
      }
      if (c == '[' || c == '(' || c == '{') ++depth;
      if (c == ']' || c == ')' || c == '}') --depth;
      ++pos_;
    } while (depth > 0);
    return std::string(text_.substr(start, pos_ - start));
  }

  std::string_view text_;
  const std::string& where_;
  const NpzLimits& limits_;
  size_t pos_ = 0;
  std::string key_;
};

struct NpyHeader {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> shape;
  size_t data_offset = 0;
};

uint32_t read_le(const uint8_t* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = n; i > 0; --i) v = (v << 8) | p[i - 1];
  return v;
}

// Checks the magic and version; returns {offset of the dict, its length}.
std::pair<size_t, size_t> parse_npy_prefix(const uint8_t* p, size_t size,
                                           const std::string& where) {
  if (size < kNpyMagicLen + 2 || std::memcmp(p, kNpyMagic, kNpyMagicLen) != 0) {
    fail(kMalformed, where + ": does not start with the .npy magic \\x93NUMPY", kNpyFix);
  }
  const int major = p[6];
  const int minor = p[7];
  if (minor != 0 || major < 1 || major > 3) {
    fail(kMalformed,
         where + ": .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
             " is unknown (1.0, 2.0 and 3.0 are read)",
         kNpyFix);
  }
  // 1.0 has a 16-bit header length; 2.0 and 3.0 a 32-bit one.
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t offset = kNpyMagicLen + 2 + len_bytes;
  if (size < offset) {
    fail(kMalformed, where + ": ends inside the .npy header", kNpyFix);
  }
  const size_t header_len = read_le(p + kNpyMagicLen + 2, len_bytes);
  if (header_len > size - offset) {
    fail(kMalformed,
         where + ": header length " + std::to_string(header_len) + " is beyond the data (" +
             std::to_string(size) + " bytes)",
         kNpyFix);
  }
  return {offset, header_len};
}

NpyHeader parse_npy_header(const uint8_t* p, size_t size, const std::string& where,
                           const NpzLimits& limits) {
  const auto [offset, header_len] = parse_npy_prefix(p, size, where);
  HeaderParser parser(std::string_view(reinterpret_cast<const char*>(p) + offset, header_len),
                      where, limits);
  parser.parse();
  if (!parser.descr && !parser.structured_descr) {
    fail(kMalformed, where + ": header lacks 'descr'", kNpyFix);
  }
  if (!parser.fortran_order) {
    fail(kMalformed, where + ": header lacks 'fortran_order'", kNpyFix);
  }
  if (!parser.shape) {
    fail(kMalformed, where + ": header lacks 'shape'", kNpyFix);
  }
  if (parser.structured_descr && !is_bfloat16_descr(*parser.structured_descr)) {
    fail(kUnsupported,
         where + ": structured dtype " + *parser.structured_descr + " is not supported", kDTypeFix);
  }

  NpyHeader header;
  header.dtype =
      parser.structured_descr ? DType::kBFloat16 : dtype_from_descr(*parser.descr, where);
  if (*parser.fortran_order) {
    fail(kUnsupported, where + ": array is in Fortran order",
         "save a C-ordered array: np.ascontiguousarray(a)");
  }
  header.shape = std::move(*parser.shape);
  header.data_offset = offset + header_len;

  const size_t have = size - header.data_offset;
  const std::optional<uint64_t> need = checked_nbytes(header.shape, dtype_size(header.dtype));
  if (!need || *need != have) {
    fail(kMalformed,
         where + ": data is " + std::to_string(have) + " bytes, but shape " +
             shape_string(header.shape) + " of " + dtype_name(header.dtype) + " needs " +
             (need ? std::to_string(*need) : "more than 2**64"),
         kNpyFix);
  }
  return header;
}

void check_member_size(uint64_t size, const std::string& where, const NpzLimits& limits) {
  if (size > limits.max_member_bytes) {
    fail(kTooBig,
         where + ": array is " + std::to_string(size) + " bytes; the limit is " +
             std::to_string(limits.max_member_bytes),
         kLimitFix);
  }
}

// Takes over `bytes` (a whole .npy) so large arrays are never copied.
Tensor tensor_from_npy(std::vector<uint8_t> bytes, const std::string& where,
                       const NpzLimits& limits) {
  NpyHeader header = parse_npy_header(bytes.data(), bytes.size(), where, limits);
  Tensor t;
  t.dtype = header.dtype;
  t.shape = std::move(header.shape);
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(header.data_offset));
  t.data = std::move(bytes);
  return t;
}

// --- libzip ---

std::string member_where(const std::string& display_name, const std::string& key) {
  return display_name + ", key " + in_quotes(key);
}

// With ZIP_CHECKCONS libzip rejects duplicate names without saying which;
// reopening without it finds the key to report.
std::string find_duplicate_name(zip_source_t* src) {
  ZipError error;
  zip_source_keep(src);
  ZipPtr za(zip_open_from_source(src, ZIP_RDONLY, error.get()));
  if (!za) {
    zip_source_free(src);
    return {};
  }
  std::unordered_set<std::string> seen;
  const zip_int64_t n = zip_get_num_entries(za.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(za.get(), static_cast<zip_uint64_t>(i), 0);
    if (name != nullptr && !seen.insert(name).second) return name;
  }
  return {};
}

ZipPtr open_archive(SourcePtr src, const std::string& display_name) {
  ZipError error;
  // CHECKCONS makes libzip compare local and central headers and insist the
  // archive ends where its directory says, which catches most damage early.
  ZipPtr za(zip_open_from_source(src.get(), ZIP_RDONLY | ZIP_CHECKCONS, error.get()));
  if (za) {
    src.release();  // the archive owns it now
    return za;
  }
  const int code = error.code();
  if (code == ZIP_ER_OPEN || code == ZIP_ER_NOENT) {
    fail(kNotFound, display_name + ": cannot open it" + libzip_says(error.message()),
         "check the path and the file's permissions");
  }
  if (code == ZIP_ER_EXISTS) {
    std::string name = find_duplicate_name(src.get());
    if (name.ends_with(".npy")) name.resize(name.size() - 4);
    fail(kCorrupt,
         (name.empty() ? display_name + ": two members have the same name"
                       : member_where(display_name, name) + ": key appears twice") +
             libzip_says(error.message()),
         kDuplicateFix);
  }
  fail(kCorrupt, display_name + ": not a valid zip archive" + libzip_says(error.message()),
       kRecreateFix);
}

// Reads a member of a size already checked against the limits. The buffer
// grows as data arrives, so a directory entry that lies about the size
// costs no more memory than the data that is really there. The .npy header
// is checked as soon as the first chunk is in: a member whose size its
// shape does not account for (a zip bomb behind a small array's header) is
// refused before the rest is inflated.
std::vector<uint8_t> read_member(zip_t* za, zip_uint64_t index, uint64_t size,
                                 const std::string& where, const NpzLimits& limits) {
  FilePtr file(zip_fopen_index(za, index, 0));
  if (!file) {
    fail(kCorrupt, where + ": cannot open the member" + libzip_says(zip_strerror(za)),
         kRecreateFix);
  }
  constexpr uint64_t kFirstChunk = 1 << 20;
  std::vector<uint8_t> bytes;
  uint64_t got = 0;
  while (got < size) {
    if (got == bytes.size()) {
      bytes.resize(std::min(size, std::max(kFirstChunk, 2 * got)));
    }
    const zip_int64_t n = zip_fread(file.get(), bytes.data() + got, bytes.size() - got);
    if (n < 0) {
      fail(kCorrupt,
           where + ": cannot read the member" + libzip_says(zip_file_strerror(file.get())),
           kRecreateFix);
    }
    if (n == 0) {
      fail(kCorrupt,
           where + ": member ends after " + std::to_string(got) + " of its " +
               std::to_string(size) + " bytes",
           kRecreateFix);
    }
    const bool first_chunk = got < kFirstChunk;
    got += static_cast<uint64_t>(n);
    if (first_chunk && got >= kFirstChunk && got < size) {
      // The header must lie within what has arrived; it is then read
      // against the member's whole size. (A smaller member is read whole
      // and its CRC checked first, the truer diagnosis for a flipped byte.)
      parse_npy_prefix(bytes.data(), got, where);
      parse_npy_header(bytes.data(), size, where, limits);
    }
  }
  // libzip verifies the CRC only once it reaches the end of the data.
  uint8_t extra = 0;
  const zip_int64_t n = zip_fread(file.get(), &extra, 1);
  if (n != 0) {
    fail(kCorrupt,
         where + (n < 0 ? ": cannot read the member" + libzip_says(zip_file_strerror(file.get()))
                        : ": member is longer than the " + std::to_string(size) +
                              " bytes its directory entry says"),
         kRecreateFix);
  }
  return bytes;
}

Tensor read_entry(zip_t* za, zip_uint64_t index, const std::string& display_name,
                  const NpzLimits& limits, std::unordered_set<std::string>& keys) {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(za, index, 0, &st) != 0 || (st.valid & ZIP_STAT_NAME) == 0 ||
      (st.valid & ZIP_STAT_SIZE) == 0) {
    fail(kCorrupt,
         display_name + ": member " + std::to_string(index) + " is unreadable" +
             libzip_says(zip_strerror(za)),
         kRecreateFix);
  }
  std::string key = st.name;
  if (!key.ends_with(".npy")) {
    fail(kCorrupt, display_name + ": member " + in_quotes(key) + " is not an .npy array",
         "keep only .npy members in the archive, as np.savez writes it");
  }
  key.resize(key.size() - 4);
  const std::string where = member_where(display_name, key);
  if (!keys.insert(key).second) {
    fail(kCorrupt, where + ": key appears twice", kDuplicateFix);
  }
  check_member_size(st.size, where, limits);
  Tensor t = tensor_from_npy(read_member(za, index, st.size, where, limits), where, limits);
  t.name = std::move(key);
  return t;
}

std::vector<Tensor> read_archive(SourcePtr src, const std::string& display_name,
                                 const NpzLimits& limits) {
  ZipPtr za = open_archive(std::move(src), display_name);
  const zip_int64_t n = zip_get_num_entries(za.get(), 0);
  if (n < 0) {
    fail(kCorrupt, display_name + ": cannot count its members", kRecreateFix);
  }
  const auto count = static_cast<uint64_t>(n);
  if (count > limits.max_members) {
    fail(kTooBig,
         display_name + ": archive has " + std::to_string(count) + " members; the limit is " +
             std::to_string(limits.max_members),
         kLimitFix);
  }
  uint64_t total = 0;
  for (uint64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(za.get(), i, 0, &st) == 0 && (st.valid & ZIP_STAT_SIZE) != 0) {
      total += std::min<uint64_t>(st.size, limits.max_total_bytes + 1);
    }
    if (total > limits.max_total_bytes) {
      fail(kTooBig,
           display_name + ": its arrays take more than " + std::to_string(limits.max_total_bytes) +
               " bytes uncompressed; the limit is " + std::to_string(limits.max_total_bytes),
           kLimitFix);
    }
  }
  std::vector<Tensor> tensors;
  tensors.reserve(count);
  std::unordered_set<std::string> keys;
  for (uint64_t i = 0; i < count; ++i) {
    tensors.push_back(read_entry(za.get(), i, display_name, limits, keys));
  }
  return tensors;
}

[[noreturn]] void fail_empty(const std::string& display_name) {
  fail(kCorrupt, display_name + ": file is empty, not a zip archive", kRecreateFix);
}

// --- writing ---

void validate(const Tensor& t) {
  const DTypeInfo* info = find_dtype(t.dtype);
  if (info == nullptr && t.dtype != DType::kBFloat16) {
    throw std::invalid_argument("tensor '" + t.name + "' has dtype " + dtype_name(t.dtype) +
                                ", which .npy can't hold");
  }
  const std::optional<uint64_t> nbytes = checked_nbytes(t.shape, dtype_size(t.dtype));
  if (!nbytes || *nbytes != t.data.size()) {
    throw std::invalid_argument("tensor '" + t.name + "' has " + std::to_string(t.data.size()) +
                                " bytes of data, which does not match shape " +
                                shape_string(t.shape));
  }
}

void append_le(std::string& out, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    out += static_cast<char>((v >> (8 * i)) & 0xff);
  }
}

// Everything np.save writes before the data, byte for byte.
std::string npy_header(const Tensor& t) {
  validate(t);
  // Appended piece by piece: GCC 12 warns (-Wrestrict, falsely) about
  // "'" + std::string(...).
  std::string dict = "{'descr': ";
  if (t.dtype == DType::kBFloat16) {
    dict += kBFloat16Descr;
  } else {
    dict.append("'").append(find_dtype(t.dtype)->descr).append("'");
  }
  dict.append(", 'fortran_order': False, 'shape': ").append(shape_string(t.shape)).append(", }");
  if (!t.shape.empty()) {
    dict.append(kGrowthAxisMaxDigits - std::to_string(t.shape[0]).size(), ' ');
  }
  const size_t text_len = dict.size() + 1;  // + '\n'
  // Like numpy, format 1.0 unless the header outgrows its 16-bit length.
  int major = 1;
  size_t prefix = kNpyMagicLen + 2 + 2;
  size_t pad = kNpyAlign - (prefix + text_len) % kNpyAlign;
  if (text_len + pad > std::numeric_limits<uint16_t>::max()) {
    major = 2;
    prefix = kNpyMagicLen + 2 + 4;
    pad = kNpyAlign - (prefix + text_len) % kNpyAlign;
    if (text_len + pad > std::numeric_limits<uint32_t>::max()) {
      throw std::invalid_argument("tensor '" + t.name + "' has too many dimensions for .npy");
    }
  }
  std::string header(kNpyMagic, kNpyMagicLen);
  header += static_cast<char>(major);
  header += '\0';
  append_le(header, text_len + pad, major == 1 ? 2 : 4);
  header += dict;
  header.append(pad, ' ');
  header += '\n';
  return header;
}

// The pieces of one member, kept alive until zip_close reads them.
struct Member {
  std::string header;
  std::array<zip_buffer_fragment_t, 2> fragments;
};

void add_member(zip_t* za, const Tensor& t, Member& member, bool compress) {
  // Fragments let libzip read the tensor's data in place instead of a copy.
  member.fragments[0] = {reinterpret_cast<zip_uint8_t*>(member.header.data()),
                         member.header.size()};
  member.fragments[1] = {const_cast<zip_uint8_t*>(t.data.data()), t.data.size()};
  const zip_uint64_t count = t.data.empty() ? 1 : 2;
  zip_source_t* src = zip_source_buffer_fragment(za, member.fragments.data(), count, 0);
  if (src == nullptr) throw std::bad_alloc();
  zip_io::add_fixed_member(za, t.name + ".npy", src, compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0,
                           "an npz");
}

}  // namespace

// --- public API ---

std::vector<Tensor> read_npz(const fs::path& path, const NpzLimits& limits) {
  const std::string display_name = path.string();
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) {
    fail(kNotFound, display_name + ": no such file",
         "check the path; npz files are written by np.savez");
  }
  if (fs::is_directory(status)) {
    fail(kNotFound, display_name + ": is a directory, not an npz file", "name the npz file itself");
  }
  if (fs::is_regular_file(status) && fs::file_size(path, ec) == 0 && !ec) {
    fail_empty(display_name);
  }
  ZipError error;
  SourcePtr src(zip_source_file_create(path.c_str(), 0, 0, error.get()));
  if (!src) {
    fail(kNotFound, display_name + ": cannot open it" + libzip_says(error.message()),
         "check the path and the file's permissions");
  }
  return read_archive(std::move(src), display_name, limits);
}

std::vector<Tensor> read_npz_bytes(const void* data, size_t size, const std::string& display_name,
                                   const NpzLimits& limits) {
  if (size == 0) fail_empty(display_name);
  ZipError error;
  SourcePtr src(zip_source_buffer_create(data, size, 0, error.get()));
  if (!src) throw std::bad_alloc();
  return read_archive(std::move(src), display_name, limits);
}

Tensor parse_npy(const void* data, size_t size, const std::string& display_name,
                 const NpzLimits& limits) {
  check_member_size(size, display_name, limits);
  const auto* p = static_cast<const uint8_t*>(data);
  NpyHeader header = parse_npy_header(p, size, display_name, limits);
  Tensor t;
  t.dtype = header.dtype;
  t.shape = std::move(header.shape);
  t.data.assign(p + header.data_offset, p + size);
  return t;
}

std::vector<uint8_t> encode_npy(const Tensor& t) {
  const std::string header = npy_header(t);
  std::vector<uint8_t> out(header.begin(), header.end());
  out.insert(out.end(), t.data.begin(), t.data.end());
  return out;
}

std::vector<uint8_t> encode_npz(const std::vector<Tensor>& tensors, bool compress) {
  if (tensors.empty()) {
    // libzip deletes an archive with no members instead of writing one; this
    // is the end-of-central-directory record that numpy writes for it.
    std::vector<uint8_t> empty(22, 0);
    empty[0] = 'P';
    empty[1] = 'K';
    empty[2] = 5;
    empty[3] = 6;
    return empty;
  }
  // Declared first so libzip's sources never outlive what they point to.
  std::vector<Member> members(tensors.size());
  return zip_io::encode_archive("an npz", [&](zip_t* za) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      members[i].header = npy_header(tensors[i]);
      add_member(za, tensors[i], members[i], compress);
    }
  });
}

void write_npz(const fs::path& path, const std::vector<Tensor>& tensors, bool compress) {
  const std::vector<uint8_t> bytes = encode_npz(tensors, compress);
  write_file_atomic(path, bytes.data(), bytes.size(), OutputKind::kZip);
}

}  // namespace eulernpu::host
