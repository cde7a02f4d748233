#include "formats/npz.hpp"

#include <gtest/gtest.h>
#include <zip.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "expect_user_error.hpp"
#include "scratch_dir.hpp"

namespace eulernpu::host {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

constexpr char kNotFound[] = "file not found";
constexpr char kCorrupt[] = "npz file is corrupt";
constexpr char kMalformed[] = "npy array is malformed";
constexpr char kUnsupported[] = "unsupported npy dtype";
constexpr char kTooBig[] = "npz file exceeds a size limit";

const DType kAllDTypes[] = {
    DType::kFloat32, DType::kFloat16, DType::kFloat64, DType::kInt8, DType::kUInt8,
    DType::kInt16,   DType::kInt32,   DType::kInt64,   DType::kBool, DType::kBFloat16,
};

// A tensor whose bytes differ from element to element and dtype to dtype.
Tensor make_tensor(std::string name, DType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data.resize(t.element_count() * dtype_size(dtype));
  for (size_t i = 0; i < t.data.size(); ++i) {
    t.data[i] = dtype == DType::kBool ? static_cast<uint8_t>(i % 3 == 0)
                                      : static_cast<uint8_t>(i * 37 + static_cast<size_t>(dtype));
  }
  return t;
}

void expect_same(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.dtype, b.dtype) << dtype_name(a.dtype) << " vs " << dtype_name(b.dtype);
  EXPECT_EQ(a.shape, b.shape);
  EXPECT_EQ(a.data, b.data);
}

using test::expect_user_error;

Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

// An .npy file with a hand-written header dict and no padding.
Bytes npy(const std::string& dict, const Bytes& data, int major = 1) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const size_t len_bytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < len_bytes; ++i) {
    out += static_cast<char>((dict.size() >> (8 * i)) & 0xff);
  }
  out += dict;
  Bytes bytes = to_bytes(out);
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::string dict(const std::string& descr, const std::string& shape,
                 const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
}

// A zip with arbitrary members, through libzip directly, for archives our
// writer would refuse to produce.
Bytes make_zip(const std::vector<std::pair<std::string, Bytes>>& members, bool compress = false) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* out = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_t* za = zip_open_from_source(out, ZIP_CREATE | ZIP_TRUNCATE, &error);
  zip_error_fini(&error);
  if (za == nullptr) throw std::runtime_error("zip_open_from_source");
  zip_source_keep(out);
  for (const auto& [name, data] : members) {
    zip_source_t* src = zip_source_buffer(za, data.data(), data.size(), 0);
    const zip_int64_t i = zip_file_add(za, name.c_str(), src, 0);
    if (i < 0) throw std::runtime_error("zip_file_add");
    zip_set_file_compression(za, static_cast<zip_uint64_t>(i),
                             compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
  }
  if (zip_close(za) != 0) throw std::runtime_error("zip_close");
  zip_stat_t st;
  zip_stat_init(&st);
  zip_source_stat(out, &st);
  Bytes bytes(st.size);
  zip_source_open(out);
  zip_source_read(out, bytes.data(), bytes.size());
  zip_source_close(out);
  zip_source_free(out);
  return bytes;
}

// Replaces every occurrence of `from` by `to` (same length).
void patch(Bytes& bytes, const std::string& from, const std::string& to) {
  ASSERT_EQ(from.size(), to.size());
  int hits = 0;
  for (auto it = bytes.begin();
       (it = std::search(it, bytes.end(), from.begin(), from.end())) != bytes.end(); ++hits) {
    std::copy(to.begin(), to.end(), it);
  }
  ASSERT_GT(hits, 0);
}

uint32_t le(const Bytes& b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = n; i > 0; --i) v = (v << 8) | b.at(at + i - 1);
  return v;
}

struct LocalHeader {
  size_t data_offset;
  size_t comp_size;
  uint32_t method, flags, time, date, extra_len;
  std::string name;
};

