// The command-line side of quantization, shared by `quantize` and
// `compile --calib-data-path`: its flags, read into QuantizeOptions.
#pragma once

#include "cli/cli.hpp"
#include "quant/quantize_pipeline.hpp"

namespace eulernpu::host {

// The options every calibration reads (the samples, the config, the
// quantizer, threads, the rewrites): calibrate's, and the start of
// quantize's and compile's.
void add_calibration_options(cxxopts::Options& options, const std::string& group);
QuantizeOptions calibration_options(const cxxopts::ParseResult& args);

void add_quantize_options(cxxopts::Options& options);

// True if the command line asks for int8 (--calib-data-path given).
bool wants_quantization(const cxxopts::ParseResult& args);

// The options as the command line gives them; quantize_for_compile
// checks their values.
QuantizeOptions quantize_options(const cxxopts::ParseResult& args);

// --calib-stats FILE... : every argument after it up to the next option
// (so a shell glob, part.*.calib, works), or --calib-stats=FILE, any number
// of times. Takes them out of argv (adjusting argc) before the command's
// options are parsed.
std::vector<std::string> take_calib_stats(int& argc, char** argv);

// The command line without --calib-stats and its files: how statistics
// were gathered is not part of what the artifact is (docs/scale-out.md).
std::vector<std::string> without_calib_stats(const std::vector<std::string>& command_line);

}  // namespace eulernpu::host
