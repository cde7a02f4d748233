// ONNX quantization ops: QuantizeLinear, DequantizeLinear, QLinearMatMul, QLinearConv, MatMulInteger, ConvInteger, DynamicQuantizeLinear.
#include "kernel_util.hpp"

namespace eulernpu::cpu_ref {

std::vector<OpEntry> quant_ops() { return {}; }

}  // namespace eulernpu::cpu_ref