// The local file headers of an archive, in order.
std::vector<LocalHeader> local_headers(const Bytes& zip) {
  std::vector<LocalHeader> headers;
  size_t at = 0;
  while (at + 30 <= zip.size() && le(zip, at, 4) == 0x04034b50) {
    LocalHeader h;
    h.flags = le(zip, at + 6, 2);
    h.method = le(zip, at + 8, 2);
    h.time = le(zip, at + 10, 2);
    h.date = le(zip, at + 12, 2);
    h.comp_size = le(zip, at + 18, 4);
    const size_t name_len = le(zip, at + 26, 2);
    h.extra_len = le(zip, at + 28, 2);
    h.name.assign(zip.begin() + static_cast<ptrdiff_t>(at + 30),
                  zip.begin() + static_cast<ptrdiff_t>(at + 30 + name_len));
    h.data_offset = at + 30 + name_len + h.extra_len;
    at = h.data_offset + h.comp_size;
    headers.push_back(h);
  }
  return headers;
}

using test::list_dir;
using test::test_dir;

std::vector<Tensor> decode(const Bytes& zip, const NpzLimits& limits = {}) {
  return read_npz_bytes(zip.data(), zip.size(), "test.npz", limits);
}

// --- round trips ---

const std::vector<std::vector<int64_t>> kShapes = {
    {}, {0}, {3, 0}, {5}, {2, 3}, {2, 3, 1, 4},
};

TEST(NpzTest, RoundTripsEveryDTypeAndShapeStoredAndDeflated) {
  for (bool compress : {false, true}) {
    for (DType dtype : kAllDTypes) {
      for (const auto& shape : kShapes) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape_string(shape) +
                     (compress ? " deflated" : ""));
        const Tensor t = make_tensor("t", dtype, shape);
        const std::vector<Tensor> back = decode(encode_npz({t}, compress));
        ASSERT_EQ(back.size(), 1u);
        expect_same(back[0], t);
      }
    }
  }
}

TEST(NpzTest, RoundTripsEveryDTypeAsNpy) {
  for (DType dtype : kAllDTypes) {
    for (const auto& shape : kShapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + shape_string(shape));
      const Tensor t = make_tensor("", dtype, shape);
      const Bytes bytes = encode_npy(t);
      EXPECT_EQ((bytes.size() - t.data.size()) % 64, 0u);
      expect_same(parse_npy(bytes.data(), bytes.size(), "t.npy"), t);
    }
  }
}

TEST(NpzTest, ManyTensorsKeepTheirOrderAndNames) {
  std::vector<Tensor> tensors = {
      make_tensor("zeta", DType::kFloat32, {2, 2}),
      make_tensor("alpha", DType::kInt64, {}),
      make_tensor("layer.0/weight", DType::kFloat16, {3, 1}),
      make_tensor("w\xc3\xa9ight", DType::kBool, {4}),
  };
  for (bool compress : {false, true}) {
    const std::vector<Tensor> back = decode(encode_npz(tensors, compress));
    ASSERT_EQ(back.size(), tensors.size());
    for (size_t i = 0; i < back.size(); ++i) expect_same(back[i], tensors[i]);
  }
}

TEST(NpzTest, EmptyArchiveRoundTrips) {
  const Bytes zip = encode_npz({});
  EXPECT_EQ(zip.size(), 22u);  // just the end of central directory record
  EXPECT_TRUE(decode(zip).empty());
}

TEST(NpzTest, WritesAndReadsFiles) {
  const fs::path dir = test_dir();
  const std::vector<Tensor> tensors = {
      make_tensor("a", DType::kFloat32, {3, 4}),
      make_tensor("b", DType::kUInt8, {0}),
  };
  for (bool compress : {false, true}) {
    const fs::path path = dir / (compress ? "c.npz" : "s.npz");
    write_npz(path, tensors, compress);
    const std::vector<Tensor> back = read_npz(path);
    ASSERT_EQ(back.size(), 2u);
    expect_same(back[0], tensors[0]);
    expect_same(back[1], tensors[1]);
  }
  EXPECT_EQ(list_dir(dir), (std::set<std::string>{"c.npz", "s.npz"}));
}

