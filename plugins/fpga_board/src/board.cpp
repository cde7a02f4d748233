#include "board.hpp"

namespace eulernpu::fpga_board {
namespace {

namespace files = sdk::device_files;

const files::Kind& kind() {
  static const files::Kind k{
      "fpga_board",
      {".board.yaml", ".board.json"},
      "correct the file; docs/backends/fpga_board.md#boards describes every key"};
  return k;
}

// The boards shipped with the plugin live next to it.
std::filesystem::path plugin_directory() {
  return files::library_directory(reinterpret_cast<const void*>(&plugin_directory));
}

// Everything but the PS; `ps` is read by the caller, by name or embedded.
Board parse_common(const YAML::Node& root, const files::Reader& r, const std::string& source) {
  r.only_keys(
      root, "",
      {"name", "description", "part", "family", "resources", "pl_clock_mhz", "ps", "pl_ddr_gbps"});
  Board b;
  b.source = source;
  b.name = r.string(r.required(root, "", "name"), "name");
  if (!files::valid_name(b.name)) {
    r.invalid("name", "'" + b.name + "' must be 1-64 of a-z, 0-9, '_' and '-'");
  }
  if (root["description"]) b.description = r.string(root["description"], "description");
  b.part = r.string(r.required(root, "", "part"), "part");
  b.family =
      r.one_of(r.required(root, "", "family"), "family", {"zynq-7000", "zynq-ultrascale-plus"});
  const YAML::Node res = r.required(root, "", "resources");
  r.only_keys(res, "resources", {"lut", "ff", "bram36", "uram", "dsp"});
  // The largest Xilinx parts have some 4 million LUTs and 12,000 DSPs; ten
  // times that can only be a typo. A part without LUTs, flip-flops or
  // block RAM is no FPGA; URAM and DSP may be 0.
  for (const ResourceKind& k : kResourceKinds) {
    const std::string key = std::string("resources.") + k.key;
    const bool may_be_zero = k.member == &Resources::uram || k.member == &Resources::dsp;
    const int64_t v = r.integer(r.required(res, "resources", k.key), key, may_be_zero ? 0 : 1,
                                int64_t{40'000'000});
    b.resources.*k.member = static_cast<double>(v);
  }
  if (b.family == "zynq-7000" && b.resources.uram > 0) {
    r.invalid("resources.uram", "Zynq-7000 parts have no UltraRAM, got " +
                                    std::to_string(static_cast<int64_t>(b.resources.uram)));
  }
  b.pl_clock_mhz = r.number(r.required(root, "", "pl_clock_mhz"), "pl_clock_mhz", 0, true, 1000);
  b.pl_ddr_gbps = r.number(r.required(root, "", "pl_ddr_gbps"), "pl_ddr_gbps", 0, true, 1000);
  return b;
}

}  // namespace

Board parse_board(const std::string& text, const std::string& source,
                  const std::string& search_path) {
  const YAML::Node root = files::load_root(kind(), text, source);
  const files::Reader r(kind(), source);
  Board b = parse_common(root, r, source);
  const YAML::Node ps = r.required(root, "", "ps");
  const std::string ps_name = r.string(ps, "ps");
  if (!files::valid_name(ps_name)) {
    r.invalid("ps", "'" + ps_name + "' must name a zynq_ps device (1-64 of a-z, 0-9, '_', '-')");
  }
  try {
    b.ps = zynq_ps::resolve_device(ps_name, search_path);
  } catch (const sdk::Error& e) {
    r.invalid("ps", "zynq_ps device '" + ps_name + "': " + e.title() + ": " + e.where());
  }
  return b;
}

Board board_from_json(const std::string& text, const std::string& source) {
  const YAML::Node root = files::load_root(kind(), text, source);
  const files::Reader r(kind(), source);
  Board b = parse_common(root, r, source);
  const YAML::Node ps = r.required(root, "", "ps");
  if (!ps.IsMap()) r.invalid("ps", "must be the processing system's device, embedded");
  YAML::Emitter out;
  out << YAML::Flow << ps;
  b.ps = zynq_ps::parse_device(out.c_str(), source + " (ps)");
  return b;
}

nlohmann::ordered_json board_json(const Board& b) {
  nlohmann::ordered_json j;
  j["name"] = b.name;
  j["description"] = b.description;
  j["part"] = b.part;
  j["family"] = b.family;
  j["resources"] = nlohmann::ordered_json::object();
  for (const ResourceKind& k : kResourceKinds) {
    j["resources"][k.key] = static_cast<int64_t>(b.resources.*k.member);
  }
  j["pl_clock_mhz"] = b.pl_clock_mhz;
  j["pl_ddr_gbps"] = b.pl_ddr_gbps;
  j["ps"] = zynq_ps::device_json(b.ps);
  return j;
}

BoardCatalog discover_boards(const std::string& search_path) {
  return files::discover<Board>(
      kind(), plugin_directory(), search_path, [&](const std::filesystem::path& file) {
        return parse_board(files::read_file(kind(), file), file.string(), search_path);
      });
}

Board resolve_board(const std::string& target, const std::string& search_path) {
  return files::resolve<Board>(
      kind(), target, plugin_directory(), search_path, [&](const std::filesystem::path& file) {
        return parse_board(files::read_file(kind(), file), file.string(), search_path);
      });
}

}  // namespace eulernpu::fpga_board
