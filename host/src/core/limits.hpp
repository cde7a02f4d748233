// The bounds loaders check before they allocate, each with its default and
// the environment variable that changes it (docs/errors.md, "Limits"). The
// defaults keep a hostile file cheap; a user with a trusted larger one
// raises the bound for that command.
#pragma once

#include <cstdint>

#include "eulernpu/sdk/limits.hpp"

namespace eulernpu::host {

using sdk::LimitSpec;

inline constexpr LimitSpec kNpzMemberBytesLimit{"EULERNPU_MAX_NPZ_MEMBER_BYTES", 4ull << 30};
inline constexpr LimitSpec kNpzTotalBytesLimit{"EULERNPU_MAX_NPZ_TOTAL_BYTES", 64ull << 30};
inline constexpr LimitSpec kNpzMembersLimit{"EULERNPU_MAX_NPZ_MEMBERS", 100000};
inline constexpr LimitSpec kCalibBytesLimit{"EULERNPU_MAX_CALIB_BYTES", 8ull << 30};
inline constexpr LimitSpec kCalibStatsBytesLimit{"EULERNPU_MAX_CALIB_STATS_BYTES", 4ull << 30};
inline constexpr LimitSpec kArtifactFileBytesLimit{"EULERNPU_MAX_ARTIFACT_FILE_BYTES", 4ull << 30};
inline constexpr LimitSpec kPackedMembersLimit{"EULERNPU_MAX_PACKED_MEMBERS", 10000};
inline constexpr LimitSpec kPackedTotalBytesLimit{"EULERNPU_MAX_PACKED_TOTAL_BYTES", 16ull << 30};
// Seconds a plugin library may take to load in the discovery probe.
inline constexpr LimitSpec kPluginLoadSecondsLimit{"EULERNPU_PLUGIN_LOAD_SECONDS", 30};

// The limit's value: its environment variable if set (sdk/limits.hpp),
// else its default. Throws UserError "invalid limit setting" otherwise.
uint64_t limit(const LimitSpec& spec);

// Throws that UserError for a setting sdk::limit_value could not parse.
[[noreturn]] void invalid_limit_setting(const sdk::LimitSettingProblem& problem);

}  // namespace eulernpu::host
