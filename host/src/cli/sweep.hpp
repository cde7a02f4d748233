// `eulernpu sweep run` and `eulernpu sweep collect` (cli/sweep_run.cpp);
// `eulernpu sweep` itself writes the jobs (cli/cmd_sweep.cpp).
#pragma once

#include "cli/cli.hpp"

namespace eulernpu::host {

int sweep_run(Context& ctx, int argc, char** argv);
int sweep_collect(Context& ctx, int argc, char** argv);

}  // namespace eulernpu::host
