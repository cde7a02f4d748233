// A Zynq board as fpga_board targets it: its programmable logic (part,
// family, resource totals, fabric clock, bandwidth to DDR) and its
// processing system, a zynq_ps device (docs/backends/fpga_board.md,
// "Boards"). Read from *.board.yaml files beside the plugin or on the
// plugin search path, and written into every artifact as board.json, so
// running one needs no descriptor file.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "device.hpp"
#include "eulernpu/sdk/device_files.hpp"
#include "resources.hpp"

namespace eulernpu::fpga_board {

struct Board {
  std::string name;
  std::string description;
  std::string source;  // the descriptor file it came from
  std::string part;    // e.g. xczu7ev-ffvc1156-2-e
  std::string family;  // zynq-7000 or zynq-ultrascale-plus
  Resources resources;
  double pl_clock_mhz = 0;
  double pl_ddr_gbps = 0;  // what the engine gets of the PS DDR, GB/s
  zynq_ps::Device ps;      // the processing system, resolved by name
};

// Parses a descriptor; `source` names it in errors. `ps` resolves the PS
// device name (a zynq_ps device file) or, for an artifact's board.json,
// reads the device embedded in it. Throws "device descriptor is invalid"
// naming the source and the key.
Board parse_board(const std::string& text, const std::string& source,
                  const std::string& search_path);
Board board_from_json(const std::string& text, const std::string& source);

// The board as an artifact stores it: the descriptor's keys with the PS
// device embedded whole.
nlohmann::ordered_json board_json(const Board& board);

using BoardCatalog = sdk::device_files::Catalog<Board>;

// Every descriptor beside the plugin and on `search_path`.
BoardCatalog discover_boards(const std::string& search_path);

// A board name or a descriptor path (empty: the first board); throws "target device not found" or
// the descriptor's own error.
Board resolve_board(const std::string& name_or_path, const std::string& search_path);

}  // namespace eulernpu::fpga_board
