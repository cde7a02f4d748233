#include "core/limits.hpp"

#include "core/error.hpp"

namespace eulernpu::host {

uint64_t limit(const LimitSpec& spec) {
  return sdk::limit_value(spec, [](const sdk::LimitSettingProblem& p) {
    throw UserError("invalid limit setting", p.where, p.fix);
  });
}

}  // namespace eulernpu::host
