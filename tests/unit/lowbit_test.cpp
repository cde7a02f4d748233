// The low-precision element types: eulernpu/sdk/lowbit.hpp's codecs, and
// the host's TensorProto packing and .npz storage of them.
#include "eulernpu/sdk/lowbit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "eulernpu/sdk/graph.hpp"
#include "formats/npz.hpp"
#include "ir/onnx_convert.hpp"

namespace eulernpu {
namespace {

namespace lb = sdk::lowbit;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr int32_t kFloatTypes[] = {ENP_DTYPE_FLOAT8E4M3FN, ENP_DTYPE_FLOAT8E4M3FNUZ,
                                   ENP_DTYPE_FLOAT8E5M2, ENP_DTYPE_FLOAT8E5M2FNUZ,
                                   ENP_DTYPE_FLOAT4E2M1};

// Every code that is a number encodes back to itself, saturating or not.
TEST(LowbitTest, EveryFiniteCodeRoundTrips) {
  for (int32_t d : kFloatTypes) {
    const lb::FloatFormat f = *lb::float_format(d);
    for (unsigned code = 0; code < (1u << f.width); ++code) {
      const double v = lb::decode_float(f, static_cast<uint8_t>(code));
      if (std::isnan(v) || std::isinf(v)) continue;
      for (bool saturate : {true, false}) {
        SCOPED_TRACE(std::string(sdk::dtype_name(d)) + " code " + std::to_string(code));
        EXPECT_EQ(lb::encode_float(f, v, saturate), code);
      }
    }
  }
}

struct EncodeCase {
  int32_t dtype;
  double x;
  bool saturate;
  uint8_t code;
};

// From ONNX's conformance data (test_cast_*FLOAT8*, *FLOAT4E2M1*) and the
// format definitions.
TEST(LowbitTest, EncodesLikeTheOnnxReference) {
  const EncodeCase cases[] = {
      {ENP_DTYPE_FLOAT8E4M3FN, 0.4789254665374756, true, 0x2f},
      {ENP_DTYPE_FLOAT8E4M3FN, 1e6, true, 0x7e},
      {ENP_DTYPE_FLOAT8E4M3FN, 1e6, false, 0x7f},
      {ENP_DTYPE_FLOAT8E4M3FN, -1e6, false, 0xff},
      {ENP_DTYPE_FLOAT8E4M3FN, -kInf, true, 0xfe},
      {ENP_DTYPE_FLOAT8E4M3FN, kNaN, true, 0x7f},
      {ENP_DTYPE_FLOAT8E4M3FN, -1e-7, true, 0x80},
      {ENP_DTYPE_FLOAT8E4M3FN, 463.0, false, 0x7e},  // rounds down to 448
      {ENP_DTYPE_FLOAT8E4M3FN, 464.0, false, 0x7e},  // tie: to even 448, not 480
      {ENP_DTYPE_FLOAT8E4M3FN, 465.0, false, 0x7f},  // nearer 480: overflow, NaN
      {ENP_DTYPE_FLOAT8E4M3FNUZ, kNaN, true, 0x80},
      {ENP_DTYPE_FLOAT8E4M3FNUZ, -1e-7, true, 0x00},
      {ENP_DTYPE_FLOAT8E4M3FNUZ, kInf, true, 0x7f},
      {ENP_DTYPE_FLOAT8E4M3FNUZ, -kInf, false, 0x80},
      {ENP_DTYPE_FLOAT8E5M2, kNaN, true, 0x7e},
      {ENP_DTYPE_FLOAT8E5M2, kInf, true, 0x7b},
      {ENP_DTYPE_FLOAT8E5M2, kInf, false, 0x7c},
      {ENP_DTYPE_FLOAT8E5M2, -1e6, false, 0xfc},
      {ENP_DTYPE_FLOAT8E5M2FNUZ, 0.4789254665374756, true, 0x3c},
      {ENP_DTYPE_FLOAT4E2M1, 0.25, true, 0x0},  // tie to even 0
      {ENP_DTYPE_FLOAT4E2M1, -3.5, true, 0xe},  // tie to even 4
      {ENP_DTYPE_FLOAT4E2M1, 1e6, false, 0x7},  // float4 always saturates
      {ENP_DTYPE_FLOAT4E2M1, kNaN, true, 0x8},
      {ENP_DTYPE_FLOAT4E2M1, -0.0, true, 0x8},
  };
  for (const EncodeCase& c : cases) {
    SCOPED_TRACE(std::string(sdk::dtype_name(c.dtype)) + " " + std::to_string(c.x));
    EXPECT_EQ(lb::encode_float(*lb::float_format(c.dtype), c.x, c.saturate), c.code);
  }
}

TEST(LowbitTest, E8M0RoundsAsOnnx) {
  using R = lb::E8M0Rounding;
  EXPECT_EQ(lb::encode_e8m0(0.0f, true, R::kUp), 0x00);
  EXPECT_EQ(lb::encode_e8m0(0.124f, true, R::kUp), 0x7c);
  EXPECT_EQ(lb::encode_e8m0(1.1f, true, R::kUp), 0x80);
  EXPECT_EQ(lb::encode_e8m0(1.1f, true, R::kDown), 0x7f);
  EXPECT_EQ(lb::encode_e8m0(1.4f, true, R::kNearest), 0x7f);
  EXPECT_EQ(lb::encode_e8m0(1.5f, true, R::kNearest), 0x80);  // ties up
  EXPECT_EQ(lb::encode_e8m0(-2.0f, true, R::kUp), 0x80);      // the sign is dropped
  EXPECT_EQ(lb::encode_e8m0(std::numeric_limits<float>::max(), true, R::kUp), 0xfe);
  EXPECT_EQ(lb::encode_e8m0(std::numeric_limits<float>::max(), false, R::kUp), 0xff);
  EXPECT_EQ(lb::encode_e8m0(std::numeric_limits<float>::infinity(), true, R::kUp), 0xff);
  EXPECT_EQ(lb::decode_e8m0(0x7f), 1.0);
  EXPECT_EQ(lb::decode_e8m0(0x00), std::ldexp(1.0, -127));
  EXPECT_TRUE(std::isnan(lb::decode_e8m0(0xff)));
}

TEST(LowbitTest, IntegersWrapAndSignExtend) {
  EXPECT_EQ(static_cast<int8_t>(lb::encode_int_wrapping(ENP_DTYPE_INT4, -9)), 7);
  EXPECT_EQ(static_cast<int8_t>(lb::encode_int_wrapping(ENP_DTYPE_INT4, 8)), -8);
  EXPECT_EQ(lb::encode_int_wrapping(ENP_DTYPE_UINT2, -3), 1);
  EXPECT_EQ(lb::decode_int(ENP_DTYPE_INT2, lb::encode_int_wrapping(ENP_DTYPE_INT2, 3)), -1);
  EXPECT_EQ(lb::decode(ENP_DTYPE_UINT4, 15), 15.0);
}

// Element 0 in the low bits; int4/int2 sign-extended on the way in.
TEST(LowbitTest, PacksLowBitsFirst) {
  const uint8_t packed4[] = {0x87, 0x0f};
  const auto codes = lb::unpack(ENP_DTYPE_INT4, packed4, 3);
  EXPECT_EQ(codes, (std::vector<uint8_t>{0x07, 0xf8, 0xff}));
  EXPECT_EQ(lb::pack(ENP_DTYPE_INT4, codes.data(), codes.size()),
            (std::vector<uint8_t>{0x87, 0x0f}));
  const uint8_t packed2[] = {0x39, 0x39};
  const auto u2 = lb::unpack(ENP_DTYPE_UINT2, packed2, 7);
  EXPECT_EQ(u2, (std::vector<uint8_t>{1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(lb::pack(ENP_DTYPE_UINT2, u2.data(), u2.size()), (std::vector<uint8_t>{0x39, 0x39}));
  EXPECT_EQ(lb::packed_size(ENP_DTYPE_UINT2, 7), 2u);
  EXPECT_EQ(lb::packed_size(ENP_DTYPE_FLOAT8E5M2, 7), 7u);
}

TEST(LowbitTest, TensorProtoPacksAndUnpacks) {
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(ENP_DTYPE_INT4);
  p.add_dims(3);
  p.set_raw_data(std::string("\x87\x0f", 2));
  const host::Tensor t = host::from_tensor_proto(p);
  EXPECT_EQ(t.dtype, host::DType::kInt4);
  EXPECT_EQ(t.data, (std::vector<uint8_t>{0x07, 0xf8, 0xff}));
  // int32_data holds one packed byte per entry.
  onnx::TensorProto q = p;
  q.clear_raw_data();
  q.add_int32_data(0x87);
  q.add_int32_data(0x0f);
  EXPECT_EQ(host::from_tensor_proto(q).data, t.data);

  const int64_t dims[] = {3};
  const enp_tensor_t view{"w", ENP_DTYPE_INT4, 1, dims, t.data.data(), t.data.size()};
  EXPECT_EQ(host::to_tensor_proto(view).raw_data(), p.raw_data());

  p.add_dims(2);  // 6 elements need 3 bytes
  EXPECT_THROW(host::from_tensor_proto(p), host::UserError);
}

// numpy has no such dtypes: .npy holds the codes as int8/uint8.
TEST(LowbitTest, NpzStoresCodes) {
  host::Tensor f8{"f8", host::DType::kFloat8E4M3FN, {2}, {0x7e, 0x80}};
  host::Tensor i4{"i4", host::DType::kInt4, {2}, {0x07, 0xf8}};
  const std::vector<uint8_t> zip = host::encode_npz({f8, i4});
  const auto back = host::read_npz_bytes(zip.data(), zip.size(), "test.npz");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].dtype, host::DType::kUInt8);
  EXPECT_EQ(back[0].data, f8.data);
  EXPECT_EQ(back[1].dtype, host::DType::kInt8);
  EXPECT_EQ(back[1].data, i4.data);
}

}  // namespace
}  // namespace eulernpu
