// The op groups of the reference runtime, one per kernels_<name>.cpp file.
// An exported bundle (eulernpu export) compiles its own list of the groups
// its model needs in place of this file.
#include "eulernpu/kit/op_table.hpp"

namespace eulernpu::kit {

std::span<const OpGroup> op_groups() {
  static const OpGroup groups[] = {
      {"unary", &unary_ops},
      {"binary", &binary_ops},
      {"softmax", &softmax_ops},
      {"cast", &cast_ops},
      {"norm", &norm_ops},
      {"nn", &nn_ops},
      {"conv", &conv_ops},
      {"pool", &pool_ops},
      {"resize", &resize_ops},
      {"shape", &shape_ops},
      {"reduce", &reduce_ops},
      {"transformer", &transformer_ops},
      {"loss", &loss_ops},
      {"misc", &misc_ops},
      {"einsum", &einsum_ops},
      {"image", &image_ops},
      {"signal", &signal_ops},
      {"quant", &quant_ops},
      {"sequence", &sequence_ops},
      {"rnn", &rnn_ops},
      {"detection", &detection_ops},
      {"linalg", &linalg_ops},
      {"text", &text_ops},
      {"reverse", &reverse_ops},
      // Domain ai.eulernpu.
      {"qops", &qops_ops},
      {"qconv", &qconv_ops},
      {"qpool", &qpool_ops},
  };
  return groups;
}

}  // namespace eulernpu::kit
