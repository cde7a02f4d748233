// eulernpu calibrate: one shard of a calibration, written as statistics
// that `quantize --calib-stats` merges (docs/scale-out.md).
#include <cstdio>
#include <optional>

#include "cli/cli.hpp"
#include "cli/model_source.hpp"
#include "cli/mpi_world.hpp"
#include "cli/quantize_cli.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "quant/calib_stats.hpp"

namespace eulernpu::host {

namespace {

// What one process does: load, calibrate its shard, write (rank 0 of an
// MPI job: merge every rank's first).
int calibrate(Context& ctx, const cxxopts::ParseResult& args, const QuantizeOptions& quantize,
              const ShardRequest& shard, int pass) {
  std::vector<std::string> steps = {"load"};
  if (quantize.optimize) steps.emplace_back("optimize");
  steps.emplace_back("calibrate");
  if (shard.gather) steps.emplace_back("merge");
  steps.emplace_back("write");
  ctx.progress.start("calibrate", steps);
  ctx.progress.begin("load");
  LoadedModel loaded = load_model(ctx, args, "calibrate");
  require_weights(loaded);
  require_static_shapes(loaded.imported.model, loaded.path);
  ctx.progress.end();
  const uint64_t samples = calibrate_shard(ctx.registry(), quantize, shard, loaded.imported.model,
                                           loaded.path, ctx.progress);
  if (!shard.gather) {
    std::printf("Calibrate OK: shard %u/%u of pass %d · %llu sample%s · %s\n", shard.k, shard.n,
                pass, static_cast<unsigned long long>(samples), samples == 1 ? "" : "s",
                shard.out.string().c_str());
  } else if (shard.k == 0) {
    std::printf("Calibrate OK: %u ranks merged, pass %d · %llu sample%s · %s\n", shard.n, pass,
                static_cast<unsigned long long>(samples), samples == 1 ? "" : "s",
                shard.out.string().c_str());
  }
  return 0;
}

}  // namespace

int cmd_calibrate(Context& ctx, int argc, char** argv) {
  cxxopts::Options options(
      "eulernpu calibrate",
      "Observe one shard of the calibration samples and write its statistics; 'eulernpu "
      "quantize --calib-stats' merges every shard's into the artifact one machine would make.");
  add_model_options(options, true);
  add_calibration_options(options, "calibration");
  options.add_options("calibration")(
      "shard", "K/N: observe the samples i with i mod N = K (default 0/1: all)",
      cxxopts::value<std::string>()->default_value("0/1"))(
      "pass", "the pass to observe: 1, or 2 for a config of two passes (preset best)",
      cxxopts::value<int>()->default_value("1"))(
      "mpi",
      "run as one rank of an MPI job (mpirun -n R eulernpu calibrate --mpi ...): rank r is "
      "shard r/R, and rank 0 merges every rank's statistics into --out")(
      "calib-stats", "for --pass 2: every shard's statistics of pass 1 (a shell glob works)",
      cxxopts::value<std::vector<std::string>>())("out", "statistics file to write",
                                                  cxxopts::value<std::string>());
  std::vector<std::string> earlier = take_calib_stats(argc, argv);
  auto args = parse_command(options, argc, argv);
  if (!args) return 0;
  require(*args, "calibrate", "calib-data-path");
  require(*args, "calibrate", "out");
  ShardRequest shard;
  std::tie(shard.k, shard.n) = parse_shard((*args)["shard"].as<std::string>());
  const bool mpi = args->count("mpi") != 0;
  if (mpi && args->count("shard")) {
    throw UserError("invalid command line", "--mpi with --shard",
                    "leave out --shard: with --mpi each rank is a shard");
  }
  const int pass = (*args)["pass"].as<int>();
  if (pass < 1 || pass > 16) {
    throw UserError("invalid command line", "--pass " + std::to_string(pass) + " is not a pass",
                    "give --pass 1, or 2 for a config of two passes");
  }
  shard.pass = static_cast<uint32_t>(pass - 1);
  if (pass == 1 && !earlier.empty()) {
    throw UserError("invalid command line", "--calib-stats with --pass 1",
                    "pass 1 needs no statistics; give them with --pass 2");
  }
  if (pass > 1 && earlier.empty()) {
    throw UserError("invalid command line",
                    "--pass " + std::to_string(pass) + " without --calib-stats",
                    "give every shard's statistics of the earlier passes");
  }
  shard.out = (*args)["out"].as<std::string>();

  QuantizeOptions quantize = calibration_options(*args);
  quantize.calib_stats = std::move(earlier);
  check_quantize_options(quantize);

  std::optional<MpiWorld> world;
  if (mpi) {
    world.emplace(ctx.installed_plugin_dir);
    shard.k = static_cast<uint32_t>(world->rank());
    shard.n = static_cast<uint32_t>(world->size());
    shard.gather = [&](const std::string& mine) {
      return world->gather(mine, limit(kCalibStatsBytesLimit));
    };
  }
  try {
    return calibrate(ctx, *args, quantize, shard, pass);
  } catch (const UserError& e) {
    if (!world || world->size() == 1) throw;
    // The other ranks would wait for this one's statistics forever.
    std::fflush(stdout);
    std::fprintf(stderr, "rank %d: %s\n", world->rank(), format_error(e).c_str());
    world->abort(1);
  } catch (const std::exception& e) {
    if (!world || world->size() == 1) throw;
    std::fflush(stdout);
    std::fprintf(
        stderr, "rank %d: %s\n", world->rank(),
        format_error(UserError("internal error", e.what(), "report this as a bug")).c_str());
    world->abort(70);
  }
}

}  // namespace eulernpu::host
