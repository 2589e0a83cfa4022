// Intel's table (subgroups narrower than 32). Nothing here was measured on an Intel GPU: every
// value is the generic one for narrow subgroups (src/tuning/generic.hpp), kept apart so that Intel
// can be tuned without touching other devices.
#include "tuning/generic.hpp"

namespace gpusort {

constexpr Tuning intel_tuning = with_family(narrow_subgroups_table, DeviceFamily::intel);

}  // namespace gpusort
