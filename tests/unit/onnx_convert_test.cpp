// TensorProto → host tensor for values stored in typed fields rather than
// raw_data, each in the field onnx.proto assigns to its type.
#include "ir/onnx_convert.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/error.hpp"

namespace eulernpu::host {
namespace {

TEST(OnnxConvertTest, UnsignedWideIntegersComeFromUint64Data) {
  onnx::TensorProto p;
  p.set_name("u");
  p.set_data_type(onnx::TensorProto::UINT32);
  p.add_dims(2);
  p.add_uint64_data(0xFFFFFFFFu);
  p.add_uint64_data(7);
  const Tensor t = from_tensor_proto(p);
  EXPECT_EQ(t.dtype, DType::kUInt32);
  EXPECT_EQ(t.data, (std::vector<uint8_t>{0xFF, 0xFF, 0xFF, 0xFF, 7, 0, 0, 0}));

  p.set_data_type(onnx::TensorProto::UINT64);
  p.set_uint64_data(0, 0xFFFFFFFFFFFFFFFFull);
  const Tensor w = from_tensor_proto(p);
  EXPECT_EQ(w.dtype, DType::kUInt64);
  EXPECT_EQ(w.data.size(), 16u);
  EXPECT_EQ(w.data[7], 0xFF);
  EXPECT_EQ(w.data[8], 7);

  // Values in int32_data are not uint32 values: the count no longer fits.
  onnx::TensorProto wrong;
  wrong.set_name("v");
  wrong.set_data_type(onnx::TensorProto::UINT32);
  wrong.add_dims(2);
  wrong.add_int32_data(1);
  wrong.add_int32_data(2);
  EXPECT_THROW(from_tensor_proto(wrong), UserError);
}

TEST(OnnxConvertTest, NarrowTypesComeFromInt32Data) {
  onnx::TensorProto p;
  p.set_name("i8");
  p.set_data_type(onnx::TensorProto::INT8);
  p.add_dims(3);
  p.add_int32_data(-1);
  p.add_int32_data(127);
  p.add_int32_data(-128);
  EXPECT_EQ(from_tensor_proto(p).data, (std::vector<uint8_t>{0xFF, 0x7F, 0x80}));
}

}  // namespace
}  // namespace eulernpu::host
