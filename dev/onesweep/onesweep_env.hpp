// Onesweep's tuning knobs from environment variables, shared by the development tools
// (onesweep_timing, onesweep_clock): each variable that is set overrides one OnesweepOptions field.
#pragma once

#include <cstdlib>

#include "algorithms/onesweep/onesweep.hpp"

namespace gpusort {

inline void onesweep_options_from_env(OnesweepOptions& options) {
  auto number = [](const char* name, auto& field) {
    if (const char* value = std::getenv(name)) field = std::atoi(value);
  };
  number("ONESWEEP_WINDOW", options.lookback_window);
  number("ONESWEEP_SPIN", options.spin_limit);
  number("ONESWEEP_GUESS", options.guess_tile);
  number("ONESWEEP_COUNTERS_IN_EXCHANGE", options.counters_in_exchange);
  number("ONESWEEP_CLAIM_BY_ID", options.claim_by_id);
  number("ONESWEEP_FULL_TILE_COPY", options.full_tile_copy);
  number("ONESWEEP_PERSISTENT", options.persistent_groups);
  number("ONESWEEP_PREFETCH", options.prefetch_next);
  number("ONESWEEP_HIST_PER_UNIT", options.histogram_groups_per_unit);
}

}  // namespace gpusort
