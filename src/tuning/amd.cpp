// AMD's table (subgroups of 32 or 64). Nothing here was measured on an AMD GPU: every value is
// the generic one for wide subgroups (src/tuning/generic.hpp), kept apart so that AMD can be
// tuned without touching other devices.
#include "tuning/generic.hpp"

namespace gpusort {

constexpr Tuning amd_tuning = with_family(wide_subgroups_table, DeviceFamily::amd);

}  // namespace gpusort
