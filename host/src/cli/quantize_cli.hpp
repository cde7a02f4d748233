// The command-line side of quantization, shared by `quantize` and
// `compile --calib-data-path`: its flags, read into QuantizeOptions.
#pragma once

#include "cli/cli.hpp"
#include "quant/quantize_pipeline.hpp"

namespace eulernpu::host {

void add_quantize_options(cxxopts::Options& options);

// True if the command line asks for int8 (--calib-data-path given).
bool wants_quantization(const cxxopts::ParseResult& args);

// The options as the command line gives them; quantize_for_compile
// checks their values.
QuantizeOptions quantize_options(const cxxopts::ParseResult& args);

}  // namespace eulernpu::host
