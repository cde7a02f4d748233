#include "core/limits.hpp"

#include "core/error.hpp"

namespace eulernpu::host {

void invalid_limit_setting(const sdk::LimitSettingProblem& problem) {
  throw UserError("invalid limit setting", problem.where, problem.fix);
}

uint64_t limit(const LimitSpec& spec) { return sdk::limit_value(spec, invalid_limit_setting); }

}  // namespace eulernpu::host