// --- what we write ---

TEST(NpzTest, NpyHeaderIsByteForByteNumpys) {
  // np.save(f, np.zeros((1, 4), '<f4')) and np.save(f, np.float64(1)).
  const std::string dict_1x4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }";
  const std::string dict_scalar = "{'descr': '<f8', 'fortran_order': False, 'shape': (), }";
  for (const auto& [t, text] : {std::pair{make_tensor("", DType::kFloat32, {1, 4}), dict_1x4},
                                std::pair{make_tensor("", DType::kFloat64, {}), dict_scalar}}) {
    const Bytes bytes = encode_npy(t);
    ASSERT_EQ(bytes.size(), 128 + t.data.size());
    std::string expected("\x93NUMPY\x01\x00\x76\x00", 10);
    expected += text;
    expected.append(127 - expected.size(), ' ');
    expected += '\n';
    EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 128), expected);
  }
}

TEST(NpzTest, EncodingIsDeterministic) {
  const std::vector<Tensor> tensors = {
      make_tensor("x", DType::kFloat32, {64, 64}),
      make_tensor("y", DType::kInt8, {}),
  };
  const std::vector<Tensor> copy = tensors;  // other buffers, same content
  for (bool compress : {false, true}) {
    const Bytes first = encode_npz(tensors, compress);
    EXPECT_EQ(encode_npz(tensors, compress), first);
    EXPECT_EQ(encode_npz(copy, compress), first);
  }
}

TEST(NpzTest, MembersHaveZipEpochTimeNoExtraFieldsAndTheAskedMethod) {
  const std::vector<Tensor> tensors = {
      make_tensor("x", DType::kFloat32, {64, 64}),
      make_tensor("w\xc3\xa9ight", DType::kInt8, {}),
  };
  for (bool compress : {false, true}) {
    SCOPED_TRACE(compress ? "deflated" : "stored");
    const Bytes zip = encode_npz(tensors, compress);
    const std::vector<LocalHeader> headers = local_headers(zip);
    ASSERT_EQ(headers.size(), 2u);
    EXPECT_EQ(headers[0].name, "x.npy");
    EXPECT_EQ(headers[1].name, "w\xc3\xa9ight.npy");
    for (const LocalHeader& h : headers) {
      EXPECT_EQ(h.method, compress ? 8u : 0u);
      EXPECT_EQ(h.time, 0u);
      EXPECT_EQ(h.date, (1u << 5) | 1u);  // 1980-01-01
      EXPECT_EQ(h.extra_len, 0u);
      EXPECT_EQ(h.flags & 8u, 0u);  // sizes up front, no data descriptor
    }
    const size_t raw = encode_npy(tensors[0]).size();
    if (compress) {
      EXPECT_LT(headers[0].comp_size, raw);
    } else {
      EXPECT_EQ(headers[0].comp_size, raw);
    }
  }
}

TEST(NpzTest, EncodeRejectsInconsistentTensors) {
  Tensor short_data = make_tensor("a", DType::kFloat32, {2, 2});
  short_data.data.pop_back();
  Tensor undefined = make_tensor("b", DType::kUInt8, {2});
  undefined.dtype = DType::kUndefined;
  Tensor negative = make_tensor("c", DType::kUInt8, {});
  negative.shape = {-1};
  for (const Tensor& t : {short_data, undefined, negative}) {
    SCOPED_TRACE(t.name);
    EXPECT_THROW(encode_npy(t), std::invalid_argument);
    EXPECT_THROW(encode_npz({t}), std::invalid_argument);
  }
  const Tensor a = make_tensor("a", DType::kUInt8, {1});
  EXPECT_THROW(encode_npz({a, a}), std::invalid_argument);
}

// --- what we accept ---

