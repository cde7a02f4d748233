// Rules of the recurrent layers RNN, GRU and LSTM: Y holds every step's
// hidden state, Y_h (and LSTM's Y_c) the last one, laid out by `layout`
// (opset 14+: 0 time-major, 1 batch-major).
#include "ir/op_rules.hpp"

namespace eulernpu::host::ir {
namespace {

template <int64_t kGates>
void recurrent(InferContext& ctx) {
  const ValueType& x = ctx.input(0);
  const std::string direction = ctx.attr_string("direction", "forward");
  ctx.require(direction == "forward" || direction == "reverse" || direction == "bidirectional",
              "direction '" + direction + "' is not forward, reverse or bidirectional");
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t layout = ctx.attr_int("layout", 0);
  ctx.require(layout == 0 || layout == 1, "layout must be 0 or 1");

  // hidden_size is optional in the spec: R (dirs, gates*hidden, hidden)
  // and W (dirs, gates*hidden, input) tell it too.
  int64_t hidden = ctx.attr_int("hidden_size", -1);
  if (ctx.has_attr("hidden_size")) ctx.require(hidden > 0, "hidden_size must be positive");
  const ValueType* r = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (r && r->known) {
    ctx.require(r->dims.size() == 3, "R must have rank 3");
    if (hidden < 0) hidden = r->dims[2];
    ctx.require(r->dims[2] < 0 || r->dims[2] == hidden,
                "R's last dimension differs from hidden_size");
  }
  const ValueType& w = ctx.input(1);
  if (w.known) {
    ctx.require(w.dims.size() == 3, "W must have rank 3");
    if (hidden < 0 && w.dims[1] >= 0) {
      ctx.require(w.dims[1] % kGates == 0, "W's second dimension is not a multiple of the gates");
      hidden = w.dims[1] / kGates;
    }
    ctx.require(w.dims[0] < 0 || w.dims[0] == dirs,
                "W's first dimension is not the number of directions");
    ctx.require(w.dims[1] < 0 || hidden < 0 || w.dims[1] == kGates * hidden,
                "W's second dimension differs from gates * hidden_size");
  }

  int64_t seq = -1, batch = -1;
  if (x.known) {
    ctx.require(x.dims.size() == 3, "X must have rank 3");
    seq = layout == 0 ? x.dims[0] : x.dims[1];
    batch = layout == 0 ? x.dims[1] : x.dims[0];
    ctx.require(!w.known || w.dims[2] < 0 || x.dims[2] < 0 || w.dims[2] == x.dims[2],
                "W's input size differs from X's");
  }
  const std::vector<int64_t> y = layout == 0 ? std::vector<int64_t>{seq, dirs, batch, hidden}
                                             : std::vector<int64_t>{batch, seq, dirs, hidden};
  const std::vector<int64_t> state = layout == 0 ? std::vector<int64_t>{dirs, batch, hidden}
                                                 : std::vector<int64_t>{batch, dirs, hidden};
  ctx.set_output(0, ValueType{x.dtype, y, true});
  for (size_t i = 1; i < ctx.output_count() && i < (kGates == 4 ? 3u : 2u); ++i) {
    ctx.set_output(i, ValueType{x.dtype, state, true});
  }
}

}  // namespace

std::vector<OpRule> rnn_rules() {
  return {
      {"RNN", &recurrent<1>, nullptr},
      {"GRU", &recurrent<3>, nullptr},
      {"LSTM", &recurrent<4>, nullptr},
  };
}

}  // namespace eulernpu::host::ir