TEST(NpzTest, ParseNpyAcceptsNumpySpellings) {
  struct Case {
    std::string descr;
    DType dtype;
  };
  const Case cases[] = {
      {"<f4", DType::kFloat32}, {"=f4", DType::kFloat32}, {"<f2", DType::kFloat16},
      {"<f8", DType::kFloat64}, {"|i1", DType::kInt8},    {"<i1", DType::kInt8},
      {"|u1", DType::kUInt8},   {"<u1", DType::kUInt8},   {"|b1", DType::kBool},
      {"<b1", DType::kBool},    {"<i2", DType::kInt16},   {"<i4", DType::kInt32},
      {"=i8", DType::kInt64},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.descr);
    const Bytes data(2 * dtype_size(c.dtype), 7);
    const Bytes bytes = npy(dict(c.descr, "(2,)"), data);
    const Tensor t = parse_npy(bytes.data(), bytes.size(), "t.npy");
    EXPECT_EQ(t.dtype, c.dtype);
    EXPECT_EQ(t.shape, (std::vector<int64_t>{2}));
    EXPECT_EQ(t.data, data);
  }
}

// numpy has no bfloat16; we write its bits as the one-field structured
// dtype np.dtype([('bfloat16', '<u2')]) and read that back, however quoted.
TEST(NpzTest, BFloat16IsAStructuredUInt16Field) {
  const Tensor t = make_tensor("", DType::kBFloat16, {2});
  const Bytes bytes = encode_npy(t);
  const std::string text(bytes.begin(), bytes.end());
  EXPECT_NE(text.find("{'descr': [('bfloat16', '<u2')], 'fortran_order': False"),
            std::string::npos);
  for (const std::string descr : {"[('bfloat16', '<u2')]", "[(\"bfloat16\",\"<u2\")]"}) {
    SCOPED_TRACE(descr);
    const Bytes in =
        npy("{'descr': " + descr + ", 'fortran_order': False, 'shape': (2,), }", t.data);
    const Tensor back = parse_npy(in.data(), in.size(), "t.npy");
    EXPECT_EQ(back.dtype, DType::kBFloat16);
    EXPECT_EQ(back.data, t.data);
  }
  for (const std::string descr :
       {"[('bfloat16', '>u2')]", "[('bf16', '<u2')]", "[('bfloat16', '<u2'), ('x', '<u2')]"}) {
    SCOPED_TRACE(descr);
    const Bytes in =
        npy("{'descr': " + descr + ", 'fortran_order': False, 'shape': (1,), }", t.data);
    expect_user_error([&] { parse_npy(in.data(), in.size(), "t.npy"); }, kUnsupported);
  }
}

TEST(NpzTest, ParseNpyAcceptsOtherHeaderForms) {
  struct Case {
    std::string name;
    Bytes bytes;
    std::vector<int64_t> shape;
  };
  const Bytes six(6 * 4, 1);
  const Case cases[] = {
      {"format 2.0", npy(dict("<f4", "(2, 3)"), six, 2), {2, 3}},
      {"format 3.0", npy(dict("<f4", "(2, 3)"), six, 3), {2, 3}},
      {"python 2 longs", npy(dict("<f4", "(2L, 3L)"), six), {2, 3}},
      {"other key order, double quotes, no trailing comma",
       npy("{\"shape\": (6,), \"fortran_order\": False, \"descr\": \"<f4\"}", six),
       {6}},
      {"tabs and newlines",
       npy("{\t'descr':'<f4',\n'fortran_order':False,"
           "'shape':( 6 , ),}\n\n   ",
           six),
       {6}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Tensor t = parse_npy(c.bytes.data(), c.bytes.size(), "t.npy");
    EXPECT_EQ(t.dtype, DType::kFloat32);
    EXPECT_EQ(t.shape, c.shape);
    EXPECT_EQ(t.data, six);
  }
}

TEST(NpzTest, ReadsArchivesWrittenByOtherZipWriters) {
  // Default libzip settings: Unix attributes, deflate at its default level.
  const Tensor t = make_tensor("w", DType::kInt32, {10});
  for (bool compress : {false, true}) {
    const std::vector<Tensor> back = decode(make_zip({{"w.npy", encode_npy(t)}}, compress));
    ASSERT_EQ(back.size(), 1u);
    expect_same(back[0], t);
  }
}

// --- bad .npy ---

TEST(NpzTest, ParseNpyRejectsBadInput) {
  struct Case {
    std::string name;
    Bytes bytes;
    const char* title;
  };
  const Bytes f4x2(8, 0);
  Bytes v1_len_beyond = npy(dict("<f4", "(2,)"), f4x2);
  v1_len_beyond[8] = 0xff;
  v1_len_beyond[9] = 0xff;
  Bytes v2_len_beyond = npy(dict("<f4", "(2,)"), f4x2, 2);
  for (size_t i = 8; i < 12; ++i) v2_len_beyond[i] = 0xff;
  Bytes bad_version = npy(dict("<f4", "(2,)"), f4x2);
  bad_version[6] = 4;
  Bytes minor_version = npy(dict("<f4", "(2,)"), f4x2);
  minor_version[7] = 1;
  std::string rank33 = "(";
  for (int i = 0; i < 33; ++i) rank33 += "1, ";
  rank33 += ")";

  const Case cases[] = {
      {"empty", {}, kMalformed},
      {"not npy", to_bytes("PK\x03\x04 this is a zip, not an npy"), kMalformed},
      {"magic only", to_bytes(std::string("\x93NUMPY\x01\x00", 8)), kMalformed},
      {"bad magic", to_bytes("\x93NUMPZ\x01\x00\x00\x00"), kMalformed},
      {"format 4.0", bad_version, kMalformed},
      {"format 1.1", minor_version, kMalformed},
      {"1.0 header length beyond data", v1_len_beyond, kMalformed},
      {"2.0 header length beyond data", v2_len_beyond, kMalformed},
      {"not a dict", npy("[1, 2]", {}), kMalformed},
      {"empty dict", npy("{}", {}), kMalformed},
      {"no shape", npy("{'descr': '<f4', 'fortran_order': False}", f4x2), kMalformed},
      {"no descr", npy("{'fortran_order': False, 'shape': (2,)}", f4x2), kMalformed},
      {"no fortran_order", npy("{'descr': '<f4', 'shape': (2,)}", f4x2), kMalformed},
      {"unknown key",
       npy("{'descr': '<f4', 'fortran_order': False, "
           "'shape': (2,), 'x': 1}",
           f4x2),
       kMalformed},
      {"repeated key",
       npy("{'descr': '<f4', 'descr': '<f4', "
           "'fortran_order': False, 'shape': (2,)}",
           f4x2),
       kMalformed},
      {"unterminated string", npy("{'descr: '<f4'", f4x2), kMalformed},
      {"unclosed dict",
       npy("{'descr': '<f4', 'fortran_order': False, "
           "'shape': (2,)",
           f4x2),
       kMalformed},
      {"text after dict", npy(dict("<f4", "(2,)") + "x", f4x2), kMalformed},
      {"shape is an int", npy(dict("<f4", "(2)"), f4x2), kMalformed},
      {"shape is a list", npy(dict("<f4", "[2]"), f4x2), kMalformed},
      {"negative dimension", npy(dict("<f4", "(-2,)"), f4x2), kMalformed},
      {"float dimension", npy(dict("<f4", "(2.0,)"), f4x2), kMalformed},
      {"dimension beyond int64", npy(dict("<f4", "(99999999999999999999,)"), f4x2), kMalformed},
      {"fortran_order not a bool", npy(dict("<f4", "(2,)", "0"), f4x2), kMalformed},
      {"absurd shape (2**62, 4)", npy(dict("<f4", "(4611686018427387904, 4)"), f4x2), kMalformed},
      {"shape product overflows", npy(dict("|u1", "(4294967296, 4294967296)"), f4x2), kMalformed},
      {"huge shape, no data", npy(dict("<f8", "(1000000000000,)"), {}), kMalformed},
      {"short data", npy(dict("<f4", "(3,)"), f4x2), kMalformed},
      {"trailing bytes", npy(dict("<f4", "(1,)"), f4x2), kMalformed},
      {"scalar without data", npy(dict("<f4", "()"), {}), kMalformed},
      {"big-endian float32", npy(dict(">f4", "(2,)"), f4x2), kUnsupported},
      {"big-endian int64", npy(dict(">i8", "(1,)"), f4x2), kUnsupported},
      {"no byte order on a wide type", npy(dict("|f4", "(2,)"), f4x2), kUnsupported},
      {"object", npy(dict("|O", "(1,)"), f4x2), kUnsupported},
      {"unicode string", npy(dict("<U2", "(1,)"), f4x2), kUnsupported},
      {"byte string", npy(dict("|S8", "(1,)"), f4x2), kUnsupported},
      {"complex", npy(dict("<c8", "(1,)"), f4x2), kUnsupported},
      {"complex64", npy(dict("<c8", "(2,)"), f4x2), kUnsupported},
      {"datetime", npy(dict("<M8[ns]", "(1,)"), f4x2), kUnsupported},
      {"structured",
       npy("{'descr': [('a', '<f4'), ('b', '<f4')], "
           "'fortran_order': False, 'shape': (1,), }",
           f4x2),
       kUnsupported},
      {"fortran order", npy(dict("<f4", "(2, 1)", "True"), f4x2), kUnsupported},
      {"rank beyond the limit", npy(dict("<f4", rank33), Bytes(4, 0)), kTooBig},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const UserError e =
        expect_user_error([&] { parse_npy(c.bytes.data(), c.bytes.size(), "bad.npy"); }, c.title);
    EXPECT_NE(e.where().find("bad.npy"), std::string::npos) << e.where();
  }
}

TEST(NpzTest, ParseNpyEnforcesSizeLimit) {
  const Bytes bytes = encode_npy(make_tensor("", DType::kFloat32, {100}));
  NpzLimits limits;
  limits.max_member_bytes = 100;
  expect_user_error([&] { parse_npy(bytes.data(), bytes.size(), "t.npy", limits); }, kTooBig);
}

// --- bad .npz ---

TEST(NpzTest, MissingFileIsNotFound) {
  const fs::path path = test_dir() / "missing.npz";
  const UserError e = expect_user_error([&] { read_npz(path); }, kNotFound);
  EXPECT_NE(e.where().find("missing.npz"), std::string::npos);
  expect_user_error([&] { read_npz(path.parent_path()); }, kNotFound);
}

TEST(NpzTest, EmptyOrNonZipFileIsCorrupt) {
  const fs::path dir = test_dir();
  std::ofstream(dir / "empty.npz").close();
  std::ofstream(dir / "text.npz") << "this is not a zip archive at all\n";
  expect_user_error([&] { read_npz(dir / "empty.npz"); }, kCorrupt);
  const UserError e = expect_user_error([&] { read_npz(dir / "text.npz"); }, kCorrupt);
  EXPECT_NE(e.where().find("text.npz"), std::string::npos);
  EXPECT_NE(e.where().find("libzip: "), std::string::npos) << e.where();
  expect_user_error([&] { decode({}); }, kCorrupt);
  // A lone .npy is not an .npz either.
  expect_user_error([&] { decode(encode_npy(make_tensor("", DType::kInt8, {3}))); }, kCorrupt);
}

TEST(NpzTest, TruncatedArchiveIsCorruptAtEveryLength) {
  const std::vector<Tensor> tensors = {
      make_tensor("a", DType::kFloat32, {5, 7}),
      make_tensor("b", DType::kInt64, {}),
  };
  for (bool compress : {false, true}) {
    const Bytes zip = encode_npz(tensors, compress);
    for (size_t len = 1; len < zip.size(); ++len) {
      SCOPED_TRACE(std::to_string(len) + (compress ? " deflated" : " stored"));
      const Bytes cut(zip.begin(), zip.begin() + static_cast<ptrdiff_t>(len));
      expect_user_error([&] { decode(cut); }, kCorrupt);
    }
  }
}

TEST(NpzTest, FlippedDataByteIsCorruptOrHarmless) {
  const Tensor t = make_tensor("a", DType::kFloat32, {16, 16});
  for (bool compress : {false, true}) {
    const Bytes zip = encode_npz({t}, compress);
    const LocalHeader h = local_headers(zip).at(0);
    size_t errors = 0;
    for (size_t i = 0; i < h.comp_size; ++i) {
      SCOPED_TRACE(std::to_string(i) + (compress ? " deflated" : " stored"));
      Bytes bad = zip;
      bad[h.data_offset + i] ^= 0xff;
      try {
        // Flipping the last byte of a deflate stream can hit only its
        // end-of-stream bits: the data still inflates whole and passes the
        // CRC, and then it must be exactly the original.
        const std::vector<Tensor> back = decode(bad);
        ASSERT_EQ(back.size(), 1u);
        expect_same(back[0], t);
      } catch (const UserError& e) {
        ++errors;
        EXPECT_EQ(e.title(), kCorrupt);
        EXPECT_NE(e.where().find("'a'"), std::string::npos) << e.where();
      }
    }
    EXPECT_GE(errors + (compress ? 1 : 0), h.comp_size);
  }
}

TEST(NpzTest, MemberThatIsNotNpyIsCorrupt) {
  const UserError e = expect_user_error(
      [&] {
        decode(make_zip({{"notes.txt", to_bytes("hello")}}));
      },
      kCorrupt);
  EXPECT_NE(e.where().find("notes.txt"), std::string::npos);
}

TEST(NpzTest, DuplicateKeyIsCorrupt) {
  Bytes zip =
      encode_npz({make_tensor("k1", DType::kUInt8, {2}), make_tensor("k2", DType::kUInt8, {3})});
  patch(zip, "k2.npy", "k1.npy");
  const UserError e = expect_user_error([&] { decode(zip); }, kCorrupt);
  EXPECT_NE(e.where().find("'k1'"), std::string::npos) << e.where();
}

TEST(NpzTest, BadNpyInsideNpzNamesFileAndKey) {
  struct Case {
    std::string name;
    Bytes npy;
    const char* title;
  };
  const Case cases[] = {
      {"big-endian", npy(dict(">f4", "(2,)"), Bytes(8, 0)), kUnsupported},
      {"trailing bytes", npy(dict("<f4", "(2,)"), Bytes(9, 0)), kMalformed},
      {"empty member", {}, kMalformed},
  };
  for (bool compress : {false, true}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(c.name);
      const Bytes zip = make_zip({{"w.npy", c.npy}}, compress);
      const UserError e =
          expect_user_error([&] { read_npz_bytes(zip.data(), zip.size(), "model.npz"); }, c.title);
      EXPECT_NE(e.where().find("model.npz"), std::string::npos) << e.where();
      EXPECT_NE(e.where().find("'w'"), std::string::npos) << e.where();
    }
  }
}

TEST(NpzTest, ArchiveLimitsAreEnforced) {
  const Bytes zip = encode_npz(
      {make_tensor("a", DType::kFloat32, {100}), make_tensor("b", DType::kFloat32, {1})}, true);
  NpzLimits few_members;
  few_members.max_members = 1;
  expect_user_error([&] { decode(zip, few_members); }, kTooBig);
  NpzLimits small_members;
  small_members.max_member_bytes = 300;  // a is 528 bytes, b 132
  const UserError e = expect_user_error([&] { decode(zip, small_members); }, kTooBig);
  EXPECT_NE(e.where().find("'a'"), std::string::npos) << e.where();
  NpzLimits low_rank;
  low_rank.max_rank = 0;
  expect_user_error([&] { decode(zip, low_rank); }, kTooBig);
}

}  // namespace
}  // namespace eulernpu::host
